import { setImmediate as nextTurn } from 'node:timers/promises';
import type { SearchConfig } from '../../api/sources.js';
import { crashPoint } from '../crashPoint.js';
import type { JobQueue } from '../jobs/queue.js';
import { logProblem } from '../log.js';
import type { StoredRecord } from '../records.js';
import type { Store } from '../store/db.js';
import { keys } from '../store/keys.js';
import { commitOutcomes, type Outcome, storedGroups } from './evaluation.js';
import { Candidate } from './matcher.js';
import { MemoryGroups, Rule } from './rules.js';
import { triage } from './triage.js';
import type { StoredDetection } from './stored.js';
import type { Webhooks } from './webhooks.js';

/** records one evaluation step reads from the store when it catches up (an ingest batch's size) */
const STEP = 2000;
/** batches evaluation may run behind ingest: enough to overlap the two, few enough to bound memory */
const LAG = 4;
/** detections evaluated between two turns of the event loop */
const PER_TURN = 10;

export interface OnIngestDeps {
  store: Store;
  jobs: JobQueue;
  webhooks: Webhooks;
  /** the tenant's enabled on-ingest detections over a dataset */
  active: (t: string, d: string) => StoredDetection[];
  searchConfig: (t: string, d: string) => SearchConfig;
  datasetSeq: (t: string, d: string) => number;
  crashAt: string | null;
}

/**
 * Evaluates on-ingest detections against each committed batch: only the new records. Each
 * detection keeps, per dataset, the last seq it evaluated; that cursor moves in the transaction
 * that stores its hits, so a crash between the two is made up by evaluating again, once.
 * Evaluations of one tenant run one after another (its detections' groups span its datasets).
 */
export class OnIngest {
  private readonly chains = new Map<string, Promise<void>>();
  /** batches of a tenant waiting to be evaluated */
  private readonly queued = new Map<string, number>();
  constructor(private readonly deps: OnIngestDeps) {}

  /**
   * A batch just committed: evaluated behind ingest, which waits only when `LAG` batches are queued
   * (the end of the run waits for all of them, in `catchUp`). A failure here is made up there.
   */
  async added(t: string, d: string, records: StoredRecord[]): Promise<void> {
    if (records.length === 0) return;
    const queued = (this.queued.get(t) ?? 0) + 1;
    this.queued.set(t, queued);
    const done = this.chain(t, () => this.advance(t, d, records[records.length - 1]!.seq, records)).finally(() => this.queued.set(t, (this.queued.get(t) ?? 1) - 1));
    if (queued > LAG) await done;
    else done.catch(() => {});
  }

  /** Everything committed (the end of a run, the start of a server). */
  catchUp(t: string, d: string): Promise<void> {
    return this.chain(t, () => this.advance(t, d, this.deps.datasetSeq(t, d), []));
  }

  private chain(t: string, work: () => Promise<void>): Promise<void> {
    const next = (this.chains.get(t) ?? Promise.resolve()).then(work);
    const settled = next.catch(() => {});
    this.chains.set(t, settled);
    void settled.then(() => this.chains.get(t) === settled && this.chains.delete(t));
    return next;
  }

  private async advance(t: string, d: string, upto: number, batch: StoredRecord[]): Promise<void> {
    const { store } = this.deps;
    const dets = this.deps.active(t, d);
    if (dets.length === 0) return;
    const cursorOf = (det: StoredDetection): number => store.meta.get(keys.detectionCursor(t, det.detection_id, d)) ?? (batch[0] ? batch[0].seq - 1 : upto);
    for (;;) {
      const behind = dets.map(cursorOf);
      const from = Math.min(...behind) + 1;
      if (from > upto) return;
      const slice = batch.length > 0 && batch[0]!.seq <= from ? batch.filter((r) => r.seq >= from) : this.read(t, d, from, upto);
      const end = slice.length > 0 ? slice[slice.length - 1]!.seq : upto;
      // a re-parse reads lines again; a record sent again with the same content was not stored again
      const candidates = slice.filter((r) => !r.reparsed).map((r) => new Candidate(r));
      const config = this.deps.searchConfig(t, d);
      const outcomes: Outcome[] = [];
      const rules: { outcome: Outcome; since: number; rule: Rule }[] = [];
      for (const [i, det] of dets.entries()) {
        if (behind[i]! >= end) continue;
        const progress: Outcome['progress'] = [keys.detectionCursor(t, det.detection_id, d), end];
        try {
          const outcome: Outcome = { det, hits: [], groups: storedGroups(store, t, det.detection_id), progress };
          rules.push({ outcome, since: behind[i]!, rule: new Rule(det, d, config) });
          outcomes.push(outcome);
        } catch (err) {
          // a rule its dataset no longer suits: logged, and it moves on, so that it never holds the others back
          logProblem('detection_failed', err, { tenant_id: t, dataset_id: d, detection_id: det.detection_id });
          outcomes.push({ det, hits: [], groups: new MemoryGroups(), progress });
        }
      }
      const lists = triage(rules.map((r) => r.rule), candidates);
      for (const [i, { outcome, since, rule }] of rules.entries()) {
        const mine = since + 1 > from ? lists[i]!.filter((c) => c.rec.seq > since) : lists[i]!;
        outcome.hits = rule.hits(rule.matches(mine), outcome.groups);
        if (i % PER_TURN === PER_TURN - 1) await nextTurn();
      }
      crashPoint('detections:evaluated', this.deps.crashAt);
      await commitOutcomes(store, this.deps.jobs, this.deps.webhooks, t, outcomes);
      if (end >= upto) return;
    }
  }

  private read(t: string, d: string, from: number, upto: number): StoredRecord[] {
    return [...this.deps.store.records.getRange({ start: [t, d, from], end: [t, d, upto + 1], limit: STEP }).map((e) => e.value)];
  }
}
