import type { HostedSourcePut, IngestTokenMinted, SearchConfig, SemanticConfig, Source, SourcePut } from '../../api/sources.js';
import type { Caller } from '../auth/caller.js';
import type { IngestTokens } from '../auth/ingestTokens.js';
import { Conflict, Invalid, NotFound } from '../errors.js';
import { checkTimeFormat } from '../ingest/lineTime.js';
import { now } from '../ids.js';
import { removePrefix, scanPrefix, type Store } from '../store/db.js';
import { keys } from '../store/keys.js';

export const HOSTED_BUCKET = 'hosted';

export const DEFAULT_SEARCH_CONFIG = {
  text_fields: [
    { field: 'title', boost: 0.35, natural_language: true },
    { field: 'body', boost: 1, natural_language: true },
  ],
};

/** What the store keeps of a source: the API shape plus the id of its current ingest token. */
interface SourceState extends Source {
  ingest_token_id?: string;
}

const view = ({ ingest_token_id: _t, ...source }: SourceState): Source => source;

/** Sources of a tenant; the key `[tenant, 'srckey', source_key]` finds one by its key. */
export class Sources {
  constructor(private readonly store: Store, private readonly tokens: IngestTokens) {}

  private state(tenantId: string, sourceId: number): SourceState {
    const source = this.store.meta.get(keys.source(tenantId, sourceId));
    if (!source) throw new NotFound(`source ${sourceId} not found`);
    return source;
  }

  get(tenantId: string, sourceId: number): Source {
    return view(this.state(tenantId, sourceId));
  }

  byKey(tenantId: string, sourceKey: string): Source {
    const id = this.store.meta.get(keys.sourceKey(tenantId, sourceKey));
    if (id === undefined) throw new NotFound(`source '${sourceKey}' not found`);
    return this.get(tenantId, id);
  }

  list(tenantId: string, datasetId?: string): Source[] {
    return [...scanPrefix<SourceState>(this.store.meta, keys.source(tenantId))].map((e) => view(e.value)).filter((s) => !datasetId || s.dataset_id === datasetId);
  }

  ofDataset(tenantId: string, datasetId: string): Source[] {
    return this.list(tenantId, datasetId);
  }

  /** How a dataset's text is indexed: its first source's search_config, or the default when it has none left. */
  searchConfig(tenantId: string, datasetId: string): SearchConfig {
    return this.ofDataset(tenantId, datasetId)[0]?.search_config ?? DEFAULT_SEARCH_CONFIG;
  }

  /** Creates or replaces a source under the id the caller chose (PUT is idempotent); `also` writes what goes with it, in the same transaction. */
  async put(caller: Caller, sourceId: number, req: SourcePut | HostedSourcePut, also?: () => void): Promise<Source> {
    const t = caller.tenant_id;
    const timeFormat = req.parse_config?.time_format;
    const bad = timeFormat === undefined ? null : checkTimeFormat(timeFormat);
    if (bad) throw new Invalid(bad, [{ loc: ['body', 'parse_config', 'time_format'], msg: bad, type: 'value_error', input: timeFormat }]);
    const result = await this.store.meta.transaction(() => {
      if (!this.store.meta.get(keys.dataset(t, req.dataset_id))) return new NotFound(`dataset '${req.dataset_id}' not found`);
      const holder = this.store.meta.get(keys.sourceKey(t, req.source_key));
      if (holder !== undefined && holder !== sourceId) return new Conflict(`source key '${req.source_key}' belongs to source ${holder}`);
      const previous: SourceState | undefined = this.store.meta.get(keys.source(t, sourceId));
      if (previous && previous.source_key !== req.source_key) this.store.meta.remove(keys.sourceKey(t, previous.source_key));
      const at = now();
      const hosted = !('bucket' in req);
      const source: SourceState = {
        ...(previous ?? blankSource(t, sourceId, at)),
        source_id: sourceId,
        source_key: req.source_key,
        source_type: req.source_type,
        dataset_id: req.dataset_id,
        name: req.name,
        enabled: req.enabled ?? true,
        connector_id: req.connector_id ?? null,
        bucket: hosted ? HOSTED_BUCKET : req.bucket,
        prefix: hosted ? '' : req.prefix ?? '',
        access_role_ref: hosted ? 'svc:hosted' : req.access_role_ref,
        intake_role_ref: hosted ? null : req.intake_role_ref ?? null,
        retention_days: req.retention_days ?? null,
        format: req.parse_config?.format ?? previous?.format ?? 'ndjson',
        parse_config: req.parse_config ?? {},
        transform_config: req.transform_config ?? {},
        search_config: req.search_config ?? DEFAULT_SEARCH_CONFIG,
        semantic_config: req.semantic_config ?? {},
        updated_at: at,
      };
      this.store.meta.put(keys.source(t, sourceId), source);
      this.store.meta.put(keys.sourceKey(t, source.source_key), sourceId);
      if (source.source_type !== 'connector') this.dropConnector(t, sourceId); // a source that stops being one no longer syncs
      also?.();
      return source;
    });
    if (result instanceof Error) throw result;
    return view(result);
  }

  /** The hosted source a dataset gets at creation (source_key = dataset id); call inside a write transaction. */
  putDefault(tenantId: string, datasetId: string, retentionDays: number | null, semanticConfig: SemanticConfig = {}): Source {
    let sourceId = this.store.meta.get(keys.counter(tenantId, 'source')) ?? 0;
    do sourceId++;
    while (this.store.meta.get(keys.source(tenantId, sourceId)));
    const source: SourceState = {
      ...blankSource(tenantId, sourceId, now()), source_key: datasetId, dataset_id: datasetId, name: datasetId, retention_days: retentionDays, semantic_config: semanticConfig,
    };
    this.store.meta.put(keys.counter(tenantId, 'source'), sourceId);
    this.store.meta.put(keys.source(tenantId, sourceId), source);
    this.store.meta.put(keys.sourceKey(tenantId, source.source_key), sourceId);
    return source;
  }

  /** A new ingest token for the source; the previous one stops working in the same transaction. */
  async rotateIngestToken(caller: Caller, sourceId: number): Promise<IngestTokenMinted> {
    const t = caller.tenant_id;
    const minted = await this.store.meta.transaction(() => {
      const source = this.state(t, sourceId);
      this.tokens.remove(source.ingest_token_id);
      const token = this.tokens.mint(t, sourceId);
      this.store.meta.put(keys.source(t, sourceId), {
        ...source, ingest_token_id: token.tokenId, ingest_token_configured: true, ingest_token_created_at: token.created_at,
        ingest_token_last_used_at: null, ingest_token_revoked_at: null, updated_at: token.created_at,
      });
      return token;
    });
    return { source_id: sourceId, created_at: minted.created_at, token: minted.token };
  }

  async revokeIngestToken(caller: Caller, sourceId: number): Promise<Source> {
    const t = caller.tenant_id;
    return view(
      await this.store.meta.transaction(() => {
        const source = this.state(t, sourceId);
        if (!source.ingest_token_configured) throw new Conflict(`source ${sourceId} has no ingest token`);
        this.tokens.remove(source.ingest_token_id);
        const at = now();
        const revoked: SourceState = { ...source, ingest_token_id: undefined, ingest_token_configured: false, ingest_token_revoked_at: at, updated_at: at };
        this.store.meta.put(keys.source(t, sourceId), revoked);
        return revoked;
      }),
    );
  }

  /** Call inside a write transaction. */
  remove(tenantId: string, sourceId: number): void {
    const source: SourceState | undefined = this.store.meta.get(keys.source(tenantId, sourceId));
    if (!source) return;
    this.tokens.remove(source.ingest_token_id);
    this.store.meta.remove(keys.source(tenantId, sourceId));
    this.store.meta.remove(keys.sourceKey(tenantId, source.source_key));
    this.dropConnector(tenantId, sourceId);
  }

  /** Inside a write transaction: a connector source's own keys; a sync staged for it then finds nothing and does nothing. */
  private dropConnector(tenantId: string, sourceId: number): void {
    this.store.meta.remove(keys.connector(tenantId, sourceId));
    removePrefix(this.store.meta, keys.connectorCheckpoint(tenantId, sourceId));
    removePrefix(this.store.meta, keys.connectorRun(tenantId, sourceId));
  }
}

function blankSource(tenantId: string, sourceId: number, at: string): SourceState {
  return {
    source_id: sourceId, source_key: '', source_type: 'hosted', tenant_id: tenantId, dataset_id: '', name: '', enabled: true,
    connector_id: null, bucket: HOSTED_BUCKET, prefix: '', access_role_ref: 'svc:hosted', intake_role_ref: null,
    external_id_configured: false, retention_days: null, format: 'ndjson', parse_config: {}, transform_config: {},
    search_config: DEFAULT_SEARCH_CONFIG, semantic_config: {}, ingest_token_configured: false, ingest_token_created_at: null,
    ingest_token_last_used_at: null, ingest_token_revoked_at: null, created_at: at, updated_at: at,
  };
}
