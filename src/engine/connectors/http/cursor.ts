import { valueAtPath } from './paths.js';

export type Cursor = string | number;

/** A record's cursor value: a string or a finite number; anything else does not place the record. */
export function cursorOf(record: Record<string, unknown>, field: string): Cursor | undefined {
  const v = field in record ? record[field] : valueAtPath(record, field);
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  return undefined;
}

/** Numbers compare as numbers, anything else as strings: ISO timestamps of one format sort as text. */
export function compareCursors(a: Cursor, b: Cursor): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const x = String(a);
  const y = String(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

export function maxCursor(a: Cursor | undefined, b: Cursor | undefined): Cursor | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return compareCursors(b, a) > 0 ? b : a;
}
