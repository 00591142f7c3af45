import type { Detection, DetectionCreate, DetectionList, DetectionListQuery, DetectionTest, DetectionTestResult, HitList, HitListQuery } from '../../api/detections.js';
import { LIMITS } from '../../api/limits.js';
import type { Caller } from '../auth/caller.js';
import type { Datasets } from '../datasets/datasets.js';
import { Conflict, Invalid, NotFound } from '../errors.js';
import { newId, now } from '../ids.js';
import type { JobQueue } from '../jobs/queue.js';
import type { Search } from '../search/search.js';
import type { Sources } from '../sources/sources.js';
import type { Sql } from '../sql/sql.js';
import { type Key, MAX_KEY, newestFirst, prefixRange, removePrefixInBatches, scanPrefix, type Store } from '../store/db.js';
import { keys } from '../store/keys.js';
import { checkDefinition } from './definition.js';
import { materialize, type StoredHit } from './hits.js';
import { dryRun } from './dryRun.js';
import { OnIngest } from './onIngest.js';
import { Scheduled, type ScheduleState } from './scheduled.js';
import type { StoredDetection } from './stored.js';
import { type GroupState, windowMs } from './threshold.js';
import { Webhooks } from './webhooks.js';

/** keys one transaction removes when a detection goes */
const REMOVE_BATCH = 1000;

/**
 * Detections: saved searches (or SQL statements) that fire hits on ingest or on a schedule, and
 * call webhooks. Stored under `[t, 'det', id]`; hits under `[t, 'hit', id, hit id]`.
 */
export class Detections {
  readonly onIngest: OnIngest;
  private readonly webhooks: Webhooks;
  private readonly scheduled: Scheduled;

  constructor(
    private readonly store: Store,
    jobs: JobQueue,
    private readonly datasets: Datasets,
    private readonly sources: Sources,
    private readonly search: Search,
    private readonly sql: Sql,
    crashAt: string | null,
  ) {
    this.webhooks = new Webhooks(store, jobs);
    const searchConfig = (t: string, d: string) => sources.searchConfig(t, d);
    const datasetSeq = (t: string, d: string) => this.datasets.state(t, d).seq;
    this.onIngest = new OnIngest({ store, jobs, webhooks: this.webhooks, active: (t, d) => this.active(t, d), searchConfig, datasetSeq, crashAt });
    this.scheduled = new Scheduled({ store, jobs, webhooks: this.webhooks, sql, searchConfig, datasetSeq });
  }

  private all(t: string): StoredDetection[] {
    return [...scanPrefix<StoredDetection>(this.store.meta, keys.detection(t))].map((e) => e.value);
  }

  /** a tenant's on-ingest detections as last read: every batch asks, a change of definitions drops it */
  private readonly onIngestCache = new Map<string, StoredDetection[]>();

  private active(t: string, d: string): StoredDetection[] {
    let dets = this.onIngestCache.get(t);
    if (!dets) this.onIngestCache.set(t, (dets = this.all(t).filter((det) => det.enabled && det.trigger.on_ingest)));
    return dets.filter((det) => det.datasets.includes(d));
  }

  private stored(t: string, id: string): StoredDetection {
    const det: StoredDetection | undefined = this.store.meta.get(keys.detection(t, id));
    if (!det) throw new NotFound(`detection '${id}' not found`);
    return det;
  }

  private view(det: StoredDetection): Detection {
    const { tenant_id: _t, version: _v, actions, ...rest } = det;
    const sched: ScheduleState | undefined = this.store.meta.get(keys.detectionSchedule(det.tenant_id, det.detection_id));
    return {
      ...rest,
      actions: actions.map((a) => ({ type: a.type, url: a.url, secret_set: Boolean(a.secret) })),
      next_run_at: det.trigger.cron && det.enabled ? (sched?.next_run_at ?? null) : null,
      last_run_at: sched?.last_run_at ?? null,
    };
  }

  async create(caller: Caller, req: DetectionCreate): Promise<Detection> {
    const t = caller.tenant_id;
    const det = await checkDefinition(caller, req, { datasets: this.datasets, search: this.search, sql: this.sql });
    const at = now();
    const made: StoredDetection = { ...det, detection_id: newId('det'), tenant_id: t, version: 1, created_at: at, updated_at: at };
    // counted where it is written: two creates at once cannot pass the cap together
    const full = await this.store.meta.transaction(() => {
      if (this.store.meta.getKeysCount(prefixRange(keys.detection(t))) >= LIMITS.detections) return true;
      this.start(made, this.seqs(made));
      return false;
    });
    this.onIngestCache.delete(t);
    if (full) throw new Invalid(`a tenant holds at most ${LIMITS.detections} detections`, [{ loc: ['body'], msg: `a tenant holds at most ${LIMITS.detections} detections: delete one first`, type: 'value_error' }]);
    return this.view(made);
  }

  async update(caller: Caller, id: string, req: DetectionCreate): Promise<Detection> {
    const t = caller.tenant_id;
    const old = this.stored(t, id);
    const det = await checkDefinition(caller, req, { datasets: this.datasets, search: this.search, sql: this.sql });
    const made: StoredDetection = { ...det, detection_id: id, tenant_id: old.tenant_id, version: old.version + 1, created_at: old.created_at, updated_at: now() };
    // the new version first, unless another change came between: from here an evaluation of the old one stores nothing
    const current = await this.store.meta.transaction(() => {
      const cur: StoredDetection | undefined = this.store.meta.get(keys.detection(t, id));
      if (cur?.version === old.version) this.store.meta.put(keys.detection(t, id), made);
      return cur;
    });
    this.onIngestCache.delete(t);
    if (!current) throw new NotFound(`detection '${id}' not found`);
    if (current.version !== old.version) throw new Conflict(`detection '${id}' changed while this update was checked: read it again`);
    await this.clearState(t, id);
    await this.store.meta.transaction(() => {
      const seqs = this.seqs(made);
      if ((this.store.meta.get(keys.detection(t, id)) as StoredDetection | undefined)?.version === made.version) this.start(made, seqs);
    });
    return this.view(made);
  }

  /** Each dataset's last seq now (read before anything is written: a dataset gone throws first). */
  private seqs(det: StoredDetection): Record<string, number> {
    return Object.fromEntries(det.datasets.map((d) => [d, this.datasets.state(det.tenant_id, d).seq]));
  }

  /**
   * Inside a transaction: stores the detection and where it starts. It looks at records committed
   * after `seqs` (an update starts afresh: its groups and cursors went); a cron detection's first
   * run covers the records since.
   */
  private start(det: StoredDetection, seqs: Record<string, number>): void {
    const t = det.tenant_id;
    this.store.meta.put(keys.detection(t, det.detection_id), det);
    if (det.trigger.on_ingest) for (const [d, seq] of Object.entries(seqs)) this.store.meta.put(keys.detectionCursor(t, det.detection_id, d), seq);
    if (det.trigger.cron && det.enabled) this.scheduled.schedule(det, { cutoffs: seqs, cutoff_at: now(), last_run_at: null, next_run_at: null });
  }

  /** At a server's start: every enabled cron detection has its next run waiting (a crash or a failed run may have left none). */
  async ensureSchedules(t: string): Promise<void> {
    for (const det of this.all(t)) {
      if (!det.enabled || !det.trigger.cron || this.scheduled.waiting(det)) continue;
      await this.store.meta.transaction(() => {
        const seqs = this.seqs(det);
        const state: ScheduleState | undefined = this.store.meta.get(keys.detectionSchedule(t, det.detection_id));
        this.scheduled.schedule(det, state ?? { cutoffs: seqs, cutoff_at: now(), last_run_at: null, next_run_at: null });
      });
    }
  }

  /** Removes a detection's cursors, groups and schedule (not its hits), a bounded batch per transaction. */
  private async clearState(t: string, id: string): Promise<void> {
    for (const prefix of [keys.detectionCursor(t, id), keys.detectionGroup(t, id)]) await removePrefixInBatches(this.store.meta, prefix);
    await this.store.meta.remove(keys.detectionSchedule(t, id));
  }


  list(caller: Caller, q: DetectionListQuery = {}): DetectionList {
    const page = newestFirst<StoredDetection>(this.store.meta, keys.detection(caller.tenant_id), q.cursor, q.limit ?? 100);
    return { detections: page.values.map((d) => this.view(d)), next_cursor: page.next };
  }

  get(caller: Caller, id: string): Detection {
    return this.view(this.stored(caller.tenant_id, id));
  }

  async remove(caller: Caller, id: string): Promise<Detection> {
    const det = this.stored(caller.tenant_id, id);
    await this.store.meta.remove(keys.detection(caller.tenant_id, id)); // from here nothing evaluates it; the rest is clean-up
    this.onIngestCache.delete(caller.tenant_id);
    await this.clearState(caller.tenant_id, id);
    await removePrefixInBatches(this.store.meta, keys.hit(caller.tenant_id, id));
    return this.view(det);
  }

  /** A detection's hits, newest first; `since` keeps those triggered at or after it. */
  hits(caller: Caller, id: string, q: HitListQuery = {}): HitList {
    this.stored(caller.tenant_id, id);
    const since = q.since ? new Date(q.since).toISOString() : '';
    // newest first: the first hit older than `since` ends the list
    const page = newestFirst<StoredHit>(this.store.meta, keys.hit(caller.tenant_id, id), q.cursor, q.limit ?? 50, undefined, (h) => h.triggered_at < since);
    return { hits: page.values.map((h) => materialize(this.store, caller.tenant_id, h)), next_cursor: page.next };
  }

  /** What the detection would fire over the records already there (since `since`): nothing stored, no action called. */
  test(caller: Caller, id: string, req: DetectionTest = {}): Promise<DetectionTestResult> {
    const det = this.stored(caller.tenant_id, id);
    return dryRun(det, req.since ?? null, { store: this.store, sql: this.sql, searchConfig: (t, d) => this.sources.searchConfig(t, d), search: this.search });
  }

  /**
   * Upkeep: groups untouched for longer than their window (and an hour) hold only stale matches;
   * a detection keeps its newest `LIMITS.hitsKept` hits.
   */
  async sweep(tenants: string[], nowMs: number): Promise<void> {
    for (const t of tenants) {
      for (const det of this.all(t)) {
        const stale = det.threshold ? nowMs - windowMs(det.threshold.window) - 3_600_000 : -Infinity;
        const groups = [...scanPrefix<GroupState>(this.store.meta, keys.detectionGroup(t, det.detection_id))].filter((e) => (e.value.touched ?? 0) < stale).map((e) => e.key);
        const hits = [...this.store.meta.getKeys({ start: [...keys.hit(t, det.detection_id), MAX_KEY], end: keys.hit(t, det.detection_id), reverse: true, offset: LIMITS.hitsKept })] as Key[];
        const gone = [...groups, ...hits];
        for (let i = 0; i < gone.length; i += REMOVE_BATCH) await this.store.meta.transaction(() => gone.slice(i, i + REMOVE_BATCH).forEach((k) => this.store.meta.remove(k)));
      }
    }
  }
}
