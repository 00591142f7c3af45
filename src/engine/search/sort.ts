import type { SortKey } from '../../api/search.js';
import { Invalid } from '../errors.js';
import type { StoredRecord } from '../records.js';
import type { RankedHit } from './handles.js';
import { fieldGetter, parseDate, TIME_ALIASES, toEpochMs, toNumber } from './fieldValue.js';

type Issue = Invalid['issues'][number];

/** The kinds of a sort value, in ascending order across kinds; a record missing the field is `MISSING`, last in either order. */
const NUMBER = 0;
const DATE = 1;
const STRING = 2;
const BOOLEAN = 3;
const MISSING = 4;

/**
 * The values one record sorts by, flattened: `[kind, value]` for each key that reads the record
 * (score keys read the hit). One small array of primitives per hit keeps a big ranking light.
 */
export type SortValues = (number | string)[];

/** A ranked hit as a sorted search holds it: its sort values are read once, when its record is. */
export interface SortHit extends RankedHit { keys?: SortValues }

/** `score` and `_score` sort by the hit's score; every other field by a value of its record. */
const SCORE_FIELDS = new Set(['score', '_score']);
/** Without an `order`, these sort newest (or best) first; every other field ascending. */
const DESC_BY_DEFAULT = new Set(['score', '_score', 'time', 'created_at']);

export const defaultOrder = (field: string): 'asc' | 'desc' => (DESC_BY_DEFAULT.has(field) ? 'desc' : 'asc');

interface Key { score: boolean; desc: boolean; read?: (rec: StoredRecord) => Value; slot: number }
type Value = [kind: number, value: number | string];

/**
 * A compiled `sort`: how to read a record's sort values and which of two hits comes first. Ties
 * on every key go to `fallback`, the search's default order, so that the order is total and a
 * search run again (a cursor whose handle is gone) pages through the same list.
 */
export interface Sorter {
  /** whether a key reads a record field (else only the score is compared) */
  readsRecords: boolean;
  /** one key, the record's time, newest first */
  newestByTime: boolean;
  /** the sort values of `rec` (a record gone since: missing everywhere) */
  valuesOf(rec: StoredRecord | undefined): SortValues;
  /** whether `a` comes before `b` */
  before(a: SortHit, b: SortHit): boolean;
}

/**
 * Checks and compiles `sort`; null when it orders as the default does (no keys, or score keys
 * only and score descending first, or score keys only where nothing is scored), so that such a
 * search keeps the default paths (a text index worker's own top, the store's key order).
 * A bad key is a 422 naming it: an empty path segment, the whole `metadata` object, a field named twice.
 */
export function compileSort(sort: SortKey[] | null | undefined, scored: boolean, fallback: (a: SortHit, b: SortHit) => boolean): Sorter | null {
  if (!sort?.length) return null;
  const issues: Issue[] = [];
  const named = new Set<string>();
  const keys: Key[] = [];
  let slots = 0;
  sort.forEach((k, i) => {
    const field = k.field;
    const bad = (msg: string) => issues.push({ loc: ['body', 'sort', i, 'field'], msg, type: 'value_error', input: field });
    if (typeof field !== 'string' || field.trim() === '') return bad('field must be a non-empty field path');
    if (field.split('.').some((part) => part === '')) return bad(`'${field}' is no field path: a path has no empty segment (leading, trailing or double dot)`);
    if (field === 'metadata') return bad("'metadata' is the whole metadata object: name a field in it, e.g. metadata.level");
    if (k.order !== undefined && k.order !== 'asc' && k.order !== 'desc') {
      issues.push({ loc: ['body', 'sort', i, 'order'], msg: "order must be 'asc' or 'desc'", type: 'value_error', input: k.order });
      return;
    }
    const score = SCORE_FIELDS.has(field);
    const name = score ? 'score' : field;
    if (named.has(name)) return bad(`the sort names '${field}' twice`);
    named.add(name);
    const desc = (k.order ?? defaultOrder(field)) === 'desc';
    keys.push(score ? { score, desc, slot: -1 } : { score, desc, read: reader(field, desc), slot: 2 * slots++ });
  });
  if (issues.length > 0) throw new Invalid(issues[0].msg, issues);
  if (slots === 0 && (keys[0].desc || !scored)) return null;

  const valuesOf = (rec: StoredRecord | undefined): SortValues => {
    const out: SortValues = new Array(2 * slots);
    for (const k of keys) {
      if (!k.read) continue;
      const [kind, value] = rec ? k.read(rec) : [MISSING, 0];
      // a descending key stores its kind reversed, so that comparing kinds ascending puts them in reverse too (missing stays last)
      out[k.slot] = kind === MISSING || !k.desc ? kind : BOOLEAN - kind;
      out[k.slot + 1] = value;
    }
    return out;
  };
  const before = (a: SortHit, b: SortHit): boolean => {
    for (const k of keys) {
      let c: number;
      if (k.score) c = a.score - b.score;
      else {
        const ka = a.keys![k.slot] as number;
        const kb = b.keys![k.slot] as number;
        if (ka !== kb) return ka < kb; // kinds first: missing is last in either order
        if (ka === MISSING) continue;
        const va = a.keys![k.slot + 1];
        const vb = b.keys![k.slot + 1];
        c = va < vb ? -1 : va > vb ? 1 : 0;
      }
      if (c !== 0) return k.desc ? c > 0 : c < 0;
    }
    return fallback(a, b);
  };
  const newestByTime = sort.length === 1 && TIME_ALIASES.has(sort[0].field) && keys[0].desc;
  return { readsRecords: slots > 0, newestByTime, valuesOf, before };
}

/**
 * How a field is read for sorting: `id` (as written, by code unit) and `created_at` are the
 * record's own; `time` and its aliases as fieldValue reads them, an instant when the value reads as
 * one (a number being epoch ms); anything else is a record field path, as `where` names it.
 */
function reader(field: string, desc: boolean): (rec: StoredRecord) => Value {
  if (field === 'id') return (rec) => [STRING, rec.id];
  if (field === 'created_at') return (rec) => instant(rec.created_at);
  const get = fieldGetter(field);
  if (TIME_ALIASES.has(field)) {
    return (rec) => {
      const v = get(rec);
      return Array.isArray(v) ? extreme(v, desc) : instant(v);
    };
  }
  return (rec) => {
    const v = get(rec);
    return Array.isArray(v) ? extreme(v, desc) : scalar(v);
  };
}

function instant(v: unknown): Value {
  const ms = toEpochMs(v);
  return ms === null ? scalar(v) : [DATE, ms];
}

/**
 * One value as it sorts: numbers (and strings that spell one) numerically, dates as instants,
 * other strings lexically (case-insensitively, by code unit), booleans false before true; null and
 * objects are missing. Across kinds (a field holding both numbers and words): numbers, dates,
 * strings, booleans ascending, the reverse descending.
 */
function scalar(v: unknown): Value {
  if (typeof v === 'number') return Number.isFinite(v) ? [NUMBER, v] : [MISSING, 0];
  if (typeof v === 'boolean') return [BOOLEAN, v ? 1 : 0];
  if (typeof v === 'string') {
    const n = toNumber(v);
    if (n !== null) return [NUMBER, n];
    const d = parseDate(v);
    if (d !== null) return [DATE, d];
    return [STRING, v.toLowerCase()];
  }
  return [MISSING, 0];
}

/** An array sorts by its least element ascending, by its greatest descending (nested arrays and missing elements aside). */
function extreme(items: unknown[], desc: boolean): Value {
  let best: Value = [MISSING, 0];
  for (const item of items) {
    if (Array.isArray(item)) continue;
    const s = scalar(item);
    if (s[0] === MISSING) continue;
    if (best[0] === MISSING) best = s;
    else if (desc ? s[0] > best[0] || (s[0] === best[0] && s[1] > best[1]) : s[0] < best[0] || (s[0] === best[0] && s[1] < best[1])) best = s;
  }
  return best;
}
