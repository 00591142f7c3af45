import { Type, type Static } from '@sinclair/typebox';
import { DatasetIdRef, DateTime, FieldPath, Id, Literals, Nullable } from './common.js';
import { LIMITS } from './limits.js';

/** `jsonl` is a synonym of `ndjson` (the spec's name for it): parsed the same, echoed as given in the run's `format`. */
export const IngestFormat = Literals(['text', 'ndjson', 'jsonl', 'json', 'csv'] as const);

export const RunStatus = Literals(['queued', 'running', 'ready', 'failed'] as const);

export const Documents = Type.Object({
  expected: Type.Integer(),
  parsed: Type.Integer(),
  schema_observed: Type.Integer(),
  index_committed: Type.Integer(),
  semantic_embedded: Type.Integer(),
  semantic_failed: Type.Integer(),
  semantic_total: Type.Integer(),
  /** Additions: lines refused and records already present (same id, same content). */
  malformed: Type.Integer(),
  duplicates: Type.Integer(),
});

export const LineError = Type.Object({ line: Type.Integer(), reason: Type.String() });

export const IngestRun = Type.Object({
  ingest_run_id: Type.String(),
  tenant_id: Type.String(),
  dataset_id: Type.String(),
  source_id: Type.Integer(),
  bucket: Type.String(),
  key: Type.String(),
  etag: Type.String(),
  format: Type.String(),
  input_kind: Type.String(),
  upload_session_id: Nullable(Type.String()),
  connector_run_id: Nullable(Type.String()),
  ingest_failure_id: Nullable(Type.String()),
  reindex_job_id: Nullable(Type.String()),
  status: Type.String(),
  error_code: Nullable(Type.String()),
  error_message: Nullable(Type.String()),
  documents: Documents,
  /** The first malformed lines with their reasons (at most 100). */
  errors: Type.Array(LineError),
  lifecycle: Type.Object({ reasons: Type.Array(Type.String()), repairable: Type.Boolean(), state: Type.String() }),
  ready_for: Type.Object({ text_search: Type.Boolean(), sql_search: Type.Boolean(), semantic_search: Type.Boolean() }),
  created_at: DateTime,
  queued_at: Nullable(DateTime),
  started_at: Nullable(DateTime),
  completed_at: Nullable(DateTime),
  failed_at: Nullable(DateTime),
  text_indexed_at: Nullable(DateTime),
  semantic_ready_at: Nullable(DateTime),
  updated_at: DateTime,
});
export type IngestRun = Static<typeof IngestRun>;

export const IngestRunList = Type.Object({ runs: Type.Array(IngestRun), next_cursor: Nullable(Type.String()) });
export type IngestRunList = Static<typeof IngestRunList>;

/** Per-run overrides of the source's format and transform, as query parameters of the stream endpoint. */
export const IngestOptions = Type.Object({
  format: Type.Optional(IngestFormat),
  id_field: Type.Optional(FieldPath),
  title_field: Type.Optional(FieldPath),
  body_field: Type.Optional(FieldPath),
  time_field: Type.Optional(FieldPath),
  filename: Type.Optional(Type.String({ minLength: 1, maxLength: LIMITS.filename })),
  /** Addition: each line is a record of its own even where the same bytes were ingested before (a followed log repeats itself; `svc ingest --follow` sets it) */
  distinct: Type.Optional(Type.Boolean()),
});
export type IngestOptions = Static<typeof IngestOptions>;

export const RunPath = Type.Object({ ingest_run_id: Id });
export const RunListQuery = Type.Object({
  source_id: Type.Optional(Type.Integer()),
  dataset_id: Type.Optional(DatasetIdRef),
  status: Type.Optional(RunStatus),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
});
export type RunListQuery = Static<typeof RunListQuery>;
