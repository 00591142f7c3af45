import { setImmediate as nextTurn } from 'node:timers/promises';
import type { SearchConfig } from '../../api/sources.js';
import { NotFound } from '../errors.js';
import { now } from '../ids.js';
import { isTerminal, type JobContext, type JobQueue, type JobState } from '../jobs/queue.js';
import type { Sql } from '../sql/sql.js';
import type { Store } from '../store/db.js';
import { keys } from '../store/keys.js';
import { nextRunAfter } from './cron.js';
import { commitOutcomes, storedGroups } from './evaluation.js';
import { Candidate } from './matcher.js';
import { MemoryGroups, Rule } from './rules.js';
import { sqlHit } from './sqlRule.js';
import type { StoredDetection } from './stored.js';
import type { Webhooks } from './webhooks.js';

export const DETECTION_RUN_JOB = 'detection_run';
/** records one step of a run reads and commits */
const STEP = 5000;

/** Where a detection's scheduled runs stand. */
export interface ScheduleState {
  /** per dataset, the last seq the runs covered */
  cutoffs: Record<string, number>;
  /** when the last run's window ended (a SQL detection's next `$since`) */
  cutoff_at: string;
  last_run_at: string | null;
  next_run_at: string | null;
  /** the job of the next run */
  job_id?: string;
  /** the job of the run before: its record goes when the next run starts, so a schedule keeps two */
  prev_job_id?: string;
}

export interface ScheduledDeps {
  store: Store;
  jobs: JobQueue;
  webhooks: Webhooks;
  sql: Sql;
  searchConfig: (t: string, d: string) => SearchConfig;
  datasetSeq: (t: string, d: string) => number;
}

/**
 * Cron detections as durable jobs: each run first stages the next one (at the next cron time after
 * now, so runs missed while the server was down come to one), then covers the records since the
 * previous run's cutoff. One run at a time per detection.
 */
export class Scheduled {
  constructor(private readonly deps: ScheduledDeps) {
    deps.jobs.register(DETECTION_RUN_JOB, {
      handler: (job, ctx) => this.run(job, ctx),
      serialKey: (job) => `detection:${job.tenant_id}:${String(job.payload.detection_id)}`,
      background: true,
      maxAttempts: 3,
    });
  }

  /** Inside a transaction: stores `state` with the job of the detection's next run. */
  schedule(det: StoredDetection, state: ScheduleState): void {
    const t = det.tenant_id;
    const next = nextRunAfter(det.trigger.cron!, det.trigger.timezone, Date.now());
    const job = next === null ? null : this.deps.jobs.stage(t, DETECTION_RUN_JOB, { detection_id: det.detection_id, version: det.version }, next);
    this.deps.store.meta.put(keys.detectionSchedule(t, det.detection_id), { ...state, next_run_at: next === null ? null : new Date(next).toISOString(), job_id: job?.job_id });
  }

  private seqOf(t: string, d: string): number | null {
    try {
      return this.deps.datasetSeq(t, d);
    } catch (err) {
      if (err instanceof NotFound) return null;
      throw err;
    }
  }

  /** Whether the detection's next run is waiting in the queue. */
  waiting(det: StoredDetection): boolean {
    const id = this.state(det)?.job_id;
    if (!id) return false;
    try {
      return !isTerminal(this.deps.jobs.get(det.tenant_id, id).status);
    } catch (err) {
      if (err instanceof NotFound) return false;
      throw err;
    }
  }

  private state(det: StoredDetection): ScheduleState | undefined {
    return this.deps.store.meta.get(keys.detectionSchedule(det.tenant_id, det.detection_id));
  }

  private async run(job: JobState, ctx: JobContext): Promise<Record<string, unknown>> {
    const { store, jobs } = this.deps;
    const t = job.tenant_id;
    const det: StoredDetection | undefined = store.meta.get(keys.detection(t, String(job.payload.detection_id)));
    // an update staged its own next run; a deleted or disabled detection runs no more
    if (!det || det.version !== job.payload.version || !det.enabled || !det.trigger.cron) return { skipped: 'the detection changed or is gone' };
    // the next run first, so that this one failing leaves it waiting; only the run the state names stages it
    const staged = await store.meta.transaction(() => {
      const current: StoredDetection | undefined = store.meta.get(keys.detection(t, det.detection_id));
      const state = this.state(det);
      if (current?.version !== det.version || state?.job_id !== job.job_id) return false;
      // an every-minute schedule makes 1,440 jobs a day: only this run's and the one before stay
      const prev: JobState | undefined = state.prev_job_id ? store.meta.get(keys.job(t, state.prev_job_id)) : undefined;
      if (prev && isTerminal(prev.status)) store.meta.remove(keys.job(t, prev.job_id));
      this.schedule(det, { ...state, prev_job_id: job.job_id });
      return true;
    });
    if (staged) jobs.poke();
    if (!this.state(det)) return { skipped: 'the detection changed or is gone' };
    const until = now();
    let hits = 0;
    if (det.query.sql !== undefined) {
      const state = this.state(det);
      if (!state) return { skipped: 'the detection changed or is gone' };
      for (const d of det.datasets) await this.deps.sql.indexes.catchUp(t, d).catch(() => {}); // what was committed before `until` is in the tables
      const { hit } = await sqlHit(this.deps.sql, det, state.cutoff_at, until);
      const done = { ...state, cutoff_at: until, last_run_at: until };
      hits = (await commitOutcomes(store, jobs, this.deps.webhooks, t, [{ det, hits: hit ? [hit] : [], groups: new MemoryGroups(), progress: [keys.detectionSchedule(t, det.detection_id), done] }])).length;
      return { hits };
    }
    for (const d of det.datasets) {
      const upto = this.seqOf(t, d);
      if (upto === null) continue; // the dataset is gone: the others still run
      for (;;) {
        if (ctx.cancelled()) return { hits, cancelled: true };
        const state = this.state(det);
        if (!state) return { hits, skipped: 'the detection changed or is gone' };
        const from = (state.cutoffs[d] ?? upto) + 1;
        if (from > upto) break;
        const records = [...store.records.getRange({ start: [t, d, from], end: [t, d, upto + 1], limit: STEP }).map((e) => e.value)];
        const end = records.length > 0 ? records[records.length - 1]!.seq : upto;
        const rule = new Rule(det, d, this.deps.searchConfig(t, d));
        const groups = storedGroups(store, t, det.detection_id);
        const found = rule.hits(rule.matches(records.filter((r) => !r.reparsed).map((r) => new Candidate(r))), groups);
        const progress = { ...state, cutoffs: { ...state.cutoffs, [d]: end } };
        hits += (await commitOutcomes(store, jobs, this.deps.webhooks, t, [{ det, hits: found, groups, progress: [keys.detectionSchedule(t, det.detection_id), progress] }])).length;
        await nextTurn();
      }
    }
    await store.meta.transaction(() => {
      const state = this.state(det);
      const current: StoredDetection | undefined = store.meta.get(keys.detection(t, det.detection_id));
      if (state && current?.version === det.version) store.meta.put(keys.detectionSchedule(t, det.detection_id), { ...state, cutoff_at: until, last_run_at: until });
    });
    return { hits };
  }
}
