import { physicalField, type ValueType } from '../fields/discover.js';

/** Where the physical tables and the per-dataset state live; callers' statements may not name it. */
export const INTERNAL_SCHEMA = '_svc';

/** Beyond this many field columns a dataset's further fields stay out of SQL (they are still stored). */
export const MAX_FIELD_COLUMNS = 1000;

/** Columns every dataset table has, before its field columns, in this order. */
export const SYSTEM_COLUMNS: readonly (readonly [name: string, type: string])[] = [
  ['_id', 'VARCHAR'],
  ['_seq', 'BIGINT'],
  ['_source_key', 'VARCHAR'],
  ['_line', 'INTEGER'],
  ['_etag', 'VARCHAR'],
  ['_time', 'TIMESTAMP'],
  ['_title', 'VARCHAR'],
  ['_body', 'VARCHAR'],
];

/** Times are stored as TIMESTAMP in UTC, the way every record time is normalized on ingest. */
export const COLUMN_TYPES: Record<ValueType, string> = {
  i64: 'BIGINT',
  f64: 'DOUBLE',
  bool: 'BOOLEAN',
  str: 'VARCHAR',
  datetime: 'TIMESTAMP',
  object: 'JSON',
  array: 'JSON',
};

/** A field column: the field path and value type it holds, and its name in the table. */
export interface ColumnDef { path: string; type: ValueType; name: string }

export const fieldKey = (path: string, type: string) => `${path}\u0000${type}`;

export const quote = (identifier: string) => `"${identifier.replaceAll('"', '""')}"`;

/** The table a generation of a dataset is loaded into. */
export const physicalTable = (datasetId: string, generation: number) => `${INTERNAL_SCHEMA}.${quote(`${datasetId}@${generation}`)}`;
export const physicalName = (datasetId: string, generation: number) => `${datasetId}@${generation}`;

export function createTableSql(datasetId: string, generation: number, columns: ColumnDef[]): string {
  const defs = [...SYSTEM_COLUMNS.map(([n, t]) => `${quote(n)} ${t}`), ...columns.map((c) => `${quote(c.name)} ${COLUMN_TYPES[c.type]}`)];
  return `CREATE TABLE ${physicalTable(datasetId, generation)} (${defs.join(', ')})`;
}

/** What callers query: a view named after the dataset over its current generation, replaced to promote another. */
export const publishViewSql = (datasetId: string, generation: number) => `CREATE OR REPLACE VIEW main.${quote(datasetId)} AS SELECT * FROM ${physicalTable(datasetId, generation)}`;

/**
 * Names every column by its field's `physical_field` (the path alone while the path has one value
 * type, else `path__type`). DuckDB names are case-insensitive, so a name already taken — by a system
 * column or an earlier column — gets `__2`, `__3`, …; earlier columns keep their claim.
 */
export function planNames(columns: { path: string; type: ValueType }[], variantCount: (path: string) => number): string[] {
  const taken = new Set(SYSTEM_COLUMNS.map(([n]) => n.toLowerCase()));
  return columns.map((c) => {
    const wanted = physicalField(c.path, c.type, variantCount(c.path));
    let name = wanted;
    for (let n = 2; taken.has(name.toLowerCase()); n++) name = `${wanted}__${n}`;
    taken.add(name.toLowerCase());
    return name;
  });
}
