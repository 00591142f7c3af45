import type { Hit } from '../../api/detections.js';
import { LIMITS } from '../../api/limits.js';
import type { SearchConfig } from '../../api/sources.js';
import { newId, now } from '../ids.js';
import type { StoredRecord } from '../records.js';
import { toResult } from '../search/search.js';
import { analyze } from '../text/analyzer.js';
import { type Candidate, compileMatcher, type RecordTest } from './matcher.js';
import type { StoredDetection } from './stored.js';
import { addMatch, groupOf, type GroupState, type Match, recordTimeMs, windowMs } from './threshold.js';

/** Where a rule keeps its groups: the store (on ingest, on schedule) or memory (a dry run). */
export interface Groups {
  get(group: string): GroupState;
}

export type NewHit = Omit<Hit, 'hit_id'>;

/** A search detection compiled for one dataset, at one moment (`time` filters are relative to it). */
export class Rule {
  private readonly test: RecordTest;
  private readonly pattern: RegExp | null;
  private readonly window: number;
  private readonly terms: Set<string>;

  constructor(readonly det: StoredDetection, readonly datasetId: string, config: SearchConfig, at = new Date()) {
    const req = det.query.search_request!;
    this.test = compileMatcher(req, config, at);
    this.pattern = det.threshold?.group_pattern ? new RegExp(det.threshold.group_pattern) : null;
    this.window = det.threshold ? windowMs(det.threshold.window) : 0;
    this.terms = new Set(analyze(req.text ?? ''));
  }

  matches(candidates: Candidate[]): Candidate[] {
    return candidates.filter(this.test);
  }

  /**
   * The hits `matched` (in seq order) fire. Without a threshold, one for them all; with one, a hit
   * each time a group reaches its count within the window. `load` reads a match of an earlier batch.
   */
  hits(tenantId: string, matched: Candidate[], groups: Groups, load: (d: string, seq: number) => StoredRecord | undefined): NewHit[] {
    const th = this.det.threshold;
    if (!th) {
      if (matched.length === 0) return [];
      const times = matched.map((c) => recordTimeMs(c.rec));
      return [this.hit(tenantId, null, matched.length, Math.min(...times), Math.max(...times), matched.map((c) => [this.datasetId, c.rec]))];
    }
    const here = new Map(matched.map((c) => [c.rec.seq, c.rec]));
    const out: NewHit[] = [];
    for (const c of matched) {
      const group = groupOf(th, c.rec, this.pattern);
      if (group === null) continue;
      const spent = addMatch(groups.get(group), [recordTimeMs(c.rec), this.datasetId, c.rec.seq], th.count_gte, this.window);
      if (!spent) continue;
      const end = spent[spent.length - 1]![0];
      const records = spent.slice(0, LIMITS.hitRecords).map(([, d, seq]): [string, StoredRecord | undefined] => [d, d === this.datasetId ? (here.get(seq) ?? load(d, seq)) : load(d, seq)]);
      out.push(this.hit(tenantId, th.group_by || th.group_pattern ? group : null, spent.length, end - this.window, end, records));
    }
    return out;
  }

  private hit(t: string, group: string | null, count: number, start: number, end: number, records: [string, StoredRecord | undefined][]): NewHit {
    const shown: Hit['records'] = [];
    let bytes = 0;
    for (const [d, rec] of records) {
      if (!rec) continue; // deleted since it matched
      const r = toResult(t, d, rec, 0, 'none', this.terms);
      bytes += JSON.stringify(r).length;
      if (shown.length >= LIMITS.hitRecords || (shown.length > 0 && bytes > LIMITS.hitBytes)) break;
      shown.push(r);
    }
    const det = this.det;
    return { detection_id: det.detection_id, severity: det.severity, triggered_at: now(), group_value: group, count, window_start: new Date(start).toISOString(), window_end: new Date(end).toISOString(), records: shown };
  }
}

export const withId = (hit: NewHit): Hit => ({ hit_id: newId('hit'), ...hit });

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

export type { Match };
