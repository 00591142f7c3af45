import { Type, type Static } from '@sinclair/typebox';
import { DateTime, Literals, Nullable } from './common.js';
import { LIMITS } from './limits.js';
import { Provenance, ResultRecord, Total } from './search.js';

export const SQL_DEFAULT_LIMIT = 1000;
export const SQL_MAX_LIMIT = 10_000;

/** A positional parameter: `$1`, `$2`, … (or `?`) in the statement, in order. */
export const SqlParam = Type.Union([Type.String({ maxLength: LIMITS.whereValue }), Type.Number(), Type.Boolean(), Type.Null()]);

export const SqlRequest = Type.Object(
  {
    sql: Type.String({ minLength: 1, maxLength: LIMITS.sql, description: 'one read-only statement: SELECT, WITH … SELECT, VALUES, DESCRIBE or SHOW' }),
    params: Type.Optional(Type.Array(SqlParam, { maxItems: 1000 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: SQL_MAX_LIMIT, description: `rows per page (default ${SQL_DEFAULT_LIMIT})` })),
    cursor: Type.Optional(Nullable(Type.String({ maxLength: LIMITS.cursor }))),
  },
  { additionalProperties: false },
);
export type SqlRequest = Static<typeof SqlRequest>;

/** A result column: its name in each row's `metadata` and its DuckDB type (`BIGINT`, `VARCHAR`, `TIMESTAMP`, `JSON`, …). */
export const SqlColumn = Type.Object({ name: Type.String(), type: Type.String() });
export type SqlColumn = Static<typeof SqlColumn>;

/**
 * One row as a result record: `metadata` holds the row. A row that selects `_id` stands for that
 * record and carries its id, title, body, times and full provenance; any other row has null there.
 */
export const SqlRecord = Type.Composite([
  Type.Omit(ResultRecord, ['created_at', 'provenance']),
  Type.Object({ created_at: Nullable(DateTime), provenance: Nullable(Provenance) }),
]);
export type SqlRecord = Static<typeof SqlRecord>;

export const SqlEnvelope = Type.Object({
  search_id: Type.String(),
  took_ms: Type.Number(),
  mode: Type.Literal('sql'),
  total: Total,
  columns: Type.Array(SqlColumn),
  records: Type.Array(SqlRecord),
  aggregations: Type.Record(Type.String(), Type.Unknown()),
  next_cursor: Nullable(Type.String()),
});
export type SqlEnvelope = Static<typeof SqlEnvelope>;

export const SchemaRebuildJob = Type.Object({
  job_id: Type.String(),
  tenant_id: Type.String(),
  dataset_id: Type.String(),
  status: Literals(['pending', 'running', 'succeeded', 'failed', 'cancelled'] as const),
  requested_by: Type.String(),
  /** the SQL table generation the rebuild promoted (null until it has) */
  generation: Nullable(Type.Integer()),
  record_count: Nullable(Type.Integer()),
  field_count: Nullable(Type.Integer()),
  column_count: Nullable(Type.Integer()),
  error_message: Nullable(Type.String()),
  created_at: DateTime,
  started_at: Nullable(DateTime),
  completed_at: Nullable(DateTime),
  updated_at: DateTime,
});
export type SchemaRebuildJob = Static<typeof SchemaRebuildJob>;

