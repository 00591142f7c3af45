import { LIMITS } from '../../api/limits.js';
import type { SearchConfig } from '../../api/sources.js';
import { newId, now } from '../ids.js';
import type { RecordRef, StoredHit } from './hits.js';
import { type Candidate, compileMatcher, type RecordTest } from './matcher.js';
import type { StoredDetection } from './stored.js';
import { addMatch, groupOf, type GroupState, windowMs } from './threshold.js';

/** Where a rule keeps its groups: the store (on ingest, on schedule) or memory (a dry run). */
export interface Groups {
  get(group: string): GroupState;
}

export type NewHit = Omit<StoredHit, 'hit_id'>;

/** A search detection compiled for one dataset, at one moment (`time` filters are relative to it). */
export class Rule {
  private readonly test: RecordTest;
  /** terms of which every record it matches holds one in its title or body, when known */
  readonly needs: string[] | null;
  private readonly pattern: RegExp | null;
  private readonly window: number;

  constructor(readonly det: StoredDetection, readonly datasetId: string, config: SearchConfig, at = new Date()) {
    const req = det.query.search_request!;
    ({ test: this.test, needs: this.needs } = compileMatcher(req, config, at));
    this.pattern = det.threshold?.group_pattern ? new RegExp(det.threshold.group_pattern) : null;
    this.window = det.threshold ? windowMs(det.threshold.window) : 0;
  }

  matches(candidates: Candidate[]): Candidate[] {
    return candidates.filter(this.test);
  }

  /**
   * The hits `matched` (in seq order) fire. Without a threshold, one for them all; with one, a hit
   * each time a group reaches its count within the window.
   */
  hits(matched: Candidate[], groups: Groups): NewHit[] {
    const th = this.det.threshold;
    const d = this.datasetId;
    if (!th) {
      if (matched.length === 0) return [];
      let [start, end] = [Infinity, -Infinity];
      for (const c of matched) [start, end] = [Math.min(start, c.time), Math.max(end, c.time)];
      return [this.hit(null, matched.length, start, end, matched.slice(0, LIMITS.hitRecords).map((c) => [d, c.rec.seq]))];
    }
    const out: NewHit[] = [];
    for (const c of matched) {
      const group = groupOf(th, c.rec, this.pattern);
      if (group === null) continue;
      const spent = addMatch(groups.get(group), [c.time, d, c.rec.seq], th.count_gte, this.window);
      if (!spent) continue;
      const end = spent[spent.length - 1]![0];
      out.push(this.hit(th.group_by || th.group_pattern ? group : null, spent.length, end - this.window, end, spent.slice(0, LIMITS.hitRecords).map(([, ds, seq]) => [ds, seq])));
    }
    return out;
  }

  private hit(group: string | null, count: number, start: number, end: number, refs: RecordRef[]): NewHit {
    const det = this.det;
    return { detection_id: det.detection_id, severity: det.severity, triggered_at: now(), group_value: group, count, window_start: new Date(start).toISOString(), window_end: new Date(end).toISOString(), refs };
  }
}

export const withId = (hit: NewHit): StoredHit => ({ hit_id: newId('hit'), ...hit });

/** Groups held in memory: what a dry run uses, and what a store-backed one starts from. */
export class MemoryGroups implements Groups {
  readonly touched = new Map<string, GroupState>();
  constructor(private readonly read: (group: string) => GroupState | undefined = () => undefined) {}
  get(group: string): GroupState {
    let s = this.touched.get(group);
    if (!s) this.touched.set(group, (s = this.read(group) ?? { matches: [] }));
    return s;
  }
}

