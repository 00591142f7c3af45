import type { Detection, DetectionCreate, Hit, DetectionList, DetectionListQuery, DetectionTest, DetectionTestResult, HitList, HitListQuery } from '../../api/detections.js';
import { LIMITS } from '../../api/limits.js';
import type { Caller } from '../auth/caller.js';
import type { Datasets } from '../datasets/datasets.js';
import { Invalid, NotFound } from '../errors.js';
import { newId, now } from '../ids.js';
import type { JobQueue } from '../jobs/queue.js';
import type { Search } from '../search/search.js';
import type { Sources } from '../sources/sources.js';
import type { Sql } from '../sql/sql.js';
import { type Key, MAX_KEY, newestFirst, prefixRange, scanPrefix, type Store } from '../store/db.js';
import { keys } from '../store/keys.js';
import { checkDefinition } from './definition.js';
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

  private active(t: string, d: string): StoredDetection[] {
    return this.all(t).filter((det) => det.enabled && det.trigger.on_ingest && det.datasets.includes(d));
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
    if (this.all(t).length >= LIMITS.detections) throw new Invalid(`a tenant holds at most ${LIMITS.detections} detections`, [{ loc: ['body'], msg: `a tenant holds at most ${LIMITS.detections} detections: delete one first`, type: 'value_error' }]);
    const at = now();
    const det = await checkDefinition(caller, req, { datasets: this.datasets, search: this.search, sql: this.sql });
    const made: StoredDetection = { ...det, detection_id: newId('det'), tenant_id: t, version: 1, created_at: at, updated_at: at };
    await this.store.meta.transaction(() => this.start(made));
    return this.view(made);
  }

  async update(caller: Caller, id: string, req: DetectionCreate): Promise<Detection> {
    const old = this.stored(caller.tenant_id, id);
    const det = await checkDefinition(caller, req, { datasets: this.datasets, search: this.search, sql: this.sql });
    const made: StoredDetection = { ...det, detection_id: id, tenant_id: old.tenant_id, version: old.version + 1, created_at: old.created_at, updated_at: now() };
    // the new version first: from here an evaluation of the old one stores nothing
    await this.store.meta.put(keys.detection(caller.tenant_id, id), made);
    await this.clearState(caller.tenant_id, id);
    await this.store.meta.transaction(() => this.start(made));
    return this.view(made);
  }

  /**
   * Inside a transaction: stores the detection and where it starts. It looks at records committed
   * from now on (an update starts afresh: its groups and cursors go); a cron detection's first
   * run covers the records since.
   */
  private start(det: StoredDetection): void {
    const t = det.tenant_id;
    this.store.meta.put(keys.detection(t, det.detection_id), det);
    const seqs = Object.fromEntries(det.datasets.map((d) => [d, this.datasets.state(t, d).seq]));
    if (det.trigger.on_ingest) for (const [d, seq] of Object.entries(seqs)) this.store.meta.put(keys.detectionCursor(t, det.detection_id, d), seq);
    if (det.trigger.cron && det.enabled) this.scheduled.schedule(det, { cutoffs: seqs, cutoff_at: now(), last_run_at: null, next_run_at: null });
  }

  /** Removes a detection's cursors, groups and schedule (not its hits), a bounded batch per transaction. */
  private async clearState(t: string, id: string): Promise<void> {
    for (const prefix of [keys.detectionCursor(t, id), keys.detectionGroup(t, id)]) await this.removePrefix(prefix);
    await this.store.meta.remove(keys.detectionSchedule(t, id));
  }

  private async removePrefix(prefix: Key): Promise<void> {
    for (;;) {
      const batch = [...this.store.meta.getKeys({ ...prefixRange(prefix), limit: REMOVE_BATCH })];
      if (batch.length === 0) return;
      await this.store.meta.transaction(() => batch.forEach((k) => this.store.meta.remove(k)));
    }
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
    await this.clearState(caller.tenant_id, id);
    await this.removePrefix(keys.hit(caller.tenant_id, id));
    return this.view(det);
  }

  /** A detection's hits, newest first; `since` keeps those triggered at or after it. */
  hits(caller: Caller, id: string, q: HitListQuery = {}): HitList {
    this.stored(caller.tenant_id, id);
    const since = q.since ? new Date(q.since).toISOString() : null;
    const page = newestFirst<Hit>(this.store.meta, keys.hit(caller.tenant_id, id), q.cursor, q.limit ?? 50, since ? (h) => h.triggered_at >= since : undefined);
    return { hits: page.values, next_cursor: page.next };
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
