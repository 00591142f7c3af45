import type { ReindexCreate, ReindexJob } from '../../api/reindex.js';
import type { Caller } from '../auth/caller.js';
import { crashPoint } from '../crashPoint.js';
import type { Datasets } from '../datasets/datasets.js';
import { deleteRecords } from '../deletion/records.js';
import { INDEX_NAMES, type Build, type DerivedIndex, type IndexName } from '../derived/derivedIndex.js';
import type { DerivedIndexes } from '../derived/derivedIndexes.js';
import { Conflict, NotFound } from '../errors.js';
import { newId, now } from '../ids.js';
import { parseConfig, type Ingest } from '../ingest/ingest.js';
import { newRun, type RequestedParse, type Runs, type RunState } from '../ingest/runs.js';
import { Interrupted, Permanent, type JobContext, type JobQueue, type JobState } from '../jobs/queue.js';
import type { Sources } from '../sources/sources.js';
import type { Store } from '../store/db.js';
import { TRANSFORM_VERSION } from '../records.js';
import { keys } from '../store/keys.js';
import { manifest, type ManifestObject } from './manifest.js';

const TYPE = 'reindex';

/** What a reindex job records as it goes (the job's result): enough for an attempt after a crash to go on. */
interface Progress {
  phase: 'manifest' | 'reparse' | 'rebuild' | 'replay' | 'promote' | 'done';
  manifest_cutoff_at: string | null;
  objects: ManifestObject[];
  source_document_count: number;
  replay_document_count: number;
  source_generation_ids: number[];
  target_generation_id: number | null;
  promotion_id: string | null;
  /** the dataset's last seq when the manifest was made: a record past it that another object made is theirs */
  manifest_seq: number;
  /** the indexes rebuilt, fixed when the build starts: a resumed promote switches exactly these */
  rebuilt: IndexName[];
}

class Cancelled extends Error {}

/**
 * Reindex jobs. Everything committed up to the manifest's cutoff is rebuilt into a new generation
 * of each chosen index: objects whose source config changed since they were parsed are parsed
 * again first (records written anew, each replacing its old self in one transaction), then every
 * index builds generation N+1 from the records while generation N serves, takes the records
 * committed meanwhile, and all are switched by one LMDB transaction. A crash before that commit
 * leaves N serving and the job starts its build again; after it, N+1 serves and the job finishes
 * removing N.
 */
export class Reindexes {
  constructor(
    private readonly store: Store,
    private readonly jobs: JobQueue,
    private readonly datasets: Datasets,
    private readonly sources: Sources,
    private readonly runs: Runs,
    private readonly ingest: Ingest,
    private readonly derived: DerivedIndexes,
    /** the config's `crashAt` */
    private readonly crashAt: string | null = null,
  ) {
    jobs.register(TYPE, {
      handler: (job, ctx) => this.run(job, ctx),
      maxAttempts: 3,
      serialKey: (job) => `${job.tenant_id}/${job.payload.dataset_id}/reindex`,
      // the switch is committed with the phase: from there the new generation serves, and the job only removes the old one
      cancelRefused: (job) => (['promote', 'done'].includes(progressOf(job).phase) ? 'it has switched the dataset to its new generation and runs to its end' : undefined),
    });
  }

  async start(caller: Caller, req: ReindexCreate): Promise<ReindexJob> {
    const t = caller.tenant_id;
    if (this.datasets.state(t, req.dataset_id).deleting) throw new Conflict(`dataset '${req.dataset_id}' is being deleted`);
    if (req.source_id != null && this.sources.get(t, req.source_id).dataset_id !== req.dataset_id) throw new NotFound(`source ${req.source_id} does not feed dataset '${req.dataset_id}'`);
    const busy = ['pending', 'running'].flatMap((status) => this.jobs.list(t, { type: TYPE, status: status as 'pending' })).find((j) => j.payload.dataset_id === req.dataset_id);
    if (busy) throw new Conflict(`dataset '${req.dataset_id}' is already being reindexed by job '${busy.job_id}'`);
    const indexes = INDEX_NAMES.filter((n) => !req.indexes || req.indexes.includes(n));
    const job = await this.jobs.enqueue(t, TYPE, { dataset_id: req.dataset_id, source_id: req.source_id ?? null, indexes, requested_by: caller.user_id });
    return view(job);
  }

  get(caller: Caller, jobId: string): ReindexJob {
    return view(this.job(caller, jobId));
  }

  /** Stops a job in flight: the generation it was building goes, the current one keeps serving. 409 once it ended, or switched. */
  async cancel(caller: Caller, jobId: string): Promise<ReindexJob> {
    this.job(caller, jobId);
    return view(await this.jobs.cancel(caller.tenant_id, jobId));
  }

  private job(caller: Caller, jobId: string): JobState {
    const job = this.jobs.get(caller.tenant_id, jobId);
    if (job.type !== TYPE) throw new NotFound(`reindex job '${jobId}' not found`);
    return job;
  }

  private async run(job: JobState, ctx: JobContext): Promise<Record<string, unknown>> {
    const t = job.tenant_id;
    const d = String(job.payload.dataset_id);
    const p = progressOf(job);
    const save = async (phase = p.phase) => {
      p.phase = phase;
      job.result = { ...p };
      await this.jobs.update(job);
    };
    // checked between steps and inside each fill: a cancel, or a process stopping, need not wait for a whole build
    const stop = () => {
      if (ctx.cancelled()) throw new Cancelled('cancelled');
      if (this.jobs.stopping) throw new Interrupted('the process is stopping: the reindex goes on when the data dir opens again');
    };
    if (p.phase === 'manifest') {
      p.manifest_cutoff_at = now();
      p.manifest_seq = this.datasets.state(t, d).seq;
      p.objects = manifest(this.store, t, d, job.payload.source_id as number | null);
      await save('reparse');
    }
    if (p.phase === 'reparse') {
      for (const object of p.objects.filter((o) => o.status === 'pending')) {
        stop();
        await this.reparse(job, object, save);
      }
      await save('rebuild');
    }
    if (p.phase === 'rebuild' || p.phase === 'replay') {
      p.rebuilt = this.derived.all.filter((i) => (job.payload.indexes as IndexName[]).includes(i.name) && i.generation(t, d) !== null).map((i) => i.name);
    }
    const chosen = p.rebuilt.map((name) => this.derived.get(name));
    if (p.phase === 'rebuild' || p.phase === 'replay') await this.rebuild(job, chosen, p, save, stop);
    // the switch is committed: what is left is removing the old generation, and it is the same after a crash
    for (const index of chosen) await index.promote(t, d, p.target_generation_id!);
    await save('done');
    return { ...p };
  }

  /** Parses one object again, unless its source's config still makes what it made. */
  private async reparse(job: JobState, object: ManifestObject, save: () => Promise<void>): Promise<void> {
    const t = job.tenant_id;
    const d = String(job.payload.dataset_id);
    let run: RunState | undefined;
    try {
      const source = this.sources.get(t, object.source_id);
      const first = this.runs.state(t, object.run_id);
      if (object.reparse_run_id) run = this.runs.find(t, object.reparse_run_id);
      if (!run) {
        const wanted = parseConfig(source, object.key, first.requested ?? asRequested(first));
        // the same config makes the same records, unless an earlier transform version made them
        if (same(wanted, { format: first.format, transform: first.transform }) && (first.transform_version ?? 1) >= TRANSFORM_VERSION) {
          Object.assign(object, { status: 'done', unchanged: true });
          return await save();
        }
        run = newRun({ ...pick(first), input_kind: 'reindex', ...wanted, requested: first.requested });
        Object.assign(run, { ingested_at: first.ingested_at ?? first.created_at, reindex_job_id: job.job_id, reparse_from_seq: this.datasets.state(t, d).seq, reparse_manifest_seq: progressOf(job).manifest_seq, upload_session_id: first.upload_session_id });
        // the job names the run before the run is stored: a crash between leaves no run that nothing will ever take up
        run.ingest_run_id = object.reparse_run_id ??= run.ingest_run_id;
        await save();
        this.runs.put(run);
      }
    } catch (err) {
      if (!(err instanceof NotFound)) throw err;
      object.status = 'failed'; // its source or its first run went meanwhile: its records are whatever a deletion left
      return save();
    }
    await this.ingest.reparse(run);
    if (run.status === 'ready') {
      const from = run.reparse_from_seq!;
      await deleteRecords(this.store, this.derived, t, d, (rec) => rec.key === object.key && rec.seq <= from);
    }
    object.status = run.status === 'ready' ? 'done' : 'failed'; // a failed one keeps the records it had
    await save();
  }

  /** Builds the target generation of each index, replays what came meanwhile, seals it and switches to it in one transaction. */
  private async rebuild(job: JobState, chosen: DerivedIndex[], p: Progress, save: (phase?: Progress['phase']) => Promise<void>, stop: () => void): Promise<void> {
    const t = job.tenant_id;
    const d = String(job.payload.dataset_id);
    p.source_generation_ids = chosen.map((i) => i.generation(t, d)!);
    const g = Math.max(0, ...p.source_generation_ids) + 1;
    Object.assign(p, { target_generation_id: g, source_document_count: 0, replay_document_count: 0 });
    await save('rebuild');
    const builds: Build[] = [];
    try {
      const cutoff = this.datasets.state(t, d).seq;
      for (const [n, index] of chosen.entries()) {
        stop();
        const build = await index.build(t, d, g);
        builds.push(build);
        const filled = await build.fill(cutoff, stop);
        if (n === 0) p.source_document_count = filled;
        crashPoint('reindex:rebuild', this.crashAt);
      }
      await save('replay');
      const upto = this.datasets.state(t, d).seq;
      for (const [n, build] of builds.entries()) {
        const replayed = await build.fill(upto, stop);
        if (n === 0) p.replay_document_count = replayed;
        crashPoint('reindex:replay', this.crashAt);
      }
      for (const build of builds) await build.seal();
      stop();
      // the phase is stored with the switch: a job that did not switch never says promote
      const promoted: Progress = { ...p, phase: 'promote', promotion_id: newId('prom') };
      // a synchronous transaction: lmdb's asynchronous ones keep the writes made before a throw, and this one must be all or nothing
      this.store.meta.transactionSync(() => {
        const current: JobState = this.store.meta.get(keys.job(t, job.job_id));
        // a cancel that came since the last look: nothing is switched
        if (current.cancel_requested) throw new Cancelled('cancelled');
        const ds = this.store.meta.get(keys.dataset(t, d));
        if (!ds || ds.deleting) throw new Permanent(`dataset '${d}' is being deleted: the reindex stops`);
        for (const index of chosen) index.point(t, d, g);
        this.store.meta.put(keys.job(t, job.job_id), { ...current, result: { ...promoted }, updated_at: now() });
      });
      Object.assign(p, promoted);
      job.result = { ...p };
    } catch (err) {
      for (const build of builds) await build.discard().catch(() => {});
      throw err;
    }
    crashPoint('reindex:promote', this.crashAt);
  }
}

const pick = (run: { tenant_id: string; dataset_id: string; source_id: number; bucket: string; key: string; etag: string }) => ({
  tenant_id: run.tenant_id, dataset_id: run.dataset_id, source_id: run.source_id, bucket: run.bucket, key: run.key, etag: run.etag,
});

/**
 * What a run made before runs kept their request named is taken to have named: its format and its
 * four field choices, which then stay as they were (ids too); rename and drop follow the source.
 */
function asRequested(run: RunState): RequestedParse {
  const { id_field, title_field, body_field, time_field } = run.transform;
  return Object.fromEntries(Object.entries({ format: run.format, id_field, title_field, body_field, time_field }).filter(([, v]) => v));
}

/** Equal as JSON, whatever the order of their keys. */
function same(a: unknown, b: unknown): boolean {
  const sorted = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(sorted) : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).filter(([, x]) => x !== undefined && x !== null).sort(([x], [y]) => x.localeCompare(y)).map(([k, x]) => [k, sorted(x)])) : v;
  return JSON.stringify(sorted(a)) === JSON.stringify(sorted(b));
}

function progressOf(job: JobState): Progress {
  const r = (job.result ?? {}) as Partial<Progress>;
  return {
    phase: r.phase ?? 'manifest',
    manifest_cutoff_at: r.manifest_cutoff_at ?? null,
    objects: r.objects ?? [],
    source_document_count: r.source_document_count ?? 0,
    replay_document_count: r.replay_document_count ?? 0,
    source_generation_ids: r.source_generation_ids ?? [],
    target_generation_id: r.target_generation_id ?? null,
    promotion_id: r.promotion_id ?? null,
    manifest_seq: r.manifest_seq ?? 0,
    rebuilt: r.rebuilt ?? [],
  };
}

function view(job: JobState): ReindexJob {
  const p = progressOf(job);
  const counts: Record<string, number> = {};
  for (const o of p.objects) counts[o.status] = (counts[o.status] ?? 0) + 1;
  const d = String(job.payload.dataset_id);
  return {
    job_id: job.job_id,
    tenant_id: job.tenant_id,
    status: job.status,
    dataset_id: d,
    source_id: (job.payload.source_id as number | null) ?? null,
    indexes: job.payload.indexes as IndexName[],
    phase: p.phase,
    object_count: p.objects.length,
    object_status_counts: counts,
    source_document_count: p.source_document_count,
    replay_document_count: p.replay_document_count,
    source_generation_ids: p.source_generation_ids,
    target_generation_id: p.target_generation_id,
    target_index_id: p.target_generation_id === null ? null : `${d}@${p.target_generation_id}`,
    promotion_id: p.promotion_id,
    manifest_cutoff_at: p.manifest_cutoff_at,
    requested_by: String(job.payload.requested_by ?? ''),
    error_message: job.error_message,
    created_at: job.created_at,
    started_at: job.started_at,
    completed_at: job.completed_at,
    updated_at: job.updated_at,
  };
}
