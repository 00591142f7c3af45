import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { SchemaRebuildJob } from '../../api/sql.js';
import type { Caller } from '../auth/caller.js';
import type { Datasets } from '../datasets/datasets.js';
import { Conflict, NotFound } from '../errors.js';
import { observeFields, type FieldVariants } from '../fields/discover.js';
import type { JobQueue, JobState } from '../jobs/queue.js';
import { MAX_KEY, removePrefix, type Store } from '../store/db.js';
import type { SqlIndexes } from './sqlIndexes.js';
import { keys } from '../store/keys.js';

const SLICE = 5000;

/**
 * Schema rebuild jobs: a dataset's discovered fields are counted again from its records (counts
 * drift as records are deleted; a value type no record has any more goes), then its SQL table is
 * loaded again as a new generation and promoted atomically. They run in the dataset's ingest order,
 * so no run adds records half-way.
 */
export class SchemaRebuilds {
  constructor(
    private readonly store: Store,
    private readonly jobs: JobQueue,
    private readonly datasets: Datasets,
    private readonly indexes: SqlIndexes,
  ) {
    jobs.register('schema_rebuild', {
      handler: (job) => this.run(job),
      maxAttempts: 3,
      serialKey: (job) => `${job.tenant_id}/${job.payload.dataset_id}`,
    });
  }

  async start(caller: Caller, datasetId: string): Promise<SchemaRebuildJob> {
    if (this.datasets.state(caller.tenant_id, datasetId).deleting) throw new Conflict(`dataset '${datasetId}' is being deleted`);
    return view(await this.jobs.enqueue(caller.tenant_id, 'schema_rebuild', { dataset_id: datasetId, requested_by: caller.user_id }));
  }

  get(caller: Caller, datasetId: string, jobId: string): SchemaRebuildJob {
    const job = this.jobs.get(caller.tenant_id, jobId);
    if (job.type !== 'schema_rebuild' || job.payload.dataset_id !== datasetId) throw new NotFound(`schema rebuild '${jobId}' of dataset '${datasetId}' not found`);
    return view(job);
  }

  private async run(job: JobState): Promise<Record<string, unknown>> {
    const t = job.tenant_id;
    const d = String(job.payload.dataset_id);
    const ds = this.datasets.state(t, d);
    if (ds.deleting) throw new Conflict(`dataset '${d}' is being deleted`);
    const fields = await this.recountFields(t, d);
    const built = await this.indexes.rebuild(t, d);
    return { generation: built.generation, record_count: built.records, field_count: fields, column_count: built.columns };
  }

  /** Counts the dataset's fields from its records and replaces what discovery had counted; returns how many paths there are. */
  private async recountFields(t: string, d: string): Promise<number> {
    const fields = new Map<string, FieldVariants>();
    for (let from = 1; ; ) {
      const slice = [...this.store.records.getRange({ start: [t, d, from], end: [t, d, MAX_KEY], limit: SLICE }).map(({ value }) => value)];
      if (slice.length === 0) break;
      for (const rec of slice) observeFields(rec, fields);
      from = slice[slice.length - 1].seq + 1;
      await yieldToLoop();
    }
    await this.store.meta.transaction(() => {
      removePrefix(this.store.meta, keys.field(t, d));
      for (const [path, types] of fields) for (const [type, seen] of types) this.store.meta.put(keys.field(t, d, path, type), { count: seen.count, sample: seen.sample });
    });
    return fields.size;
  }
}

function view(job: JobState): SchemaRebuildJob {
  const result = job.result ?? {};
  const num = (k: string) => (typeof result[k] === 'number' ? (result[k] as number) : null);
  return {
    job_id: job.job_id,
    tenant_id: job.tenant_id,
    dataset_id: String(job.payload.dataset_id),
    status: job.status,
    requested_by: String(job.payload.requested_by ?? ''),
    generation: num('generation'),
    record_count: num('record_count'),
    field_count: num('field_count'),
    column_count: num('column_count'),
    error_message: job.error_message,
    created_at: job.created_at,
    started_at: job.started_at,
    completed_at: job.completed_at,
    updated_at: job.updated_at,
  };
}
