import {
  arrayFromArrayValue,
  arrayFromListValue,
  dateFromTimestampMillisecondsValue,
  dateFromTimestampNanosecondsValue,
  dateFromTimestampSecondsValue,
  dateFromTimestampTZValue,
  dateFromTimestampValue,
  DuckDBDecimalValue,
  DuckDBTypeId,
  JsonDuckDBValueConverter,
  objectFromStructValue,
  type DuckDBType,
  type DuckDBValue,
  type DuckDBValueConverter,
} from '@duckdb/node-api';

/** The name a result column's type goes by: JSON columns say JSON (DuckDB knows them as an alias of VARCHAR). */
export const typeName = (type: DuckDBType): string => type.alias ?? type.toString();

const isoOf = (toDate: (v: DuckDBValue) => Date) => (v: DuckDBValue) => {
  try {
    return toDate(v).toISOString();
  } catch {
    return String(v); // infinity, or beyond what a JS date holds
  }
};
const TIMESTAMPS: Partial<Record<DuckDBTypeId, (v: DuckDBValue) => string>> = {
  [DuckDBTypeId.TIMESTAMP]: isoOf(dateFromTimestampValue),
  [DuckDBTypeId.TIMESTAMP_TZ]: isoOf(dateFromTimestampTZValue),
  [DuckDBTypeId.TIMESTAMP_S]: isoOf(dateFromTimestampSecondsValue),
  [DuckDBTypeId.TIMESTAMP_MS]: isoOf(dateFromTimestampMillisecondsValue),
  [DuckDBTypeId.TIMESTAMP_NS]: isoOf(dateFromTimestampNanosecondsValue),
};

const INTEGERS = new Set([DuckDBTypeId.BIGINT, DuckDBTypeId.UBIGINT, DuckDBTypeId.HUGEINT, DuckDBTypeId.UHUGEINT, DuckDBTypeId.BIGNUM]);
const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * DuckDB values as JSON values: numbers as numbers (`count(*)` too; an integer beyond 2^53 stays
 * exact as a string), times as ISO 8601 UTC, lists, structs and the rest as the library's JSON form.
 * (JSON columns are parsed by the reader, which knows the column types.)
 */
export const toJson: DuckDBValueConverter<unknown> = (value, type, self) => {
  if (value === null) return null;
  const id = type.typeId;
  if (INTEGERS.has(id)) {
    const n = value as bigint;
    return n >= MIN_SAFE && n <= MAX_SAFE ? Number(n) : n.toString();
  }
  if (id === DuckDBTypeId.DECIMAL) return (value as DuckDBDecimalValue).toDouble();
  if (id === DuckDBTypeId.DOUBLE || id === DuckDBTypeId.FLOAT) return Number.isFinite(value) ? value : String(value);
  const time = TIMESTAMPS[id];
  if (time) return time(value);
  if (id === DuckDBTypeId.LIST) return arrayFromListValue(value, type, self);
  if (id === DuckDBTypeId.ARRAY) return arrayFromArrayValue(value, type, self);
  if (id === DuckDBTypeId.STRUCT) return objectFromStructValue(value, type, self);
  return JsonDuckDBValueConverter(value, type, self as unknown as Parameters<typeof JsonDuckDBValueConverter>[2]);
};
