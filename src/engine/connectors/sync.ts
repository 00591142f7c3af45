import { Readable } from 'node:stream';
import type { ConnectorRun, DirectoryConfig, HttpConfig } from '../../api/connectors.js';
import { newObjectKey } from '../blobs/objectKey.js';
import type { BlobStore } from '../blobs/store.js';
import type { FreeSpace } from '../diskSpace.js';
import { newId, now } from '../ids.js';
import { parseConfig, type Ingest } from '../ingest/ingest.js';
import { MAX_OBJECT_BYTES } from '../ingest/objectLimit.js';
import { distinctEtag, newRun } from '../ingest/runs.js';
import { Interrupted, isTerminal, Permanent, type JobContext, type JobQueue, type JobState } from '../jobs/queue.js';
import { DiskFull, NotFound } from '../errors.js';
import { directoryRefusal, type DirectoryRoots } from './directory/allowed.js';
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
  /** where directory connectors may read */
  directories: () => DirectoryRoots;
}

const ENDED = new Set(['succeeded', 'failed', 'cancelled']);

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
      onCancel: (job) => this.cancelled(job),
    });
  }

  poke(): void {
    this.deps.jobs.poke();
  }

  connector(t: string, sourceId: number): StoredConnector | undefined {
    return this.deps.store.meta.get(keys.connector(t, sourceId));
  }

  private runOf(t: string, sourceId: number, runId: string | null): ConnectorRun | undefined {
    return runId === null ? undefined : this.deps.store.meta.get(keys.connectorRun(t, sourceId, runId));
  }

  /**
   * The sync of the source that waits or runs, if its job is still alive: a job cancelled, failed
   * or gone (and whatever left the connector's note behind) blocks nothing.
   */
  active(c: StoredConnector): ConnectorRun | undefined {
    return this.live(c, c.running_run_id) ?? this.live(c, c.queued_run_id);
  }

  /** The sync that waits to run, if its job is alive. */
  waiting(c: StoredConnector): ConnectorRun | undefined {
    return this.live(c, c.queued_run_id);
  }

  private live(c: StoredConnector, runId: string | null): ConnectorRun | undefined {
    const run = this.runOf(c.tenant_id, c.source_id, runId);
    if (!run?.job_id || ENDED.has(run.status)) return undefined;
    try {
      return isTerminal(this.deps.jobs.get(c.tenant_id, run.job_id).status) ? undefined : run;
    } catch (err) {
      if (err instanceof NotFound) return undefined;
      throw err;
    }
  }

  /** Inside a transaction: a new sync and its job. */
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
    if (next !== null) this.deps.jobs.stage(c.tenant_id, CONNECTOR_SYNC_JOB, { source_id: c.source_id, trigger: 'cron', schedule: c.schedule_id }, next);
    const updated = { ...c, next_sync_at: next === null ? null : new Date(next).toISOString() };
    this.deps.store.meta.put(keys.connector(c.tenant_id, c.source_id), updated);
    return updated;
  }

  /** The sync a job runs: a cron job's is named after the job, so that a retry finds the one its first attempt began. */
  private runIdOf(job: JobState): string {
    return job.payload.trigger === 'cron' ? `crun_${job.job_id.replace(/^job_/, '')}` : String(job.payload.connector_run_id);
  }

  /** In the transaction that cancels a job before it ran: its sync is cancelled and blocks nothing. */
  private cancelled(job: JobState): void {
    const t = job.tenant_id;
    const sourceId = Number(job.payload.source_id);
    const run = this.runOf(t, sourceId, this.runIdOf(job));
    if (run && !ENDED.has(run.status)) this.deps.store.meta.put(keys.connectorRun(t, sourceId, run.connector_run_id), { ...run, status: 'cancelled', completed_at: now() });
  }

  private async run(job: JobState, ctx: JobContext): Promise<Record<string, unknown>> {
    const { store } = this.deps;
    const t = job.tenant_id;
    const sourceId = Number(job.payload.source_id);
    const runId = this.runIdOf(job);
    const started = await store.meta.transaction(() => {
      let c = this.connector(t, sourceId);
      if (!c) return null;
      let run = this.runOf(t, sourceId, runId);
      if (job.payload.trigger === 'cron' && !run) {
        if (job.payload.schedule !== c.schedule_id) return null; // a schedule since replaced
        c = this.scheduleNext(c);
        run = { ...newConnectorRun(c, 'cron', job.job_id), connector_run_id: runId };
      }
      if (!run || ENDED.has(run.status)) return null;
      run = { ...run, status: 'running', started_at: run.started_at ?? now(), error_message: null };
      store.meta.put(keys.connectorRun(t, sourceId, runId), run);
      store.meta.put(keys.connector(t, sourceId), { ...c, running_run_id: runId, queued_run_id: c.queued_run_id === runId ? null : c.queued_run_id });
      this.prune(t, sourceId);
      return { c, run };
    });
    if (!started) return { skipped: true };
    const { c } = started;
    let run = started.run;
    try {
      const source = this.deps.sources.get(t, sourceId);
      if (source.source_type !== 'connector') throw new Permanent(`source ${sourceId} is no longer a connector source`);
      if (!source.enabled) throw new Permanent(`source '${source.source_key}' is disabled`);
      if (c.kind === 'directory') {
        const refused = directoryRefusal((c.config as DirectoryConfig).path, this.deps.directories());
        if (refused) throw new Permanent(refused);
      }
      const credentials = this.deps.box.open(c.credentials);
      for (const stream of streamsOf(c)) {
        const checkpoint = store.meta.get(keys.connectorCheckpoint(t, sourceId, stream.name));
        for await (const piece of readStream(c, stream, checkpoint, credentials, ctx)) {
          if (ctx.cancelled()) break;
          if (this.deps.jobs.stopping) throw new Interrupted('svc is stopping: the sync goes on at the next start');
          run = await this.commit(c, run, piece);
        }
      }
      await this.finish(t, run, ctx.cancelled() ? 'cancelled' : 'succeeded', null);
      return { connector_run_id: run.connector_run_id, objects: run.objects, bytes: run.bytes };
    } catch (err) {
      // a cancel ends the sync; a full disk or a stop waits for the job's next attempt, as does any failure with attempts left
      const waits = err instanceof DiskFull || err instanceof Interrupted;
      const final = !waits && (ctx.cancelled() || err instanceof Permanent || job.attempts >= job.max_attempts);
      const status = ctx.cancelled() ? 'cancelled' : final ? 'failed' : 'queued';
      await this.finish(t, run, status, (err as Error).message).catch(() => {}); // unrecorded, the sync's job still says how it ended
      throw final && !(err instanceof Permanent) && !ctx.cancelled() ? new Permanent((err as Error).message) : err;
    }
  }

  /**
   * Stores a piece as an object, and in one transaction its run, the run's job and the checkpoint
   * past it; returns the sync as it then stands.
   */
  private async commit(c: StoredConnector, run: ConnectorRun, piece: Piece): Promise<ConnectorRun> {
    const { store, blobs, ingest, sources, jobs, space } = this.deps;
    const t = c.tenant_id;
    const next: ConnectorRun = { ...run, problems: [...run.problems, ...piece.problems].slice(0, PROBLEMS_KEPT) };
    const checkpointKey = keys.connectorCheckpoint(t, c.source_id, piece.stream);
    // a sync reads what its connector said when it began: a PUT since (another directory or URL) stops it, before anything is written
    const unchanged = () => {
      const now = this.connector(t, c.source_id);
      return now !== undefined && now.kind === c.kind && readsFrom(now) === readsFrom(c);
    };
    if (piece.bytes.length === 0) {
      const stored = await store.meta.transaction(() => {
        if (!unchanged()) return false;
        store.meta.put(checkpointKey, piece.checkpoint);
        store.meta.put(keys.connectorRun(t, c.source_id, run.connector_run_id), next);
        return true;
      });
      if (!stored) throw new Permanent(`source ${c.source_id}'s connector changed during the sync`);
      return next;
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
    next.objects++;
    next.bytes += piece.bytes.length;
    if (next.ingest_run_ids.length < RUN_IDS_KEPT) next.ingest_run_ids = [...next.ingest_run_ids, ingestRun.ingest_run_id];
    const stored = await store.meta.transaction(() => {
      if (!unchanged()) return false;
      ingest.stage(ingestRun);
      store.meta.put(checkpointKey, piece.checkpoint);
      store.meta.put(keys.connectorRun(t, c.source_id, run.connector_run_id), next);
      return true;
    });
    if (!stored) {
      blobs.remove(t, source.bucket, key);
      throw new Permanent(`source ${c.source_id}'s connector changed during the sync`);
    }
    jobs.poke();
    return next;
  }

  private async finish(t: string, run: ConnectorRun, status: ConnectorRun['status'], error: string | null): Promise<void> {
    const { store } = this.deps;
    await store.meta.transaction(() => {
      const c = this.connector(t, run.source_id);
      if (!c) return;
      store.meta.put(keys.connectorRun(t, run.source_id, run.connector_run_id), { ...run, status, error_message: error, completed_at: status === 'queued' ? null : now() });
      const requeued = status === 'queued' ? run.connector_run_id : c.queued_run_id;
      store.meta.put(keys.connector(t, run.source_id), { ...c, running_run_id: null, queued_run_id: requeued });
    });
  }

  /** Inside a transaction: a source keeps its latest RUNS_KEPT syncs, and any that has not ended. */
  private prune(t: string, sourceId: number): void {
    const prefix = keys.connectorRun(t, sourceId);
    const { next } = newestFirst<ConnectorRun>(this.deps.store.meta, prefix, undefined, RUNS_KEPT);
    if (next === null) return;
    for (const { key, value } of this.deps.store.meta.getRange({ start: prefix, end: [...prefix, next] })) {
      if (ENDED.has((value as ConnectorRun).status)) this.deps.store.meta.remove(key);
    }
  }
}

/** What a connector reads from: a directory or a URL. */
export const readsFrom = (c: Pick<StoredConnector, 'kind' | 'config'>) => (c.kind === 'directory' ? (c.config as DirectoryConfig).path : (c.config as HttpConfig).url);

function newConnectorRun(c: StoredConnector, trigger: ConnectorRun['trigger'], jobId = ''): ConnectorRun {
  return {
    connector_run_id: newId('crun'), tenant_id: c.tenant_id, source_id: c.source_id, trigger, status: 'queued', job_id: jobId,
    ingest_run_ids: [], objects: 0, bytes: 0, problems: [], error_message: null, created_at: now(), started_at: null, completed_at: null,
  };
}
