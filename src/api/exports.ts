import { Type, type Static } from '@sinclair/typebox';
import { DateTime, PagedListQuery, FieldPath, Id, Literals, Nullable } from './common.js';
import { LIMITS } from './limits.js';
import { SearchRequest } from './search.js';
import { SqlParam } from './sql.js';

/** `jsonl` is a synonym of `ndjson`: the same lines, in a `.jsonl` file, echoed as given. */
export const ExportFormat = Literals(['ndjson', 'jsonl', 'csv', 'parquet'] as const);
export type ExportFormat = Static<typeof ExportFormat>;
export const ExportStatus = Literals(['pending', 'running', 'completed', 'failed', 'cancelled'] as const);

/** Exactly one of `view_id`, `search_request` and `sql` (checked by the engine: none or several is a 422). */
export const ExportCreate = Type.Object(
  {
    view_id: Type.Optional(Id),
    search_request: Type.Optional(SearchRequest),
    sql: Type.Optional(Type.String({ minLength: 1, maxLength: LIMITS.sql })),
    /** positional parameters of `sql` */
    params: Type.Optional(Type.Array(SqlParam, { maxItems: 1000 })),
    format: Type.Optional(ExportFormat),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: LIMITS.name })),
    gzip: Type.Optional(Type.Boolean()),
    /** the columns of a CSV or Parquet export of records (`id`, `body`, `metadata.level`, `provenance.line`, …); a default set when absent */
    fields: Type.Optional(Type.Array(FieldPath, { minItems: 1, maxItems: LIMITS.exportFields })),
  },
  { additionalProperties: false },
);
export type ExportCreate = Static<typeof ExportCreate>;

export const Export = Type.Object({
  export_id: Type.String(),
  /** Addition: the durable job that writes the file (cancel it through the jobs API) */
  job_id: Type.String(),
  name: Nullable(Type.String()),
  status: ExportStatus,
  format: ExportFormat,
  gzip: Type.Boolean(),
  /** Addition: what is exported */
  view_id: Nullable(Type.String()),
  search_request: Nullable(SearchRequest),
  sql: Nullable(Type.String()),
  /** rows written so far; all of them once completed */
  row_count: Type.Integer(),
  size_bytes: Nullable(Type.Integer()),
  created_at: DateTime,
  completed_at: Nullable(DateTime),
  /** a signed URL of this server, valid until `download_expires_at` */
  download_url: Nullable(Type.String()),
  download_expires_at: Nullable(DateTime),
  store_bucket: Nullable(Type.String()),
  store_key: Nullable(Type.String()),
  /** Addition: when the file is removed (the export retention period after it completed) */
  expires_at: Nullable(DateTime),
  error_message: Nullable(Type.String()),
});
export type Export = Static<typeof Export>;

export const ExportPath = Type.Object({ export_id: Id });
export const ExportListQuery = PagedListQuery;
export type ExportListQuery = Static<typeof ExportListQuery>;
export const ExportList = Type.Object({ exports: Type.Array(Export), next_cursor: Nullable(Type.String()) });
export type ExportList = Static<typeof ExportList>;

/** What a download URL carries besides the export's id: who signed it for, until when, and the signature. */
export const DownloadQuery = Type.Object({
  tenant: Type.Optional(Type.String({ maxLength: LIMITS.id })),
  expires: Type.Optional(Type.String({ maxLength: 20 })),
  sig: Type.Optional(Type.String({ maxLength: 128 })),
});
export type DownloadQuery = Static<typeof DownloadQuery>;
