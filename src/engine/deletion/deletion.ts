import type { DataDeletionJob } from '../../api/jobs.js';
import type { Caller } from '../auth/caller.js';
import type { BlobStore } from '../blobs/store.js';
import type { Datasets } from '../datasets/datasets.js';
import { Conflict, NotFound } from '../errors.js';
import type { Runs } from '../ingest/runs.js';
import { now } from '../ids.js';
import { Permanent, type JobQueue, type JobState } from '../jobs/queue.js';
import type { Sources } from '../sources/sources.js';
import { removePrefix, scanPrefix, type Store } from '../store/db.js';
import type { SqlIndexes } from '../sql/sqlIndexes.js';
import type { TextIndexes } from '../text/textIndexes.js';
import { deleteRecords } from './records.js';

type Scope = 'dataset' | 'source';
interface Target { scope: Scope; dataset_id: string; source_id: number | null; source_key: string | null }

/**
 * Data-deletion jobs: a dataset or a source, with every record, object, run and index entry
 * that belongs to it. One item per ingested object; the job's spec shape lives in its payload.
 */
export class DataDeletion {
  constructor(
    private readonly store: Store,
    private readonly jobs: JobQueue,
    private readonly datasets: Datasets,
    private readonly sources: Sources,
    private readonly runs: Runs,
    private readonly blobs: BlobStore,
    private readonly text: TextIndexes,
    private readonly sql?: SqlIndexes,
  ) {
    jobs.register('data_deletion', { handler: (job) => this.run(job), maxAttempts: 5, freesSpace: true, serialKey: (job) => `${job.tenant_id}/${(job.payload.target as Target).dataset_id}` });
  }

  async dataset(caller: Caller, datasetId: string): Promise<DataDeletionJob> {
    const ds = this.datasets.state(caller.tenant_id, datasetId);
    if (ds.deleting) throw new Conflict(`dataset '${datasetId}' is already being deleted`);
    await this.store.meta.put([caller.tenant_id, 'dataset', datasetId], { ...ds, deleting: true });
    return this.enqueue(caller, { scope: 'dataset', dataset_id: datasetId, source_id: null, source_key: null });
  }

  async source(caller: Caller, sourceId: number): Promise<DataDeletionJob> {
    const source = this.sources.get(caller.tenant_id, sourceId);
    return this.enqueue(caller, { scope: 'source', dataset_id: source.dataset_id, source_id: sourceId, source_key: source.source_key });
  }

  get(caller: Caller, jobId: string): DataDeletionJob {
    const job = this.jobs.get(caller.tenant_id, jobId);
    if (job.type !== 'data_deletion') throw new NotFound(`data-deletion job '${jobId}' not found`);
    return view(job);
  }

  private async enqueue(caller: Caller, target: Target): Promise<DataDeletionJob> {
    const at = now();
    const objects = new Set(
      this.runs.list(caller.tenant_id, { dataset_id: target.dataset_id, source_id: target.source_id ?? undefined, limit: Number.MAX_SAFE_INTEGER }).map((r) => `${r.bucket}\n${r.key}`),
    );
    const items = [...objects].map((object, i) => {
      const [bucket, key] = object.split('\n');
      return {
        item_id: i + 1, item_type: 'object_document', status: 'pending' as const, attempt_count: 0, next_attempt_at: null, started_at: null,
        completed_at: null, created_at: at, updated_at: at, error_message: null, target: { dataset_id: target.dataset_id, bucket, key }, result: {},
      };
    });
    const job = await this.jobs.enqueue(caller.tenant_id, 'data_deletion', { target, requested_by: caller.user_id, items });
    return view(job);
  }

  private async run(job: JobState): Promise<Record<string, unknown>> {
    const t = job.tenant_id;
    const target = job.payload.target as Target;
    const items = job.payload.items as DataDeletionJob['items'];
    const at = now();
    for (const item of items) Object.assign(item, { status: 'running', attempt_count: item.attempt_count + 1, started_at: item.started_at ?? at, updated_at: at });
    await this.jobs.update(job);

    let source = null;
    if (target.scope === 'source') {
      try {
        source = this.sources.get(t, target.source_id!);
      } catch {
        // already gone: a retry after the source itself was removed
      }
    }
    const exists = Boolean(this.store.meta.get([t, 'dataset', target.dataset_id]));
    if (target.scope === 'source' && source && exists) {
      const byKey = await deleteRecords(this.store, this.text, t, target.dataset_id, (rec) => rec.source_key === target.source_key);
      finish(items, byKey);
      await this.text.snapshot(t, target.dataset_id).catch(() => {}); // optional: the tombstones cover the deleted records
    } else if (target.scope === 'dataset' && exists) {
      finish(items, await deleteRecords(this.store, null, t, target.dataset_id, () => true));
    } else if (target.scope === 'dataset' || !source) {
      finish(items, new Map());
    }
    for (const item of items) this.blobs.remove(t, String(item.target.bucket), String(item.target.key));
    await this.removeMetadata(t, target);
    if (target.scope === 'dataset') await this.text.drop(t, target.dataset_id);
    if (target.scope === 'dataset') await this.sql?.drop(t, target.dataset_id);
    await this.jobs.update(job);
    if (items.some((i) => i.status === 'failed')) throw new Permanent('some items failed');
    return { deleted_documents: items.reduce((n, i) => n + Number(i.result.deleted_documents ?? 0), 0) };
  }

  private async removeMetadata(t: string, target: Target): Promise<void> {
    await this.store.meta.transaction(() => {
      for (const { key, value } of scanPrefix<{ dataset_id: string; source_id: number }>(this.store.meta, [t, 'run'])) {
        if (value.dataset_id === target.dataset_id && (target.scope === 'dataset' || value.source_id === target.source_id)) this.store.meta.remove(key);
      }
      if (target.scope === 'source') return this.sources.remove(t, target.source_id!);
      for (const s of this.sources.ofDataset(t, target.dataset_id)) this.sources.remove(t, s.source_id);
      for (const table of ['field', 'tomb', 'sqltomb']) removePrefix(this.store.meta, [t, table, target.dataset_id]);
      this.store.meta.remove([t, 'dataset', target.dataset_id]);
    });
  }
}

function finish(items: DataDeletionJob['items'], byKey: Map<string, number>): void {
  const at = now();
  for (const item of items) Object.assign(item, { status: 'succeeded', completed_at: at, updated_at: at, result: { deleted_documents: byKey.get(String(item.target.key)) ?? 0 } });
}

/** The spec's data-deletion job, from the durable job that carries it. */
function view(job: JobState): DataDeletionJob {
  const target = job.payload.target as Target;
  const items = job.payload.items as DataDeletionJob['items'];
  const count = (status: string) => items.filter((i) => i.status === status).length;
  const status = job.status === 'cancelled' ? 'failed' : job.status;
  return {
    job_id: job.job_id,
    tenant_id: job.tenant_id,
    requested_by: String(job.payload.requested_by),
    scope: target.scope,
    status,
    target_dataset_id: target.dataset_id,
    target_source_id: target.source_id,
    target_upload_session_id: null,
    item_total_count: items.length,
    item_pending_count: count('pending'),
    item_running_count: count('running'),
    item_succeeded_count: count('succeeded'),
    item_failed_count: count('failed'),
    items,
    error_message: job.status === 'cancelled' ? 'cancelled before it started' : job.error_message,
    created_at: job.created_at,
    started_at: job.started_at,
    completed_at: job.completed_at,
    updated_at: job.updated_at,
  };
}
