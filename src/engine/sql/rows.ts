import type { DuckDBAppender, DuckDBTimestampValue } from '@duckdb/node-api';
import { valueType, type ValueType } from '../fields/discover.js';
import { toIsoTime } from '../ingest/transform.js';
import type { StoredRecord } from '../records.js';
import { duckdb } from './duckdb.js';
import type { ColumnDef } from './schema.js';

/** Metadata values at flattened paths, typed the way field discovery types them, as parallel arrays (no object per value). */
export interface FlatFields { paths: string[]; types: ValueType[]; values: unknown[] }

export const flatFields = (): FlatFields => ({ paths: [], types: [], values: [] });

/** Column positions by path, then by value type: lookups without building a key string per value. */
export type ColumnIndex = Map<string, Partial<Record<ValueType, number>>>;

export function columnIndex(columns: ColumnDef[]): ColumnIndex {
  const index: ColumnIndex = new Map();
  columns.forEach((c, i) => {
    const byType = index.get(c.path) ?? {};
    byType[c.type] = i;
    index.set(c.path, byType);
  });
  return index;
}

/**
 * Adds every value of a record's metadata, flattened with dots as field discovery flattens it
 * (objects are a value and are descended into; arrays are a value whole), so each one has a column.
 */
export function flatten(metadata: Record<string, unknown>, out: FlatFields, prefix = ''): void {
  for (const key in metadata) {
    if (!Object.hasOwn(metadata, key)) continue;
    const value = metadata[key];
    const type = valueType(value);
    if (type === null) continue;
    const path = prefix === '' ? key : `${prefix}.${key}`;
    out.paths.push(path);
    out.types.push(type);
    out.values.push(value);
    if (type === 'object') flatten(value as Record<string, unknown>, out, path);
  }
}

const INT64_MIN = -(2 ** 63);
const INT64_MAX_EXCLUSIVE = 2 ** 63;

function timestamp(v: unknown): DuckDBTimestampValue | null {
  const iso = typeof v === 'string' && v.endsWith('Z') && v.length === 24 ? v : toIsoTime(v);
  const ms = iso === null ? NaN : Date.parse(iso);
  return Number.isFinite(ms) ? new (duckdb().DuckDBTimestampValue)(BigInt(ms) * 1000n) : null;
}

function appendValue(app: DuckDBAppender, type: ValueType, v: unknown): void {
  switch (type) {
    case 'str':
      return app.appendVarchar(v as string);
    case 'i64':
      // an integer beyond BIGINT (JSON allows 1e300) has no exact BIGINT value: it is left NULL
      return typeof v === 'number' && v >= INT64_MIN && v < INT64_MAX_EXCLUSIVE ? app.appendBigInt(BigInt(v)) : typeof v === 'bigint' ? app.appendBigInt(v) : app.appendNull();
    case 'f64':
      return app.appendDouble(v as number);
    case 'bool':
      return app.appendBoolean(v as boolean);
    case 'datetime': {
      const ts = timestamp(v);
      return ts ? app.appendTimestamp(ts) : app.appendNull();
    }
    default:
      return app.appendVarchar(JSON.stringify(v));
  }
}

/** Appends one record as a row: the system columns, then `values` (by column position; undefined is NULL). */
export function appendRecord(app: DuckDBAppender, rec: StoredRecord, values: unknown[], columns: ColumnDef[]): void {
  app.appendVarchar(rec.id);
  app.appendBigInt(BigInt(rec.seq));
  app.appendVarchar(rec.key);
  app.appendInteger(rec.line);
  app.appendVarchar(rec.etag);
  const time = rec.time === null ? null : timestamp(rec.time);
  if (time) app.appendTimestamp(time);
  else app.appendNull();
  if (rec.title === null) app.appendNull();
  else app.appendVarchar(rec.title);
  app.appendVarchar(rec.body);
  for (let i = 0; i < columns.length; i++) {
    const v = values[i];
    if (v === undefined) app.appendNull();
    else appendValue(app, columns[i].type, v);
  }
  app.endRow();
}
