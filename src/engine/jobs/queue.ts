import { EventEmitter } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Job, JobListQuery } from '../../api/jobs.js';
import type { FreeSpace } from '../diskSpace.js';
import { Conflict, DiskFull, NotFound } from '../errors.js';
import { newId, now } from '../ids.js';
import { logProblem } from '../log.js';
import { SYSTEM, scanPrefix, type Store } from '../store/db.js';
import { DiskWaits } from './diskWaits.js';
import { keys } from '../store/keys.js';

export interface JobState extends Job {
  lease_owner: string | null;
  lease_expires_at: string | null;
  /** how many times in a row the job met a full disk: it waits for space without using up its attempts */
  disk_waits?: number;
}

/** Thrown by a handler when trying again cannot help: the job fails at once. */
export class Permanent extends Error {}

/** Thrown by a handler that stopped because this process is stopping: the job waits for the next start without using up an attempt. */
export class Interrupted extends Error {}

export interface JobContext {
  /** true once a cancel was asked for; a handler that can stop early checks it between steps */
  cancelled(): boolean;
}

export interface JobKind {
  handler: (job: JobState, ctx: JobContext) => Promise<Record<string, unknown> | void>;
  maxAttempts?: number;
  /** jobs with the same key run one at a time (the runs of one dataset) */
  serialKey?: (job: JobState) => string;
  /**
   * Work that only a long-running process takes as soon as it is due: upkeep (retention,
   * clean-up) and derived indexes (vectors). A local command leaves it, unless it needs the
   * result now (`runDeferred`) or waits on the job.
   */
  background?: boolean;
  /** work that frees space (deletion, retention, clean-up): it never waits for the free-space floor */
  freesSpace?: boolean;
  /**
   * 'before-start': work that cannot stop halfway (a data deletion) is cancelled only while no
   * attempt has begun; later a cancel is refused (409). Default: a running job is asked to stop.
   */
  cancellable?: 'always' | 'before-start';
  /**
   * Why a job that has not ended can no longer be cancelled (it passed a point of no return,
   * recorded in its state), or nothing: a cancel is then refused (409) before anything is written.
   */
  cancelRefused?: (job: JobState) => string | undefined;
  /** undoes what creating the job set up, in the transaction that cancels it before it ran */
  onCancel?: (job: JobState) => void;
}

const LEASE_MS = 60_000;
const POLL_MS = 200;
const BACKOFF_BASE_MS = 1000;
const BACKOFF_MAX_MS = 5 * 60_000;
/** A job, or the queue itself, that met a full disk tries again after 1 s, 2 s, … up to a minute (sooner when space returns). */
const DISK_BACKOFF_MAX_MS = 60_000;
const CONCURRENCY = 2;

/** 1 s, 2 s, 4 s, … for the `n`th wait (from 0), up to `max`. */
const backoffMs = (n: number, max = BACKOFF_MAX_MS) => Math.min(max, BACKOFF_BASE_MS * 2 ** Math.max(0, n));
export const diskBackoffMs = (waits: number) => backoffMs(waits - 1, DISK_BACKOFF_MAX_MS);

const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);
export const isTerminal = (status: string) => TERMINAL.has(status);

/**
 * Durable jobs in LMDB: a job is stored with its status, attempts and lease; the queue index
 * `[SYSTEM, 'jobq', due time, job id]` holds the jobs waiting to run. This process leases due jobs,
 * runs them, and retries failures with exponential backoff. A job left running by a process that
 * died is taken up again when the data dir is next opened.
 */
export class JobQueue {
  private readonly kinds = new Map<string, JobKind>();
  private readonly running = new Map<string, Promise<void>>();
  private readonly runningTypes = new Map<string, number>();
  private readonly busyKeys = new Set<string>();
  private readonly events = new EventEmitter();
  private readonly owner = newId('worker');
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private background = false;
  /** aborts the waits of a stopping queue */
  private halt = new AbortController();
  /** jobs taken over from a dead process, when the disk was too full to record it at start */
  private adoptLater = false;
  /** failures in a row of the queue's own writes (leases): the next tick waits accordingly */
  private queueFailures = 0;
  private readonly diskWaits: DiskWaits;

  constructor(private readonly store: Store, readonly space: FreeSpace) {
    this.events.setMaxListeners(0);
    this.diskWaits = new DiskWaits(store, space);
  }

  /** Whether a job of this type is running in this process. */
  isRunning(type: string): boolean {
    return (this.runningTypes.get(type) ?? 0) > 0;
  }

  /** True once `stop` was called: a long handler ends its slice and leaves the rest to a later job. */
  get stopping(): boolean {
    return this.stopped;
  }

  register(type: string, kind: JobKind): void {
    this.kinds.set(type, kind);
  }

  async enqueue(tenantId: string, type: string, payload: Record<string, unknown>, dueMs = Date.now()): Promise<JobState> {
    const job = await this.store.meta.transaction(() => this.stage(tenantId, type, payload, dueMs));
    this.wake();
    return job;
  }

  /**
   * Writes a job inside the caller's LMDB transaction, so that it exists exactly when what the
   * transaction commits does (a hit and its deliveries). Call `poke` once it committed.
   */
  stage(tenantId: string, type: string, payload: Record<string, unknown>, dueMs = Date.now()): JobState {
    const at = now();
    const job: JobState = {
      job_id: newId('job'), tenant_id: tenantId, type, status: 'pending', attempts: 0, max_attempts: this.kinds.get(type)?.maxAttempts ?? 5,
      next_attempt_at: new Date(dueMs).toISOString(), payload, result: null, error_message: null,
      created_at: at, started_at: null, completed_at: null, updated_at: at, lease_owner: null, lease_expires_at: null,
    };
    this.store.meta.put(keys.job(tenantId, job.job_id), job);
    this.store.meta.put(keys.jobQueue(SYSTEM, dueMs, job.job_id), tenantId);
    return job;
  }

  /** Looks for due work now (after jobs were staged). */
  poke(): void {
    this.wake();
  }

  get(tenantId: string, jobId: string): JobState {
    const job = this.store.meta.get(keys.job(tenantId, jobId));
    if (!job) throw new NotFound(`job '${jobId}' not found`);
    return job;
  }

  list(tenantId: string, q: JobListQuery): JobState[] {
    const out: JobState[] = [];
    for (const { value } of scanPrefix<JobState>(this.store.meta, keys.job(tenantId), { reverse: true })) {
      if ((q.type && value.type !== q.type) || (q.status && value.status !== q.status)) continue;
      out.push(value);
      if (out.length >= (q.limit ?? 50)) break;
    }
    return out;
  }

  /** Stores what a running handler wants readable before it ends (progress). */
  async update(job: JobState): Promise<void> {
    job.updated_at = now();
    await this.store.meta.transaction(() => {
      const current: JobState | undefined = this.store.meta.get(keys.job(job.tenant_id, job.job_id));
      // a cancel asked for meanwhile stays asked for
      if (current) this.store.meta.put(keys.job(job.tenant_id, job.job_id), { ...job, cancel_requested: current.cancel_requested || job.cancel_requested });
    });
  }

  /** A pending job is cancelled at once; a running one is asked to stop (unless its kind cannot stop once started). */
  async cancel(tenantId: string, jobId: string): Promise<JobState> {
    const job = await this.store.meta.transaction(() => {
      const job: JobState = this.get(tenantId, jobId);
      if (isTerminal(job.status)) throw new Conflict(`job '${jobId}' already ended (${job.status})`);
      const kind = this.kinds.get(job.type);
      // a retry waiting as pending has started too: part of its work may be done
      if (kind?.cancellable === 'before-start' && job.started_at !== null) {
        throw new Conflict(`job '${jobId}' (${job.type}) has started and cannot be cancelled: it runs to its end`);
      }
      const refused = kind?.cancelRefused?.(job);
      if (refused) throw new Conflict(`job '${jobId}' (${job.type}) cannot be cancelled: ${refused}`);
      job.cancel_requested = true;
      if (job.status === 'pending') {
        this.store.meta.remove(keys.jobQueue(SYSTEM, Date.parse(job.next_attempt_at!), job.job_id));
        Object.assign(job, { status: 'cancelled', completed_at: now() });
        kind?.onCancel?.(job);
      }
      job.updated_at = now();
      this.store.meta.put(keys.job(tenantId, jobId), job);
      return job;
    });
    if (job.status === 'cancelled') this.events.emit(job.job_id, job);
    return job;
  }

  /** Resolves with the job once it has ended, or once `until` says the waiting is over. */
  async settled(tenantId: string, jobId: string, until?: () => boolean): Promise<JobState> {
    const job = this.get(tenantId, jobId);
    if (isTerminal(job.status) || until?.()) return job;
    return new Promise((resolve, reject) => {
      let deferred: Promise<void> | null = null;
      const check = () => {
        let current: JobState;
        try {
          current = this.get(tenantId, jobId);
        } catch (err) {
          clearInterval(poll);
          this.events.off(jobId, check);
          return reject(err); // gone with its tenant
        }
        if (!isTerminal(current.status) && !until?.()) {
          // nobody else would run it: the one waiting does
          if (!deferred && !this.background && this.kinds.get(current.type)?.background) {
            deferred = this.runDeferred((j) => j.job_id === jobId)
              .catch(() => {}) // the job's own outcome is in its state; a failed lease is tried again at the next poll
              .finally(() => (deferred = null));
          }
          return;
        }
        clearInterval(poll);
        this.events.off(jobId, check);
        resolve(current);
      };
      // the event covers this process; the poll covers jobs another process runs
      const poll = setInterval(check, 500);
      this.events.on(jobId, check);
      check();
    });
  }

  /**
   * Takes up jobs orphaned by a dead process, then starts leasing (background kinds too when asked).
   * A start on a full disk still starts: what it could not record is taken up once it can be.
   */
  async start(opts: { background?: boolean } = {}): Promise<void> {
    this.background = Boolean(opts.background);
    try {
      await this.adoptOrphans();
    } catch (err) {
      if (!(err instanceof DiskFull)) throw err;
      logProblem('jobs_not_resumed', err);
      this.adoptLater = true;
    }
    this.stopped = false;
    this.halt = new AbortController();
    this.wake();
  }

  /** Jobs left running by a dead process go back to the queue; jobs waiting for disk space are due at once (space may be back). */
  private async adoptOrphans(): Promise<void> {
    // most starts find none: a command that only reads then starts no write transaction (lmdb-js's write thread, a sync)
    if (!this.anyAdoptable()) return;
    await this.store.meta.transaction(() => {
      for (const { tenant, job } of this.everyJob()) {
        if (!this.adoptable(job)) continue;
        if (job.status === 'pending') this.store.meta.remove(keys.jobQueue(SYSTEM, Date.parse(job.next_attempt_at!), job.job_id));
        Object.assign(job, { status: 'pending', lease_owner: null, lease_expires_at: null, next_attempt_at: now(), updated_at: now() });
        this.store.meta.put(keys.job(tenant, job.job_id), job);
        this.store.meta.put(keys.jobQueue(SYSTEM, Date.parse(job.next_attempt_at!), job.job_id), tenant);
      }
    });
  }

  /** Running under a lease another (dead) process held, or pending until disk space came back. */
  private adoptable(job: JobState): boolean {
    return (job.status === 'running' && job.lease_owner !== this.owner) || (job.status === 'pending' && (job.disk_waits ?? 0) > 0);
  }

  private anyAdoptable(): boolean {
    for (const { job } of this.everyJob()) if (this.adoptable(job)) return true;
    return false;
  }

  /** Every job of every tenant (and the system's), with its tenant. */
  private *everyJob(): Generator<{ tenant: string; job: JobState }> {
    for (const tenant of [SYSTEM, ...[...scanPrefix<{ tenant_id: string }>(this.store.meta, keys.tenant(SYSTEM))].map((e) => e.value.tenant_id)]) {
      for (const { value: job } of scanPrefix<JobState>(this.store.meta, keys.job(tenant))) yield { tenant, job };
    }
  }

  /** Stops leasing and waits for the jobs in hand to end. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.halt.abort();
    if (this.timer) clearTimeout(this.timer);
    await Promise.allSettled(this.running.values());
  }

  /** Makes a pending job due now (a retry asked for by hand); false when it is not pending. */
  async dueNow(tenantId: string, jobId: string): Promise<boolean> {
    const moved = await this.store.meta.transaction(() => {
      const job: JobState | undefined = this.store.meta.get(keys.job(tenantId, jobId));
      if (job?.status !== 'pending') return false;
      this.store.meta.remove(keys.jobQueue(SYSTEM, Date.parse(job.next_attempt_at!), jobId));
      Object.assign(job, { next_attempt_at: now(), updated_at: now() });
      this.store.meta.put(keys.job(tenantId, jobId), job);
      this.store.meta.put(keys.jobQueue(SYSTEM, Date.parse(job.next_attempt_at!), jobId), tenantId);
      return true;
    });
    this.wake();
    return moved;
  }

  /** Waits until no job is due or running in this process. */
  async drain(): Promise<void> {
    for (;;) {
      await Promise.allSettled(this.running.values());
      await this.tick();
      if (this.running.size === 0 && !this.hasDue()) return;
    }
  }

  private hasDue(): boolean {
    for (const { key, value: tenantId } of scanPrefix<string>(this.store.meta, keys.jobQueue(SYSTEM))) {
      if ((key[2] as number) > Date.now()) return false;
      const job: JobState | undefined = this.store.meta.get(keys.job(tenantId, String(key[3])));
      const kind = job?.status === 'pending' && this.kinds.get(job.type);
      if (kind && (!kind.background || this.background)) return true;
    }
    return false;
  }

  private wake(): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), 0);
  }

  /** Leases what is due and starts it; never rejects: a write it could not make waits for the next tick, later each time. */
  private async tick(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    let next = POLL_MS;
    try {
      if (this.adoptLater) {
        await this.adoptOrphans();
        this.adoptLater = false;
      }
      await this.diskWaits.wakeIfSpace();
      while (!this.stopped && this.running.size < CONCURRENCY) {
        const job = await this.lease();
        if (!job) break;
        const done = this.run(job)
          .catch((err) => logProblem('job_error', err, { job_id: job.job_id, type: job.type }))
          .finally(() => {
            this.running.delete(job.job_id);
            this.wake();
          });
        this.running.set(job.job_id, done);
      }
      this.queueFailures = 0;
    } catch (err) {
      if (this.queueFailures++ === 0) logProblem('job_queue_stalled', err);
      next = err instanceof DiskFull ? diskBackoffMs(this.queueFailures) : backoffMs(this.queueFailures);
    }
    if (!this.stopped && !this.timer) {
      this.timer = setTimeout(() => void this.tick(), next);
      this.timer.unref();
    }
  }

  /**
   * In a process that leaves background jobs (a local command), runs the due ones `pick` chooses
   * now, because their result is needed; a long-running process already has them in hand.
   */
  async runDeferred(pick: (job: JobState) => boolean): Promise<void> {
    if (this.background) return;
    while (!this.stopped) {
      const job = await this.lease(pick);
      if (!job) return;
      const done = this.run(job).finally(() => this.running.delete(job.job_id));
      this.running.set(job.job_id, done);
      await done;
    }
  }

  /**
   * Moves the first due job this process can run from the queue to `running`, in one transaction;
   * with `pick`, the first due job it chooses, background kinds included.
   */
  private async lease(pick?: (job: JobState) => boolean): Promise<JobState | null> {
    let taken: string | undefined;
    try {
      return await this.leaseIn(pick, (serial) => (taken = serial));
    } catch (err) {
      if (taken) this.busyKeys.delete(taken); // the commit failed (a full disk): the job was never taken
      throw err;
    }
  }

  private leaseIn(pick: ((job: JobState) => boolean) | undefined, took: (serial: string) => void): Promise<JobState | null> {
    return this.store.meta.transaction(() => {
      for (const { key, value: tenantId } of scanPrefix<string>(this.store.meta, keys.jobQueue(SYSTEM))) {
        if ((key[2] as number) > Date.now()) return null;
        const job: JobState | undefined = this.store.meta.get(keys.job(tenantId, String(key[3])));
        if (!job || job.status !== 'pending') {
          this.store.meta.remove(key); // its job is gone (tenant deleted) or already ended
          continue;
        }
        const kind = this.kinds.get(job.type);
        if (!kind || (pick ? !pick(job) : kind.background && !this.background)) continue;
        const serial = kind.serialKey?.(job);
        if (serial && this.busyKeys.has(serial)) continue;
        if (serial) {
          this.busyKeys.add(serial);
          took(serial);
        }
        this.store.meta.remove(key);
        const at = now();
        Object.assign(job, {
          status: 'running', attempts: job.attempts + 1, started_at: job.started_at ?? at, updated_at: at,
          lease_owner: this.owner, lease_expires_at: new Date(Date.now() + LEASE_MS).toISOString(),
        });
        this.store.meta.put(keys.job(tenantId, job.job_id), job);
        return job;
      }
      return null;
    });
  }

  private async run(job: JobState): Promise<void> {
    const kind = this.kinds.get(job.type)!;
    const serial = kind.serialKey?.(job);
    // a job whose record is gone went with its tenant: it stops as a cancelled one does
    const ctx: JobContext = {
      cancelled: () => {
        const current: JobState | undefined = this.store.meta.get(keys.job(job.tenant_id, job.job_id));
        return current ? Boolean(current.cancel_requested) : true;
      },
    };
    let outcome: Partial<JobState>;
    this.runningTypes.set(job.type, (this.runningTypes.get(job.type) ?? 0) + 1);
    try {
      // a job that met a full disk runs again only once there is room: else it waits again, cheaply
      if ((job.disk_waits ?? 0) > 0 && !kind.freesSpace) this.space.check(`job ${job.job_id}`);
      const result = await kind.handler(job, ctx);
      outcome = { status: ctx.cancelled() ? 'cancelled' : 'succeeded', result: result ?? job.result, error_message: null, disk_waits: 0 };
    } catch (err) {
      outcome = this.failure(job, err, ctx.cancelled());
    } finally {
      if (serial) this.busyKeys.delete(serial);
      this.runningTypes.set(job.type, this.runningTypes.get(job.type)! - 1);
    }
    if (outcome.disk_waits) this.diskWaits.add(job, outcome.next_attempt_at!);
    const ended = await this.record(job, outcome);
    if (ended) this.events.emit(job.job_id, ended);
  }

  /** What a failed attempt leads to: a wait for disk space, a retry with backoff, or the end. */
  private failure(job: JobState, err: unknown, cancelled: boolean): Partial<JobState> {
    const message = (err as Error).message;
    if (err instanceof DiskFull && !cancelled) {
      // not an attempt used up: the job is fine, the disk is not
      const waits = (job.disk_waits ?? 0) + 1;
      return { status: 'pending', attempts: job.attempts - 1, disk_waits: waits, error_message: message, next_attempt_at: new Date(Date.now() + diskBackoffMs(waits)).toISOString() };
    }
    if (err instanceof Interrupted && !cancelled) return { status: 'pending', attempts: job.attempts - 1, error_message: message, next_attempt_at: new Date().toISOString() };
    const retry = !(err instanceof Permanent) && !cancelled && job.attempts < job.max_attempts;
    return retry
      ? { status: 'pending', error_message: message, disk_waits: 0, next_attempt_at: new Date(Date.now() + backoffMs(job.attempts - 1)).toISOString() }
      : { status: cancelled ? 'cancelled' : 'failed', error_message: message };
  }

  /**
   * Stores how the attempt ended. On a full disk a server tries again, later each time, until it
   * can or the queue stops; a job whose end could not be stored stays `running` in the store and is
   * taken up again when the data dir is next opened.
   */
  private async record(job: JobState, outcome: Partial<JobState>): Promise<JobState | null> {
    for (let failures = 1; ; failures++) {
      const at = now();
      try {
        return await this.store.meta.transaction(() => {
          const current: JobState | undefined = this.store.meta.get(keys.job(job.tenant_id, job.job_id));
          if (!current) return { ...job, ...outcome } as JobState; // deleted with its tenant meanwhile
          const next: JobState = { ...current, ...job, ...outcome, cancel_requested: current.cancel_requested, lease_owner: null, lease_expires_at: null, updated_at: at };
          if (next.status === 'pending') this.store.meta.put(keys.jobQueue(SYSTEM, Date.parse(next.next_attempt_at!), job.job_id), job.tenant_id);
          else next.completed_at = at;
          this.store.meta.put(keys.job(job.tenant_id, job.job_id), next);
          return next;
        });
      } catch (err) {
        if (failures === 1) logProblem('job_outcome_not_stored', err, { job_id: job.job_id, type: job.type });
        // a local command does not wait for space on its way out: the next open takes the job up
        if (!(err instanceof DiskFull) || !this.background) return null;
        try {
          await sleep(diskBackoffMs(failures), undefined, { signal: this.halt.signal });
        } catch {
          return null; // stopping
        }
      }
    }
  }
}
