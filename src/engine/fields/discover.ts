import type { RecordNames } from '../records.js';

export type ValueType = 'i64' | 'f64' | 'bool' | 'str' | 'datetime' | 'object' | 'array';

/** What has been seen at one field path: per value type, how often and a first example. */
export type FieldVariants = Map<ValueType, { count: number; sample: unknown }>;

// Date-times only: a bare date such as `2015-05-17` stays a string.
const DATETIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?\s?(?:Z|[+-]\d{2}(?::?\d{2})?)?$/i;

/** The type a value is indexed as; null for null and undefined, which carry no type. */
export function valueType(v: unknown): ValueType | null {
  switch (typeof v) {
    case 'string':
      return v.length >= 16 && v.length <= 40 && DATETIME.test(v) ? 'datetime' : 'str';
    case 'number':
      return Number.isInteger(v) ? 'i64' : 'f64';
    case 'bigint':
      return 'i64';
    case 'boolean':
      return 'bool';
    case 'object':
      return v === null ? null : Array.isArray(v) ? 'array' : 'object';
    default:
      return null;
  }
}

/** What field discovery reads of a record. */
type Fielded = { title: string | null; body: string; time: string | null; metadata: Record<string, unknown>; names?: RecordNames };

/** A record's field paths with the type and value at each, as parallel arrays reused from record to record. */
export interface RecordFields { paths: string[]; types: ValueType[]; values: unknown[] }

export const recordFieldsBuffer = (): RecordFields => ({ paths: [], types: [], values: [] });

/**
 * Lists one record's fields into `out` (emptied first): title, body and time as the record holds
 * them, and every metadata path flattened with dots. Objects are listed and descended into;
 * arrays are listed whole. The descent keeps its own stack, so no nesting can exhaust the call
 * stack. It runs on every ingested record, so it allocates little beyond the path strings.
 */
export function recordFields(rec: Fielded, out: RecordFields): RecordFields {
  out.paths.length = out.types.length = out.values.length = 0;
  const add = (path: string, type: ValueType, value: unknown) => {
    out.paths.push(path);
    out.types.push(type);
    out.values.push(value);
  };
  if (rec.title !== null) add('title', 'str', rec.title);
  add('body', 'str', rec.body);
  if (rec.time !== null) add('time', 'datetime', rec.time);
  aliasFields(rec, add);
  const objects: Record<string, unknown>[] = [rec.metadata];
  const prefixes: string[] = [''];
  while (objects.length > 0) {
    const obj = objects.pop()!;
    const prefix = prefixes.pop()!;
    for (const key in obj) {
      if (!Object.hasOwn(obj, key)) continue;
      const v = obj[key];
      const type = valueType(v);
      if (type === null) continue;
      const path = prefix === '' ? key : `${prefix}.${key}`;
      add(path, type, v);
      if (type === 'object') {
        objects.push(v as Record<string, unknown>);
        prefixes.push(path);
      }
    }
  }
  return out;
}

/**
 * The fields title, body and time are under the names they had in the input (see StoredRecord.names):
 * a Loghub CSV's `Content` is the body, and a field of its own too.
 */
export function aliasFields(rec: Fielded, add: (path: string, type: ValueType, value: unknown) => void): void {
  const names = rec.names;
  if (names === undefined) return;
  if (names.title !== undefined && rec.title !== null) add(names.title, 'str', rec.title);
  if (names.body !== undefined) add(names.body, 'str', rec.body);
  if (names.time !== undefined && rec.time !== null) add(names.time, 'datetime', rec.time);
}

/** Counts fields listed by recordFields into `out`, per path and type. */
export function countFields(fields: RecordFields, out: Map<string, FieldVariants>): void {
  for (let i = 0; i < fields.paths.length; i++) record(out, fields.paths[i], fields.types[i], fields.values[i]);
}

const scratch = recordFieldsBuffer();

/** Adds one record's fields (see recordFields) to `out`. */
export function observeFields(rec: Fielded, out: Map<string, FieldVariants>): void {
  countFields(recordFields(rec, scratch), out);
}

function record(out: Map<string, FieldVariants>, path: string, type: ValueType, value: unknown): void {
  let variants = out.get(path);
  if (variants === undefined) {
    variants = new Map();
    out.set(path, variants);
  }
  const seen = variants.get(type);
  if (seen === undefined) variants.set(type, { count: 1, sample: value });
  else seen.count++;
}

/** Where a path's values of one type are kept: the path alone while it has one type, else `path__type`. */
export function physicalField(path: string, type: ValueType, variantCount: number): string {
  return variantCount <= 1 ? path : `${path}__${type}`;
}
