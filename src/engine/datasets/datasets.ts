import type { Dataset, DatasetCreate } from '../../api/datasets.js';
import type { Caller } from '../auth/caller.js';
import { Conflict, NotFound } from '../errors.js';
import { now } from '../ids.js';
import type { Sources } from '../sources/sources.js';
import { scanPrefix, type Store } from '../store/db.js';
import { defaultSemanticConfig } from '../vector/config.js';
import { keys } from '../store/keys.js';

/** What the store keeps of a dataset; the API's Dataset is derived from it. */
export interface DatasetState {
  dataset_id: string;
  name: string;
  description: string | null;
  retention_days: number | null;
  /** last sequence number given to a record */
  seq: number;
  record_count: number;
  created_at: string;
  updated_at: string;
  /** set when a data-deletion job for it is queued: no more ingestion */
  deleting?: boolean;
  /**
   * Every record committed has had a time, none earlier than the record before it: newest first by
   * time is then newest first by seq, the store's order (see Search). False for good once a record
   * breaks it; absent for a dataset made before svc kept it.
   */
  time_ordered?: boolean;
  /** the latest record time committed, in ms, while `time_ordered` */
  last_time?: number;
  /** ids derived from lines sort in line order (`lineIds`); absent for a dataset made before: hashed */
  ordered_ids?: boolean;
}

export class Datasets {
  constructor(
    private readonly store: Store,
    private readonly sources: Sources,
    /** whether a dataset's vectors are complete (the vector side knows) */
    private readonly semanticReady: (tenantId: string, datasetId: string) => boolean,
  ) {}

  state(tenantId: string, datasetId: string): DatasetState {
    const ds = this.store.meta.get(keys.dataset(tenantId, datasetId));
    if (!ds) throw new NotFound(`dataset '${datasetId}' not found`);
    return ds;
  }

  async create(caller: Caller, req: DatasetCreate): Promise<Dataset> {
    const t = caller.tenant_id;
    const at = now();
    const ds: DatasetState = {
      dataset_id: req.dataset_id,
      name: req.name ?? req.dataset_id,
      description: req.description ?? null,
      retention_days: req.retention_days ?? null,
      seq: 0,
      record_count: 0,
      time_ordered: true,
      ordered_ids: true,
      created_at: at,
      updated_at: at,
    };
    const created = await this.store.meta.transaction(() => {
      if (this.store.meta.get(keys.dataset(t, ds.dataset_id))) return false;
      if (this.store.meta.get(keys.sourceKey(t, ds.dataset_id)) !== undefined) return false;
      this.store.meta.put(keys.dataset(t, ds.dataset_id), ds);
      this.sources.putDefault(t, ds.dataset_id, ds.retention_days, req.semantic === false ? {} : defaultSemanticConfig(req.semantic_fields?.length ? req.semantic_fields : undefined));
      return true;
    });
    if (!created) throw new Conflict(`dataset '${ds.dataset_id}' already exists`);
    return this.view(t, ds);
  }

  get(caller: Caller, datasetId: string): Dataset {
    return this.view(caller.tenant_id, this.state(caller.tenant_id, datasetId));
  }

  list(caller: Caller): Dataset[] {
    return [...scanPrefix<DatasetState>(this.store.meta, keys.dataset(caller.tenant_id))].map((e) => this.view(caller.tenant_id, e.value));
  }

  ids(tenantId: string): string[] {
    return [...scanPrefix<DatasetState>(this.store.meta, keys.dataset(tenantId))].map((e) => e.value.dataset_id);
  }

  private view(tenantId: string, ds: DatasetState): Dataset {
    return {
      dataset_id: ds.dataset_id,
      tenant_id: tenantId,
      name: ds.name,
      description: ds.description,
      retention_days: ds.retention_days,
      record_count: ds.record_count,
      sources: this.sources.ofDataset(tenantId, ds.dataset_id).map((s) => s.source_id),
      // the SQL table catches up with the records before it answers, so it is ready when they are
      readiness: { text_search: ds.record_count > 0, sql_search: ds.record_count > 0, semantic_search: ds.record_count > 0 && this.semanticReady(tenantId, ds.dataset_id) },
      created_at: ds.created_at,
      updated_at: ds.updated_at,
    };
  }
}
