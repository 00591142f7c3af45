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

/**
 * Adds one record's fields to `out`: title, body and time as the record holds them, and every
 * metadata path flattened with dots. Objects are recorded and descended into; arrays are
 * recorded whole. It runs on every ingested record, so it allocates nothing but path strings.
 */
export function observeFields(
  rec: { title: string | null; body: string; time: string | null; metadata: Record<string, unknown> },
  out: Map<string, FieldVariants>,
): void {
  if (rec.title !== null) record(out, 'title', 'str', rec.title);
  record(out, 'body', 'str', rec.body);
  if (rec.time !== null) record(out, 'time', 'datetime', rec.time);
  walk(rec.metadata, '', out);
}

function walk(obj: Record<string, unknown>, prefix: string, out: Map<string, FieldVariants>): void {
  for (const key in obj) {
    if (!Object.hasOwn(obj, key)) continue;
    const v = obj[key];
    const type = valueType(v);
    if (type === null) continue;
    const path = prefix === '' ? key : `${prefix}.${key}`;
    record(out, path, type, v);
    if (type === 'object') walk(v as Record<string, unknown>, path, out);
  }
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
