import { setImmediate as nextTurn } from 'node:timers/promises';
import type { DetectionTestResult } from '../../api/detections.js';
import { LIMITS } from '../../api/limits.js';
import type { SearchConfig } from '../../api/sources.js';
import type { Search } from '../search/search.js';
import type { Sql } from '../sql/sql.js';
import type { Store } from '../store/db.js';
import { materialize } from './hits.js';
import { Candidate } from './matcher.js';
import { MemoryGroups, Rule } from './rules.js';
import { sqlHit } from './sqlRule.js';
import type { StoredDetection } from './stored.js';
import { recordTimeMs } from './threshold.js';

const STEP = 2000;

export interface DryRunDeps {
  store: Store;
  sql: Sql;
  search: Search;
  searchConfig: (t: string, d: string) => SearchConfig;
}

/**
 * A detection run over the records already there (those at or after `since`), in the order they
 * were committed, with its groups in memory: what it would have fired, one hit per step of records
 * without a threshold; the first `LIMITS.testHits` of them are shown. Nothing is stored and no action called. Bounded by records read and by the
 * search timeout; `complete` says whether it got to the end.
 */
export async function dryRun(det: StoredDetection, since: string | null, deps: DryRunDeps): Promise<DetectionTestResult> {
  const t = det.tenant_id;
  if (det.query.sql !== undefined) {
    const { hit, rows } = await sqlHit(deps.sql, det, since ?? new Date(0).toISOString(), new Date().toISOString());
    return { hits: hit ? [materialize(deps.store, t, hit)] : [], records_evaluated: rows, records_matched: rows, complete: true };
  }
  const sinceMs = since ? Date.parse(since) : -Infinity;
  const deadline = Date.now() + deps.search.limits.timeoutMs;
  const groups = new MemoryGroups();
  const hits: DetectionTestResult['hits'] = [];
  let evaluated = 0;
  let matched = 0;
  for (const d of det.datasets) {
    const rule = new Rule(det, d, deps.searchConfig(t, d));
    let from = 1;
    for (;;) {
      if (evaluated >= LIMITS.detectionTestRecords || Date.now() > deadline) return { hits, records_evaluated: evaluated, records_matched: matched, complete: false };
      const records = [...deps.store.records.getRange({ start: [t, d, from], end: [t, d, Number.MAX_SAFE_INTEGER], limit: STEP }).map((e) => e.value)];
      if (records.length === 0) break;
      from = records[records.length - 1]!.seq + 1;
      const candidates = records.filter((r) => recordTimeMs(r) >= sinceMs).map((r) => new Candidate(r));
      evaluated += candidates.length;
      const found = rule.matches(candidates);
      matched += found.length;
      for (const h of rule.hits(found, groups)) if (hits.length < LIMITS.testHits) hits.push(materialize(deps.store, t, h));
      await nextTurn();
    }
  }
  return { hits, records_evaluated: evaluated, records_matched: matched, complete: true };
}
