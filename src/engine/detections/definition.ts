import safeRegex from 'safe-regex2';
import type { DetectionCreate } from '../../api/detections.js';
import type { Caller } from '../auth/caller.js';
import type { Datasets } from '../datasets/datasets.js';
import { Invalid, NotFound, Refused, type Issue } from '../errors.js';
import type { Search } from '../search/search.js';
import { searchMode } from '../search/search.js';
import type { Sql } from '../sql/sql.js';
import { analyze } from '../text/analyzer.js';
import { cronIssue } from './cron.js';
import { MAX_WINDOW_MS, windowMs } from './threshold.js';
import type { StoredDetection } from './stored.js';

type Definition = Omit<StoredDetection, 'detection_id' | 'tenant_id' | 'version' | 'created_at' | 'updated_at'>;

/** `$since` / `$until` a SQL detection's statement names: the ones a run binds. */
export function sqlParamsOf(sql: string): string[] {
  return ['since', 'until'].filter((p) => new RegExp(`\\$${p}\\b`).test(sql));
}

/**
 * A detection's definition checked as a whole (422 naming each problem), and normalized: its
 * search runs over its datasets, with no typo expansion (a rule fires on the words it names).
 */
export async function checkDefinition(caller: Caller, req: DetectionCreate, deps: { datasets: Datasets; search: Search; sql: Sql }): Promise<Definition> {
  const issues: Issue[] = [];
  const bad = (loc: (string | number)[], msg: string, input?: unknown) => issues.push({ loc: ['body', ...loc], msg, type: 'value_error', ...(input === undefined ? {} : { input }) });
  const { query, trigger, threshold } = req;
  req.datasets.forEach((d, i) => {
    try {
      deps.datasets.state(caller.tenant_id, d);
    } catch (err) {
      if (!(err instanceof NotFound)) throw err;
      bad(['datasets', i], `dataset '${d}' not found`, d);
    }
  });
  if ((query.sql === undefined) === (query.search_request === undefined)) bad(['query'], 'exactly one of search_request and sql');
  if (!trigger.on_ingest && !trigger.cron) bad(['trigger'], 'a detection runs on ingest, on a cron schedule, or both: set on_ingest or cron');
  if (trigger.cron) {
    const why = cronIssue(trigger.cron, trigger.timezone);
    if (why) bad(['trigger', trigger.timezone && why.includes('zone') ? 'timezone' : 'cron'], why);
  }
  if (threshold?.group_by && threshold.group_pattern) bad(['threshold'], 'group_by or group_pattern, not both');
  if (threshold && windowMs(threshold.window) > MAX_WINDOW_MS) bad(['threshold', 'window'], 'a window spans at most 30 days', threshold.window);
  if (threshold?.group_pattern) {
    const why = patternIssue(threshold.group_pattern);
    if (why) bad(['threshold', 'group_pattern'], why, threshold.group_pattern);
  }
  const sr = query.search_request;
  if (sr) {
    if (trigger.on_ingest && trigger.cron) bad(['trigger'], 'a search detection runs on ingest or on a schedule, not both (on ingest it already sees every record once)');
    if (searchMode(sr) !== 'text') bad(['query', 'search_request', 'mode'], 'a detection tests each record on its own: semantic and hybrid searches rank, they do not match');
    for (const k of ['aggregations', 'collapse', 'cursor', 'sort'] as const) if (sr[k]) bad(['query', 'search_request', k], `a detection takes no ${k}`);
    if (sr.text?.trim() && analyze(sr.text).length === 0) bad(['query', 'search_request', 'text'], 'text has no searchable terms (only stop words or punctuation)');
  }
  if (query.sql !== undefined) {
    if (trigger.on_ingest) bad(['trigger', 'on_ingest'], 'a SQL detection runs on its cron schedule only: on_ingest takes a search_request');
    if (threshold) bad(['threshold'], 'a SQL detection counts in its statement (GROUP BY … HAVING): every row it returns is a match');
  }
  if (issues.length) throw new Invalid(issues[0]!.msg, issues);

  // what only running the checks of a search or the SQL guard can tell
  if (sr) {
    try {
      deps.search.check(sr);
    } catch (err) {
      if (err instanceof Invalid) throw new Invalid(err.message, err.issues.map((i) => ({ ...i, loc: ['body', 'query', 'search_request', ...i.loc.slice(1)] })));
      throw err;
    }
  } else {
    const params = Object.fromEntries(sqlParamsOf(query.sql!).map((p) => [p, null]));
    await deps.sql.check(caller, query.sql!, params).catch((err: unknown) => {
      if (err instanceof Refused && err.status === 400) throw new Invalid(err.message, [{ loc: ['body', 'query', 'sql'], msg: err.message, type: 'value_error' }]);
      throw err;
    });
  }
  const search_request = sr ? { ...sr, datasets: req.datasets, max_expansion_terms: 0, limit: undefined } : undefined;
  return {
    name: req.name,
    description: req.description ?? null,
    severity: req.severity,
    enabled: req.enabled ?? true,
    datasets: req.datasets,
    query: search_request ? { search_request } : { sql: query.sql },
    trigger: { on_ingest: trigger.on_ingest, cron: trigger.cron ?? null, timezone: trigger.cron ? (trigger.timezone ?? 'UTC') : null },
    threshold: threshold ?? null,
    actions: req.actions ?? [],
  };
}

function patternIssue(source: string): string | null {
  let re: RegExp;
  try {
    re = new RegExp(source);
  } catch (e) {
    return `bad regular expression: ${(e as Error).message}`;
  }
  // JavaScript's engine backtracks: a nested repetition can take minutes on one line
  if (!safeRegex(re)) return 'the pattern repeats a repetition (such as (a+)+), which can take exponential time: write it without';
  if (new RegExp(`${source}|`).exec('')!.length < 2) return 'the pattern needs one capture group: its text is the group value';
  return null;
}
