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
import type { DerivedIndexes } from '../derived/derivedIndexes.js';
import { sessionKey } from '../uploads/state.js';
import { deleteRecords, type Selection } from './records.js';
import { Targets, type Item, type Target } from './targets.js';
import { keys } from '../store/keys.js';

/**
 * Data-deletion jobs: a dataset, a source, one object (of a source, or of a completed upload) or one
 * record, with every index entry derived from what goes and, but for a record, the objects and runs.
 * One item per object (or the one record); the job's spec shape lives in its payload.
 */
export class DataDeletion {
  private readonly targets: Targets;

  constructor(
    private readonly store: Store,
    private readonly jobs: JobQueue,
    private readonly datasets: Datasets,
    private readonly sources: Sources,
    runs: Runs,
    private readonly blobs: BlobStore,
    private readonly derived: DerivedIndexes,
  ) {
    this.targets = new Targets(store, datasets, sources, runs);
    jobs.register('data_deletion', {
      handler: (job) => this.run(job),
      maxAttempts: 5,
      freesSpace: true,
      // half a deletion is no state to stop in: the spec lets only a job that has not started be cancelled
      cancellable: 'before-start',
      onCancel: (job) => this.cancelled(job),
      serialKey: (job) => `${job.tenant_id}/${(job.payload.target as Target).dataset_id}`,
    });
  }

  async dataset(caller: Caller, datasetId: string): Promise<DataDeletionJob> {
    const ds = this.datasets.state(caller.tenant_id, datasetId);
    if (ds.deleting) throw new Conflict(`dataset '${datasetId}' is already being deleted`);
    await this.store.meta.put(keys.dataset(caller.tenant_id, datasetId), { ...ds, deleting: true });
    return this.enqueue(caller, { scope: 'dataset', dataset_id: datasetId, source_id: null, source_key: null });
  }

  source(caller: Caller, sourceId: number): Promise<DataDeletionJob> {
    return this.enqueue(caller, this.targets.source(caller.tenant_id, sourceId));
  }

  object(caller: Caller, sourceId: number, key: string): Promise<DataDeletionJob> {
    return this.enqueue(caller, this.targets.object(caller.tenant_id, sourceId, key));
  }

  upload(caller: Caller, uploadSessionId: string): Promise<DataDeletionJob> {
    return this.enqueue(caller, this.targets.upload(caller.tenant_id, uploadSessionId));
  }

  record(caller: Caller, datasetId: string, recordId: string): Promise<DataDeletionJob> {
    return this.enqueue(caller, this.targets.record(caller.tenant_id, datasetId, recordId));
  }

  get(caller: Caller, jobId: string): DataDeletionJob {
    const job = this.jobs.get(caller.tenant_id, jobId);
    if (job.type !== 'data_deletion' && job.type !== TENANT_DELETION_JOB) throw new NotFound(`data-deletion job '${jobId}' not found`);
    return view(job);
  }

  private async enqueue(caller: Caller, target: Target): Promise<DataDeletionJob> {
    const items = this.targets.items(caller.tenant_id, target);
    return view(await this.jobs.enqueue(caller.tenant_id, 'data_deletion', { target, requested_by: caller.user_id, items }));
  }

  /** A dataset whose deletion was cancelled before it began takes ingest and queries again. */
  private cancelled(job: JobState): void {
    const target = job.payload.target as Target;
    const ds = target.scope === 'dataset' && this.store.meta.get(keys.dataset(job.tenant_id, target.dataset_id));
    if (!ds) return;
    this.store.meta.put(keys.dataset(job.tenant_id, target.dataset_id), { ...ds, deleting: false });
    // records deleted meanwhile were left in the SQL table for the whole drop: their tombstones apply once this commits
    setImmediate(() => void this.derived.catchUp(job.tenant_id, target.dataset_id));
  }

  private async run(job: JobState): Promise<Record<string, unknown>> {
    const t = job.tenant_id;
    const target = job.payload.target as Target;
    const items = job.payload.items as Item[];
    const at = now();
    for (const item of items) Object.assign(item, { status: 'running', attempt_count: item.attempt_count + 1, started_at: item.started_at ?? at, updated_at: at });
    await this.jobs.update(job);

    const byKey = await this.removeRecords(t, target);
    finish(items, byKey);
    // a record's object still holds its other records: only object scopes take the object
    if (target.scope !== 'record') for (const item of items) this.blobs.remove(t, String(item.target.bucket), String(item.target.key));
    await this.removeMetadata(t, target);
    if (target.scope === 'dataset') await this.derived.dropDataset(t, target.dataset_id);
    await this.jobs.update(job);
    if (items.some((i) => i.status === 'failed')) throw new Permanent('some items failed');
    return { deleted_documents: items.reduce((n, i) => n + Number(i.result.deleted_documents ?? 0), 0) };
  }

  /** The target's records leave the store and everything derived from them. How many went, per object key; none when a retry finds them gone. */
  private async removeRecords(t: string, target: Target): Promise<Map<string, number>> {
    const d = target.dataset_id;
    if (!this.store.meta.get(keys.dataset(t, d))) return new Map();
    // the indexes skip a dataset being deleted: each is dropped whole at the end
    if (target.scope === 'dataset') return deleteRecords(this.store, this.derived, t, d, () => true);
    let select: Selection;
    if (target.scope === 'record') {
      const seq: number | undefined = this.store.ids.get([t, d, target.record_id!]);
      if (seq === undefined) return new Map();
      select = { seqs: [seq] };
    } else {
      if (!this.store.meta.get(keys.source(t, target.source_id!))) return new Map(); // a retry after the source itself was removed
      select = target.key === undefined ? (rec) => rec.source_key === target.source_key : (rec) => rec.source_key === target.source_key && rec.key === target.key;
    }
    const byKey = await deleteRecords(this.store, this.derived, t, d, select);
    await this.derived.snapshot(t, d); // optional: the tombstones cover the deleted records
    return byKey;
  }

  private async removeMetadata(t: string, target: Target): Promise<void> {
    if (target.scope === 'record') return;
    await this.store.meta.transaction(() => {
      for (const { key, value } of scanPrefix<{ dataset_id: string; source_id: number; key: string }>(this.store.meta, keys.run(t))) {
        if (value.dataset_id !== target.dataset_id) continue;
        if (target.scope === 'dataset' || (value.source_id === target.source_id && (target.key === undefined || value.key === target.key))) this.store.meta.remove(key);
      }
      if (target.upload_session_id) return this.store.meta.remove(sessionKey(t, target.upload_session_id));
      if (target.scope === 'object') return;
      if (target.scope === 'source') return this.sources.remove(t, target.source_id!);
      for (const s of this.sources.ofDataset(t, target.dataset_id)) this.sources.remove(t, s.source_id);
      removePrefix(this.store.meta, keys.field(t, target.dataset_id));
      this.store.meta.remove(keys.dataset(t, target.dataset_id));
    });
  }
}

/** Each item counts the records of its object; a record item, the one record (or none, when it was already gone). */
function finish(items: Item[], byKey: Map<string, number>): void {
  const at = now();
  const all = [...byKey.values()].reduce((n, c) => n + c, 0);
  for (const item of items) {
    const deleted = item.item_type === 'record' ? all : (byKey.get(String(item.target.key)) ?? 0);
    Object.assign(item, { status: 'succeeded', completed_at: at, updated_at: at, result: { deleted_documents: deleted } });
  }
}

/** The job that deletes a provisioned tenant (src/engine/platform/tenants.ts): a data-deletion job of scope `tenant`, kept in the platform's tenant. */
export const TENANT_DELETION_JOB = 'tenant_deletion';

export const deletionView = (job: JobState): DataDeletionJob => view(job);

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
    target_upload_session_id: target.upload_session_id ?? null,
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
