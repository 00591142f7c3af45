import { Type, type Static } from '@sinclair/typebox';
import { DatasetIdRef, DateTime, Id, Literals, Nullable } from './common.js';
import { LIMITS } from './limits.js';

const JobStatus = Literals(['pending', 'running', 'succeeded', 'failed'] as const);

export const DataDeletionItem = Type.Object({
  item_id: Type.Integer(),
  item_type: Type.String(),
  status: JobStatus,
  attempt_count: Type.Integer(),
  next_attempt_at: Nullable(DateTime),
  started_at: Nullable(DateTime),
  completed_at: Nullable(DateTime),
  created_at: DateTime,
  updated_at: DateTime,
  error_message: Nullable(Type.String()),
  target: Type.Record(Type.String(), Type.Unknown()),
  result: Type.Record(Type.String(), Type.Unknown()),
});

export const DataDeletionJob = Type.Object({
  job_id: Type.String(),
  tenant_id: Type.String(),
  requested_by: Type.String(),
  scope: Literals(['hosted_upload', 'source', 'dataset', 'object', 'record', 'tenant'] as const),
  status: JobStatus,
  target_dataset_id: Nullable(Type.String()),
  target_source_id: Nullable(Type.Integer()),
  target_upload_session_id: Nullable(Type.String()),
  item_total_count: Type.Integer(),
  item_pending_count: Type.Integer(),
  item_running_count: Type.Integer(),
  item_succeeded_count: Type.Integer(),
  item_failed_count: Type.Integer(),
  items: Type.Array(DataDeletionItem),
  error_message: Nullable(Type.String()),
  created_at: DateTime,
  started_at: Nullable(DateTime),
  completed_at: Nullable(DateTime),
  updated_at: DateTime,
});
export type DataDeletionJob = Static<typeof DataDeletionJob>;

/** What the narrower data-deletion scopes name: one upload, one object of a source, one record. */
export const UploadSessionPath = Type.Object({ upload_session_id: Id });
export const ObjectDeletionQuery = Type.Object({
  source_id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
  key: Type.String({ minLength: 1, maxLength: LIMITS.url }),
});
export const RecordPath = Type.Object({ dataset_id: DatasetIdRef, record_id: Type.String({ minLength: 1, maxLength: LIMITS.recordId }) });

export const JobStatusAny = Literals(['pending', 'running', 'succeeded', 'failed', 'cancelled'] as const);

/** A durable job of any kind (ingest, data deletion, retention, upload clean-up, …). */
export const Job = Type.Object({
  job_id: Type.String(),
  tenant_id: Type.String(),
  type: Type.String(),
  status: JobStatusAny,
  attempts: Type.Integer(),
  max_attempts: Type.Integer(),
  next_attempt_at: Nullable(DateTime),
  payload: Type.Record(Type.String(), Type.Unknown()),
  result: Nullable(Type.Record(Type.String(), Type.Unknown())),
  error_message: Nullable(Type.String()),
  cancel_requested: Type.Optional(Type.Boolean()),
  created_at: DateTime,
  started_at: Nullable(DateTime),
  completed_at: Nullable(DateTime),
  updated_at: DateTime,
});
export type Job = Static<typeof Job>;
export const JobList = Type.Object({ jobs: Type.Array(Job), next_cursor: Nullable(Type.String()) });
export const JobListQuery = Type.Object({
  type: Type.Optional(Type.String({ minLength: 1, maxLength: LIMITS.id })),
  status: Type.Optional(JobStatusAny),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500 })),
});
export type JobListQuery = Static<typeof JobListQuery>;
export const JobPath = Type.Object({ job_id: Id });
/** A job of one dataset (a schema rebuild). */
export const DatasetJobPath = Type.Object({ dataset_id: DatasetIdRef, job_id: Id });
