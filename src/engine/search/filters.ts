import { LIMITS } from '../../api/limits.js';
import { Invalid, type Loc } from '../errors.js';
import type { TimeFilter, WhereItem } from '../../api/search.js';
import type { StoredRecord } from '../records.js';
import { anyValue, equalsTest, fieldGetter, orderTest, parseDate, toEpochMs, toNumber } from './fieldValue.js';

export type { TimeFilter, WhereItem };
export type WhereOp = WhereItem['op'];

type Predicate = (rec: StoredRecord) => boolean;
type ValueTest = (v: unknown) => boolean;
type Issue = Invalid['issues'][number];

const OPS = new Set<string>(['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'nin', 'exists', 'prefix', 'contains']);
const DURATION = /^(\d+)(s|m|h|d|w)$/;
const UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** One predicate for `where` and `time` together, or null when neither filters anything. Every problem is reported at once. */
export function compileFilters(where: WhereItem[] | undefined, time: TimeFilter | null | undefined, now: Date): Predicate | null {
  const issues: Issue[] = [];
  const predicates: Predicate[] = [];
  (where ?? []).forEach((item, i) => {
    const p = compileWhere(item, ['body', 'where', i], issues);
    if (p !== null) predicates.push(p);
  });
  const t = time ? compileTime(time, now, issues) : null;
  if (t !== null) predicates.push(t);
  if (issues.length > 0) throw new Invalid(issues[0].msg, issues);
  if (predicates.length === 0) return null;
  if (predicates.length === 1) return predicates[0];
  return (rec) => {
    for (const p of predicates) if (!p(rec)) return false;
    return true;
  };
}

function compileWhere(item: WhereItem, loc: Loc, issues: Issue[]): Predicate | null {
  const start = issues.length;
  if (typeof item?.field !== 'string' || item.field === '') {
    issues.push({ loc: [...loc, 'field'], msg: 'field must be a non-empty string', type: 'value_error', input: item?.field });
  }
  if (!OPS.has(item?.op)) {
    issues.push({ loc: [...loc, 'op'], msg: `op must be one of ${[...OPS].join(', ')}`, type: 'value_error', input: item?.op });
    return null;
  }
  const test = valueTest(item.op, item.value, (msg) => {
    issues.push({ loc: [...loc, 'value'], msg, type: 'value_error', input: item.value });
    return null;
  });
  if (issues.length > start || test === null) return null;
  const get = fieldGetter(item.field);
  return (rec) => test(get(rec));
}

/** A test of a field's value (undefined when absent) for one operator; null after reporting a bad value. */
function valueTest(op: WhereOp, value: unknown, fail: (msg: string) => null): ValueTest | null {
  switch (op) {
    case 'eq':
    case 'ne': {
      if (!isScalar(value)) return fail(`${op} needs a string, number, boolean or null value`);
      if (tooLong(value)) return fail(`the value is longer than ${LIMITS.whereValue} characters`);
      // eq null asks "has no value", so a missing field counts too
      if (value === null) return op === 'eq' ? (v) => !present(v) : present;
      const eq = equalsTest(value);
      return op === 'eq' ? (v) => anyValue(v, eq) : (v) => !anyValue(v, eq);
    }
    case 'in':
    case 'nin': {
      if (!Array.isArray(value) || !value.every(isScalar)) return fail(`${op} needs an array of strings, numbers or booleans`);
      if (value.length > LIMITS.inValues) return fail(`${op} takes at most ${LIMITS.inValues} values; ${value.length} given`);
      if (value.some(tooLong)) return fail(`a value is longer than ${LIMITS.whereValue} characters`);
      const hit = oneOf(value);
      return op === 'in' ? (v) => anyValue(v, hit) : (v) => !anyValue(v, hit);
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      if (tooLong(value)) return fail(`the value is longer than ${LIMITS.whereValue} characters`);
      if (toNumber(value) === null && (typeof value !== 'string' || parseDate(value) === null)) {
        return fail(`${op} needs a number or an ISO-8601 date`);
      }
      return orderTest(value, op);
    }
    case 'exists': {
      if (value !== undefined && value !== null && typeof value !== 'boolean') return fail('exists takes true or false');
      const want = value !== false;
      return (v) => present(v) === want;
    }
    case 'prefix':
    case 'contains': {
      if (typeof value !== 'string' && typeof value !== 'number') return fail(`${op} needs a string value`);
      if (tooLong(value)) return fail(`the value is longer than ${LIMITS.whereValue} characters`);
      const needle = String(value).toLowerCase();
      const hit =
        op === 'prefix'
          ? (x: unknown) => isText(x) && String(x).toLowerCase().startsWith(needle)
          : (x: unknown) => isText(x) && String(x).toLowerCase().includes(needle);
      return (v) => anyValue(v, hit);
    }
  }
}

const tooLong = (v: unknown) => typeof v === 'string' && v.length > LIMITS.whereValue;

/**
 * `equalsTest` of any of `values`, by set lookups instead of one test per value: numbers compare
 * as numbers with numbers, other values as lower-cased text, and date strings as instants.
 */
function oneOf(values: unknown[]): ValueTest {
  const numbers = new Set<number>();
  const texts = new Set<string>();
  const nonNumericTexts = new Set<string>();
  const dates = new Set<number>();
  let nullable = false;
  for (const qv of values) {
    if (qv === null) {
      nullable = true;
      continue;
    }
    const text = String(qv).toLowerCase();
    const n = toNumber(qv);
    if (n !== null) numbers.add(n);
    else nonNumericTexts.add(text);
    texts.add(text);
    const ms = typeof qv === 'string' ? parseDate(qv) : null;
    if (ms !== null && n === null) dates.add(ms);
  }
  return (rv) => {
    if (rv === null) return nullable;
    if (rv === undefined || typeof rv === 'object') return false;
    const text = String(rv).toLowerCase();
    const n = toNumber(rv);
    if (n !== null) return numbers.has(n) || nonNumericTexts.has(text);
    if (texts.has(text)) return true;
    return dates.size > 0 && typeof rv === 'string' && dates.has(parseDate(rv) ?? NaN);
  };
}

function isScalar(v: unknown): boolean {
  return v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
}

function isText(v: unknown): boolean {
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
}

function present(v: unknown): boolean {
  return v !== undefined && v !== null && !(Array.isArray(v) && v.length === 0);
}

/** What a `time` filter keeps: `lo ≤ time < hi` of `field`; null when it bounds nothing (or is malformed: see compileFilters). */
export interface TimeRange { field: string; lo: number; hi: number }

function compileTime(time: TimeFilter, now: Date, issues: Issue[]): Predicate | null {
  const range = timeRange(time, now, issues);
  if (range === null) return null;
  const get = fieldGetter(range.field);
  const { lo, hi } = range;
  return (rec) => {
    const v = get(rec);
    const ms = toEpochMs(v);
    return ms !== null && ms >= lo && ms < hi;
  };
}

export function timeRange(time: TimeFilter, now: Date, issues: Issue[] = []): TimeRange | null {
  const loc = ['body', 'time'];
  const start = issues.length;
  if (time.field !== undefined && (typeof time.field !== 'string' || time.field === '')) {
    issues.push({ loc: [...loc, 'field'], msg: 'field must be a non-empty string', type: 'value_error', input: time.field });
  }
  const bound = (member: 'gte' | 'lt'): number | null => {
    const v = time[member];
    if (v === undefined || v === null) return null;
    const ms = typeof v === 'string' ? parseDate(v) : null;
    if (ms === null) issues.push({ loc: [...loc, member], msg: 'must be an ISO-8601 date or date-time', type: 'value_error', input: v });
    return ms;
  };
  let gte = bound('gte');
  const lt = bound('lt');
  if (time.last !== undefined && time.last !== null) {
    const m = typeof time.last === 'string' ? DURATION.exec(time.last) : null;
    if (m === null) {
      issues.push({ loc: [...loc, 'last'], msg: 'must be a duration like 30s, 15m, 24h, 7d or 2w', type: 'value_error', input: time.last });
    } else {
      const since = now.getTime() - Number(m[1]) * UNIT_MS[m[2]];
      gte = gte === null ? since : Math.max(gte, since);
    }
  }
  if (issues.length > start || (gte === null && lt === null)) return null;
  return { field: time.field ?? 'time', lo: gte ?? -Infinity, hi: lt ?? Infinity };
}
