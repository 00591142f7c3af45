import { LIMITS } from '../../api/limits.js';
import { Invalid } from '../errors.js';
import type { AggregationSpec } from '../../api/search.js';
import type { StoredRecord } from '../records.js';
import { fieldGetter, toEpochMs, toNumber } from './fieldValue.js';

export type { AggregationSpec };
export type AggregationType = AggregationSpec['type'];

export interface Aggregator {
  add(rec: StoredRecord): void;
  result(): Record<string, unknown>;
}

type Issue = Invalid['issues'][number];
interface Bucketer {
  add(value: unknown): void;
  result(): unknown;
}

const TYPES = new Set<string>(['terms', 'date_histogram', 'histogram', 'stats', 'count']);
const DEFAULT_SIZE = 10;
const FIXED = /^(\d+)(s|m|h|d|w)$/;
const UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
// OpenSearch's calendar_interval names, as a convenience next to `1h`, `1d`…
const NAMED: Record<string, string> = { minute: '1m', hour: '1h', day: '1d', week: '1w' };
const CALENDAR = new Set(['month', '1M', 'year', '1y']);

/** Throws Invalid listing every problem in `specs`, located as `['body','aggregations',i,member]`. */
export function validateAggregations(specs: AggregationSpec[]): void {
  const issues: Issue[] = [];
  const names = new Set<string>();
  specs.forEach((spec, i) => {
    const fail = (member: string, msg: string, input: unknown) =>
      issues.push({ loc: ['body', 'aggregations', i, member], msg, type: 'value_error', input });
    if (typeof spec.name !== 'string' || spec.name === '') fail('name', 'name must be a non-empty string', spec.name);
    else if (names.has(spec.name)) fail('name', `duplicate aggregation name '${spec.name}'`, spec.name);
    else names.add(spec.name);
    if (!TYPES.has(spec.type)) {
      fail('type', `type must be one of ${[...TYPES].join(', ')}`, spec.type);
      return;
    }
    if (spec.type !== 'count' && (typeof spec.field !== 'string' || spec.field === '')) fail('field', `${spec.type} needs a field`, spec.field);
    if (spec.size !== undefined && (!Number.isInteger(spec.size) || spec.size < 1)) fail('size', 'size must be a positive integer', spec.size);
    if (spec.type === 'date_histogram' && calendarStep(spec.interval) === null) {
      fail('interval', 'date_histogram needs an interval like 1m, 5m, 1h, 1d, 1w or month', spec.interval);
    }
    if (spec.type === 'histogram' && histogramStep(spec.interval) === null) {
      fail('interval', 'histogram needs a positive numeric interval', spec.interval);
    }
  });
  if (issues.length > 0) throw new Invalid(issues[0].msg, issues);
}

/** Folds records into every aggregation in one pass; `result()` keys them by name. */
export function createAggregator(specs: AggregationSpec[]): Aggregator {
  validateAggregations(specs);
  const parts = specs.map((spec) => ({ name: spec.name, spec, get: spec.field ? fieldGetter(spec.field) : null, bucketer: bucketer(spec) }));
  return {
    add(rec) {
      for (const p of parts) p.bucketer.add(p.get === null ? rec : p.get(rec));
    },
    result() {
      const out: Record<string, unknown> = {};
      for (const p of parts) out[p.name] = p.bucketer.result();
      return out;
    },
  };
}

function bucketer(spec: AggregationSpec): Bucketer {
  switch (spec.type) {
    case 'terms':
      return terms(spec);
    case 'date_histogram':
      return dateHistogram(calendarStep(spec.interval)!, spec);
    case 'histogram':
      return histogram(histogramStep(spec.interval)!, spec);
    case 'stats':
      return stats();
    case 'count':
      return count();
  }
}

/** Each record counts once per distinct value, whether it holds one value or an array of them. */
function distinctKeys(v: unknown, key: (x: unknown) => unknown, each: (k: unknown) => void): void {
  if (!Array.isArray(v)) {
    const k = key(v);
    if (k !== null) each(k);
    return;
  }
  const seen = new Set<unknown>();
  for (const x of v) {
    const k = key(x);
    if (k !== null && !seen.has(k)) {
      seen.add(k);
      each(k);
    }
  }
}

/** Counts per key, refusing the search once there are more keys than `cap`: memory stays bounded. */
function tally(counts: Map<unknown, number>, cap: number, spec: AggregationSpec): (k: unknown) => void {
  return (k) => {
    const n = counts.get(k);
    if (n === undefined && counts.size >= cap) {
      const msg = `aggregation '${spec.name}' has more than ${cap} ${spec.type === 'terms' ? 'distinct values' : 'buckets'}: ${spec.type === 'terms' ? 'aggregate a field with fewer values, or filter first' : 'use a larger interval, or a narrower time range'}`;
      throw new Invalid(msg, [{ loc: ['body', 'aggregations'], msg, type: 'value_error', input: spec.name }]);
    }
    counts.set(k, (n ?? 0) + 1);
  };
}

function terms(spec: AggregationSpec): Bucketer {
  const size = spec.size ?? DEFAULT_SIZE;
  const counts = new Map<unknown, number>();
  const add = tally(counts, LIMITS.termsValues, spec);
  const key = (x: unknown) => (typeof x === 'string' || typeof x === 'number' || typeof x === 'boolean' ? x : null);
  return {
    add: (v) => distinctKeys(v, key, add),
    result() {
      const all = [...counts].sort((a, b) => b[1] - a[1] || compareKeys(a[0], b[0]));
      const top = all.slice(0, size);
      let other = 0;
      for (let i = size; i < all.length; i++) other += all[i][1];
      return { buckets: top.map(([k, n]) => ({ key: k, doc_count: n })), sum_other_doc_count: other };
    },
  };
}

function compareKeys(a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const as = String(a);
  const bs = String(b);
  return as < bs ? -1 : as > bs ? 1 : 0;
}

type Step = { ms: number } | { months: number };

function calendarStep(interval: unknown): Step | null {
  if (typeof interval !== 'string') return null;
  const text = NAMED[interval] ?? interval;
  if (CALENDAR.has(text)) return { months: text === 'month' || text === '1M' ? 1 : 12 };
  const m = FIXED.exec(text);
  if (m === null || Number(m[1]) === 0) return null;
  return { ms: Number(m[1]) * UNIT_MS[m[2]] };
}

// Weeks start on Monday, as OpenSearch's do; the epoch fell on a Thursday.
const MONDAY_OFFSET = 4 * 86_400_000;

function bucketStart(ms: number, step: Step): number {
  if ('months' in step) {
    const d = new Date(ms);
    const month = d.getUTCFullYear() * 12 + d.getUTCMonth();
    const start = month - (((month % step.months) + step.months) % step.months);
    return Date.UTC(Math.floor(start / 12), start % 12, 1);
  }
  const offset = step.ms % UNIT_MS.w === 0 ? MONDAY_OFFSET : 0;
  return Math.floor((ms - offset) / step.ms) * step.ms + offset;
}

function dateHistogram(step: Step, spec: AggregationSpec): Bucketer {
  const counts = new Map<unknown, number>();
  const add = tally(counts, LIMITS.buckets, spec);
  const key = (x: unknown) => {
    const ms = toEpochMs(x);
    return ms === null ? null : bucketStart(ms, step);
  };
  return {
    add: (v) => distinctKeys(v, key, add),
    result: () => ({
      buckets: [...counts]
        .sort((a, b) => (a[0] as number) - (b[0] as number))
        .map(([k, n]) => ({ key: k, key_as_string: new Date(k as number).toISOString(), doc_count: n })),
    }),
  };
}

function histogramStep(interval: unknown): number | null {
  const n = typeof interval === 'number' ? interval : typeof interval === 'string' ? toNumber(interval) : null;
  return n !== null && Number.isFinite(n) && n > 0 ? n : null;
}

/** Float-safe floor to a multiple of `step`: 0.3 with step 0.1 lands in 0.3 (not 0.2), and the key reads 0.3, not 0.30000000000000004. */
function histogramKey(n: number, step: number): number {
  let q = n / step;
  const nearest = Math.round(q);
  if (Math.abs(q - nearest) < 1e-9 * Math.max(1, Math.abs(q))) q = nearest;
  return Number((Math.floor(q) * step).toPrecision(12));
}

function histogram(step: number, spec: AggregationSpec): Bucketer {
  const counts = new Map<unknown, number>();
  const add = tally(counts, LIMITS.buckets, spec);
  const key = (x: unknown) => {
    const n = toNumber(x);
    return n === null ? null : histogramKey(n, step);
  };
  return {
    add: (v) => distinctKeys(v, key, add),
    result: () => ({
      buckets: [...counts].sort((a, b) => (a[0] as number) - (b[0] as number)).map(([k, n]) => ({ key: k, doc_count: n })),
    }),
  };
}

/** Every numeric value counts, array elements included, as OpenSearch's stats do. */
function stats(): Bucketer {
  let n = 0;
  let sum = 0;
  let min = Infinity;
  let max = -Infinity;
  const one = (x: unknown) => {
    const v = toNumber(x);
    if (v === null) return;
    n++;
    sum += v;
    if (v < min) min = v;
    if (v > max) max = v;
  };
  return {
    add(v) {
      if (Array.isArray(v)) v.forEach(one);
      else one(v);
    },
    result: () =>
      n === 0 ? { count: 0, min: null, max: null, avg: null, sum: 0 } : { count: n, min, max, avg: sum / n, sum },
  };
}

/** Counts documents; with a field, only those that hold a value for it. Without one, `add` receives the record itself. */
function count(): Bucketer {
  let value = 0;
  return {
    add(v) {
      if (v !== undefined && v !== null && !(Array.isArray(v) && v.length === 0)) value++;
    },
    result: () => ({ value }),
  };
}
