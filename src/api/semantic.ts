import { Type, type Static } from '@sinclair/typebox';
import { DatasetIdRef, DateTime, Id, Literals, Nullable } from './common.js';

export const BackfillCreate = Type.Object(
  { dataset_id: DatasetIdRef, source_id: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }))) },
  { additionalProperties: false },
);
export type BackfillCreate = Static<typeof BackfillCreate>;

/** A filter backfill job: filter values re-extracted and restamped onto existing vectors, no embedding. */
export const BackfillJob = Type.Object({
  job_id: Type.String(),
  tenant_id: Type.String(),
  status: Literals(['pending', 'running', 'succeeded', 'failed', 'cancelled'] as const),
  dataset_id: Type.String(),
  source_id: Nullable(Type.Integer()),
  filter_fields: Type.Array(Type.String()),
  sources_processed: Type.Integer(),
  objects_processed: Type.Integer(),
  records_restamped: Type.Integer(),
  error_message: Nullable(Type.String()),
  created_at: DateTime,
  started_at: Nullable(DateTime),
  completed_at: Nullable(DateTime),
  updated_at: DateTime,
});
export type BackfillJob = Static<typeof BackfillJob>;

export const BackfillPath = Type.Object({ job_id: Id });
