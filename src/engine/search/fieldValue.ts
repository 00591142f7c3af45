import type { StoredRecord } from '../records.js';

/** Reads one field of a record; `undefined` when the record has no such field. */
export type FieldGetter = (rec: StoredRecord) => unknown;

/** Names that read the record's own time (a metadata member of the name only when it has none). */
export const TIME_ALIASES = new Set(['time', '_time', 'timestamp', '@timestamp']);
const getters = new Map<string, FieldGetter>();
const GETTER_CACHE_MAX = 10_000;

/** The value at `path`: a record member (`id`, `title`, `body`, `time` and its aliases) or a metadata path. */
export function fieldValue(rec: StoredRecord, path: string): unknown {
  return fieldGetter(path)(rec);
}

/** A reader for `path`, built once so per-record reads do no string parsing. */
export function fieldGetter(path: string): FieldGetter {
  let getter = getters.get(path);
  if (getter === undefined) {
    getter = buildGetter(path);
    if (getters.size >= GETTER_CACHE_MAX) getters.clear();
    getters.set(path, getter);
  }
  return getter;
}

function buildGetter(path: string): FieldGetter {
  if (path === 'id') return (rec) => rec.id;
  if (path === 'title') return (rec) => rec.title;
  if (path === 'body') return (rec) => rec.body;
  // When the record has no time, a metadata member of that name is the next best reading.
  if (TIME_ALIASES.has(path)) return (rec) => rec.time ?? resolve(rec.metadata, path);
  if (path === 'metadata') return (rec) => rec.metadata;
  if (path.startsWith('metadata.')) {
    const rest = path.slice('metadata.'.length);
    return (rec) => resolve(rec.metadata, rest);
  }
  // the input's name of the record's title, body or time (`Content`, `message`) reads that member
  return (rec) => {
    const names = rec.names;
    if (names !== undefined) {
      if (names.body === path) return rec.body;
      if (names.title === path) return rec.title;
      if (names.time === path) return rec.time;
    }
    return resolve(rec.metadata, path);
  };
}

/** Which text of the record `path` names by its input name: its body, its title, or neither. */
export function textScopeOf(rec: StoredRecord, path: string): 'title' | 'body' | null {
  const names = rec.names;
  if (names === undefined) return null;
  return names.body === path ? 'body' : names.title === path ? 'title' : null;
}

/**
 * Walks `path` into `obj`. A literal dotted key wins, then every split point is tried, so
 * `{"a.b": {"c": 1}}` and `{"a": {"b.c": 1}}` both answer `a.b.c`. Arrays met on the way
 * fan out: `peers.state` over an array of peers yields the array of their states.
 */
function resolve(obj: unknown, path: string): unknown {
  if (obj === null || typeof obj !== 'object') return undefined;
  if (Array.isArray(obj)) return fanOut(obj, path);
  const rec = obj as Record<string, unknown>;
  if (Object.hasOwn(rec, path)) return rec[path];
  for (let dot = path.indexOf('.'); dot > 0; dot = path.indexOf('.', dot + 1)) {
    const head = path.slice(0, dot);
    if (!Object.hasOwn(rec, head)) continue;
    const found = resolve(rec[head], path.slice(dot + 1));
    if (found !== undefined) return found;
  }
  return undefined;
}

function fanOut(items: unknown[], path: string): unknown[] | undefined {
  const out: unknown[] = [];
  for (const item of items) {
    const found = resolve(item, path);
    if (found === undefined) continue;
    if (Array.isArray(found)) out.push(...found);
    else out.push(found);
  }
  return out.length > 0 ? out : undefined;
}

// ---- How field values compare: shared by `q`, `where` and aggregations so they never disagree.

const NUMERIC = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const DATE = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?))?\s?(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

/** A number, or a string that spells one (`"200"`, `"0.25"`); else null. */
export function toNumber(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'string' && NUMERIC.test(v)) return Number(v);
  return null;
}

/** Epoch ms of an ISO-8601-like date or date-time; zone-less times are UTC so results do not depend on the host. */
export function parseDate(s: string): number | null {
  const m = DATE.exec(s.trim());
  if (m === null) return null;
  let zone = m[3] ?? '';
  if (zone.length === 3) zone += ':00';
  const text = m[2] === undefined ? m[1] : `${m[1]}T${m[2].replace(',', '.')}${zone || 'Z'}`;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? null : ms;
}

/** A record value as a point in time: a date string, or a number taken as epoch ms. */
export function toEpochMs(v: unknown): number | null {
  if (typeof v === 'string') return parseDate(v);
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  return null;
}

/**
 * A test of record scalars for equality with `qv`, prepared once per query: numeric when both
 * are numeric, by instant when both are dates, else case-insensitive text. `null` matches null only.
 */
export function equalsTest(qv: unknown): (rv: unknown) => boolean {
  if (qv === null) return (rv) => rv === null;
  const qn = toNumber(qv);
  const qs = String(qv).toLowerCase();
  const qd = typeof qv === 'string' ? parseDate(qv) : null;
  return (rv) => {
    if (rv === undefined || rv === null || typeof rv === 'object') return false;
    if (qn !== null) {
      const rn = toNumber(rv);
      if (rn !== null) return rn === qn;
    }
    if (String(rv).toLowerCase() === qs) return true;
    return qd !== null && typeof rv === 'string' && parseDate(rv) === qd;
  };
}

/**
 * A comparator of record scalars against the bound `qv`, prepared once per query: numeric for a
 * numeric bound, by instant for a date bound, else lower-cased text. It answers null when a
 * record value cannot be ordered against the bound, which never matches.
 */
export function compareTest(qv: unknown): (rv: unknown) => number | null {
  const qn = toNumber(qv);
  if (qn !== null) {
    return (rv) => {
      const rn = toNumber(rv);
      return rn === null ? null : rn - qn;
    };
  }
  if (typeof qv !== 'string') return () => null;
  const qd = parseDate(qv);
  if (qd !== null) {
    return (rv) => {
      const rd = toEpochMs(rv);
      return rd === null ? null : rd - qd;
    };
  }
  const qs = qv.toLowerCase();
  return (rv) => {
    if (typeof rv !== 'string') return null;
    const rs = rv.toLowerCase();
    return rs < qs ? -1 : rs > qs ? 1 : 0;
  };
}

export type Order = 'gt' | 'gte' | 'lt' | 'lte';
const ACCEPT: Record<Order, (c: number) => boolean> = { gt: (c) => c > 0, gte: (c) => c >= 0, lt: (c) => c < 0, lte: (c) => c <= 0 };

/** A field value (or any element of an array) that stands in `order` to the bound `qv`, as compareTest orders them. */
export function orderTest(qv: unknown, order: Order): (v: unknown) => boolean {
  const cmp = compareTest(qv);
  const accept = ACCEPT[order];
  return (v) =>
    anyValue(v, (x) => {
      const c = cmp(x);
      return c !== null && accept(c);
    });
}

/** A field value matches when it does, or, for an array, when any element does. */
export function anyValue(v: unknown, test: (scalar: unknown) => boolean): boolean {
  if (Array.isArray(v)) {
    for (const item of v) if (test(item)) return true;
    return false;
  }
  return test(v);
}
