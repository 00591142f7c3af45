import type { Source } from '../../api/sources.js';
import { NotFound } from '../errors.js';
import { now } from '../ids.js';
import { scanPrefix, type Store } from '../store/db.js';

export const HOSTED_BUCKET = 'hosted';

export const DEFAULT_SEARCH_CONFIG = {
  text_fields: [
    { field: 'title', boost: 2, natural_language: true },
    { field: 'body', boost: 1, natural_language: true },
  ],
};

/** Sources of a tenant; the key `[tenant, 'srckey', source_key]` finds one by its key. */
export class Sources {
  constructor(private readonly store: Store) {}

  get(tenantId: string, sourceId: number): Source {
    const source = this.store.meta.get([tenantId, 'source', sourceId]);
    if (!source) throw new NotFound(`source ${sourceId} not found`);
    return source;
  }

  byKey(tenantId: string, sourceKey: string): Source {
    const id = this.store.meta.get([tenantId, 'srckey', sourceKey]);
    if (id === undefined) throw new NotFound(`source '${sourceKey}' not found`);
    return this.get(tenantId, id);
  }

  ofDataset(tenantId: string, datasetId: string): Source[] {
    return [...scanPrefix<Source>(this.store.meta, [tenantId, 'source'])].map((e) => e.value).filter((s) => s.dataset_id === datasetId);
  }

  /** The hosted source a dataset gets at creation (source_key = dataset id); call inside a write transaction. */
  putDefault(tenantId: string, datasetId: string, retentionDays: number | null): Source {
    const sourceId = (this.store.meta.get([tenantId, 'counter', 'source']) ?? 0) + 1;
    const at = now();
    const source: Source = {
      source_id: sourceId,
      source_key: datasetId,
      source_type: 'hosted',
      tenant_id: tenantId,
      dataset_id: datasetId,
      name: datasetId,
      enabled: true,
      connector_id: null,
      bucket: HOSTED_BUCKET,
      prefix: '',
      access_role_ref: 'svc:hosted',
      intake_role_ref: null,
      external_id_configured: false,
      retention_days: retentionDays,
      format: 'ndjson',
      parse_config: {},
      transform_config: {},
      search_config: DEFAULT_SEARCH_CONFIG,
      semantic_config: {},
      ingest_token_configured: false,
      ingest_token_created_at: null,
      ingest_token_last_used_at: null,
      ingest_token_revoked_at: null,
      created_at: at,
      updated_at: at,
    };
    this.store.meta.put([tenantId, 'counter', 'source'], sourceId);
    this.store.meta.put([tenantId, 'source', sourceId], source);
    this.store.meta.put([tenantId, 'srckey', source.source_key], sourceId);
    return source;
  }

  /** Call inside a write transaction. */
  removeOfDataset(tenantId: string, datasetId: string): void {
    for (const source of this.ofDataset(tenantId, datasetId)) {
      this.store.meta.remove([tenantId, 'source', source.source_id]);
      this.store.meta.remove([tenantId, 'srckey', source.source_key]);
    }
  }
}
