import { Readable } from 'node:stream';
import type { ConnectorRun } from '../../api/connectors.js';
import { newObjectKey } from '../blobs/objectKey.js';
import type { BlobStore } from '../blobs/store.js';
import type { FreeSpace } from '../diskSpace.js';
import { newId, now } from '../ids.js';
import { parseConfig, type Ingest } from '../ingest/ingest.js';
import { MAX_OBJECT_BYTES } from '../ingest/objectLimit.js';
import { distinctEtag, newRun } from '../ingest/runs.js';
import { Permanent, type JobContext, type JobQueue, type JobState } from '../jobs/queue.js';
import type { Sources } from '../sources/sources.js';
import { newestFirst, type Store } from '../store/db.js';
import { keys } from '../store/keys.js';
import type { CredentialBox } from './credentials.js';
import { nextRunAfter } from '../detections/cron.js';
import { readStream, type Piece } from './readers.js';
import { streamsOf, type StoredConnector } from './stored.js';

export const CONNECTOR_SYNC_JOB = 'connector_sync';
/** syncs a source keeps on record (a followed directory makes one per burst of writes) */
const RUNS_KEPT = 100;
/** ingest run ids one sync lists; `objects` counts them all */
const RUN_IDS_KEPT = 1000;
const PROBLEMS_KEPT = 100;

export interface SyncDeps {
  store: Store;
  jobs: JobQueue;
  sources: Sources;
  ingest: Ingest;
  blobs: BlobStore;
  space: FreeSpace;
  box: CredentialBox;
}

/**
 * Syncs as durable jobs, one at a time per source. A sync reads each stream from its checkpoint;
 * every piece it reads (new lines of a file, a page of records) becomes an object and an ingest
 * run, stored in one transaction with the checkpoint past it and the run's job. A crash leaves
 * either all three or none, so no line is lost or read twice.
 */
export class Syncs {
  constructor(private readonly deps: SyncDeps) {
    deps.jobs.register(CONNECTOR_SYNC_JOB, {
      handler: (job, ctx) => this.run(job, ctx),
      serialKey: (job) => `connector:${job.tenant_id}:${String(job.payload.source_id)}`,
      background: true,
      maxAttempts: 3,
    });
  }

  poke(): void {
    this.deps.jobs.poke();
  }

  connector(t: string, sourceId: number): StoredConnector | undefined {
    return this.deps.store.meta.get(keys.connector(t, sourceId));
  }

  /** Inside a transaction: a new sync and its job; `dueMs` later for a cron one. */
  stage(c: StoredConnector, trigger: ConnectorRun['trigger']): ConnectorRun {
    const run = newConnectorRun(c, trigger);
    run.job_id = this.deps.jobs.stage(c.tenant_id, CONNECTOR_SYNC_JOB, { source_id: c.source_id, connector_run_id: run.connector_run_id, trigger }).job_id;
    this.deps.store.meta.put(keys.connectorRun(c.tenant_id, c.source_id, run.connector_run_id), run);
    this.deps.store.meta.put(keys.connector(c.tenant_id, c.source_id), { ...c, queued_run_id: run.connector_run_id, updated_at: run.created_at });
    return run;
  }

  /** Inside a transaction: the next cron sync's job, or none when the schedule never fires again. */
  scheduleNext(c: StoredConnector, afterMs = Date.now()): StoredConnector {
    const next = c.schedule_type === 'cron' && c.cron_expression ? nextRunAfter(c.cron_expression, c.cron_timezone, afterMs) : null;
    if (next !== null) this.deps.jobs.stage(c.tenant_id, CONNECTOR_SYNC_JOB, { source_id: c.source_id, trigger: 'cron', version: c.schedule_version }, next);
    const updated = { ...c, next_sync_at: next === null ? null : new Date(next).toISOString() };
    this.deps.store.meta.put(keys.connector(c.tenant_id, c.source_id), updated);
    return updated;
  }

  private async run(job: JobState, ctx: JobContext): Promise<Record<string, unknown>> {
    const { store } = this.deps;
    const t = job.tenant_id;
    const sourceId = Number(job.payload.source_id);
    const started = await store.meta.transaction(() => {
      let c = this.connector(t, sourceId);
      if (!c) return null;
      let run: ConnectorRun | undefined;
      if (job.payload.trigger === 'cron') {
        if (job.payload.version !== c.schedule_version) return null; // a schedule since replaced
        // the job's own id names its sync: a retry finds the sync its first attempt began, and stages no second next one
        const runId = `crun_${job.job_id.replace(/^job_/, '')}`;
        run = store.meta.get(keys.connectorRun(t, sourceId, runId));
        if (!run) {
          c = this.scheduleNext(c);
          run = { ...newConnectorRun(c, 'cron', job.job_id), connector_run_id: runId };
        }
      } else {
        run = store.meta.get(keys.connectorRun(t, sourceId, String(job.payload.connector_run_id)));
        if (!run) return null;
      }
      Object.assign(run, { status: 'running', started_at: run.started_at ?? now(), error_message: null });
      store.meta.put(keys.connectorRun(t, sourceId, run.connector_run_id), run);
      store.meta.put(keys.connector(t, sourceId), { ...c, running_run_id: run.connector_run_id, queued_run_id: c.queued_run_id === run.connector_run_id ? null : c.queued_run_id });
      this.prune(t, sourceId);
      return { c, run };
    });
    if (!started) return { skipped: true };
    const { c, run } = started;
    try {
      const source = this.deps.sources.get(t, sourceId);
      if (!source.enabled) throw new Permanent(`source '${source.source_key}' is disabled`);
      const credentials = this.deps.box.open(c.credentials);
      for (const stream of streamsOf(c)) {
        const checkpoint = store.meta.get(keys.connectorCheckpoint(t, sourceId, stream.name));
        for await (const piece of readStream(c, stream, checkpoint, credentials, ctx)) {
          if (ctx.cancelled()) break;
          await this.commit(c, run, piece);
        }
      }
      await this.finish(t, run, ctx.cancelled() ? 'cancelled' : 'succeeded', null);
      return { connector_run_id: run.connector_run_id, objects: run.objects, bytes: run.bytes };
    } catch (err) {
      const final = err instanceof Permanent || job.attempts >= job.max_attempts;
      await this.finish(t, run, final ? 'failed' : 'queued', (err as Error).message).catch(() => {});
      throw err instanceof Permanent || !final ? err : new Permanent((err as Error).message);
    }
  }

  /** Stores a piece as an object, and in one transaction its run, the run's job and the checkpoint past it. */
  private async commit(c: StoredConnector, run: ConnectorRun, piece: Piece): Promise<void> {
    const { store, blobs, ingest, sources, jobs, space } = this.deps;
    const t = c.tenant_id;
    run.problems.push(...piece.problems.slice(0, PROBLEMS_KEPT - run.problems.length));
    const checkpointKey = keys.connectorCheckpoint(t, c.source_id, piece.stream);
    if (piece.bytes.length === 0) {
      await store.meta.transaction(() => {
        store.meta.put(checkpointKey, piece.checkpoint);
        store.meta.put(keys.connectorRun(t, c.source_id, run.connector_run_id), run);
      });
      return;
    }
    space.check('connector sync');
    const source = sources.get(t, c.source_id);
    const key = newObjectKey(source.source_key, piece.name, 'page');
    const blob = await blobs.put(t, source.bucket, key, Readable.from([piece.bytes]), MAX_OBJECT_BYTES, () => space.check('connector sync'));
    const ingestRun = newRun({
      tenant_id: t, dataset_id: source.dataset_id, source_id: source.source_id, bucket: source.bucket, key,
      etag: piece.distinct ? distinctEtag(blob.etag) : blob.etag,
      input_kind: 'connector', ...parseConfig(source, key, piece.requested), requested: piece.requested,
    });
    ingestRun.connector_run_id = run.connector_run_id;
    const stored = await store.meta.transaction(() => {
      if (!this.connector(t, c.source_id)) return false;
      ingest.stage(ingestRun);
      store.meta.put(checkpointKey, piece.checkpoint);
      run.objects++;
      run.bytes += piece.bytes.length;
      if (run.ingest_run_ids.length < RUN_IDS_KEPT) run.ingest_run_ids.push(ingestRun.ingest_run_id);
      store.meta.put(keys.connectorRun(t, c.source_id, run.connector_run_id), run);
      return true;
    });
    if (!stored) {
      blobs.remove(t, source.bucket, key);
      throw new Permanent(`source ${c.source_id} is no longer a connector source`);
    }
    jobs.poke();
  }

  private async finish(t: string, run: ConnectorRun, status: ConnectorRun['status'], error: string | null): Promise<void> {
    const { store } = this.deps;
    await store.meta.transaction(() => {
      const c = this.connector(t, run.source_id);
      if (!c) return;
      Object.assign(run, { status, error_message: error, completed_at: status === 'queued' ? null : now() });
      store.meta.put(keys.connectorRun(t, run.source_id, run.connector_run_id), run);
      const requeued = status === 'queued' ? run.connector_run_id : c.queued_run_id;
      store.meta.put(keys.connector(t, run.source_id), { ...c, running_run_id: null, queued_run_id: requeued });
    });
  }

  /** Inside a transaction: a source keeps its latest RUNS_KEPT syncs. */
  private prune(t: string, sourceId: number): void {
    const prefix = keys.connectorRun(t, sourceId);
    const { next } = newestFirst<ConnectorRun>(this.deps.store.meta, prefix, undefined, RUNS_KEPT);
    if (next === null) return;
    for (const { key } of this.deps.store.meta.getRange({ start: prefix, end: [...prefix, next] })) this.deps.store.meta.remove(key);
  }
}

function newConnectorRun(c: StoredConnector, trigger: ConnectorRun['trigger'], jobId = ''): ConnectorRun {
  return {
    connector_run_id: newId('crun'), tenant_id: c.tenant_id, source_id: c.source_id, trigger, status: 'queued', job_id: jobId,
    ingest_run_ids: [], objects: 0, bytes: 0, problems: [], error_message: null, created_at: now(), started_at: null, completed_at: null,
  };
}
