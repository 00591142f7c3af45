import { Type, type Static } from '@sinclair/typebox';
import { DatasetIdRef, DateTime, Id, Literals, Nullable } from './common.js';

export const IndexName = Literals(['text', 'vector', 'sql'] as const);

export const ReindexCreate = Type.Object(
  {
    dataset_id: DatasetIdRef,
    /** only this source's objects are parsed again; every index of the dataset is still rebuilt */
    source_id: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }))),
    /** default: every index the dataset has */
    indexes: Type.Optional(Type.Array(IndexName, { minItems: 1, maxItems: 3, uniqueItems: true })),
  },
  { additionalProperties: false },
);
export type ReindexCreate = Static<typeof ReindexCreate>;

/** A reindex job: the spec's fields, plus what it was asked for and how far it got. */
export const ReindexJob = Type.Object({
  job_id: Type.String(),
  tenant_id: Type.String(),
  status: Literals(['pending', 'running', 'succeeded', 'failed', 'cancelled'] as const),
  dataset_id: Type.String(),
  source_id: Nullable(Type.Integer()),
  indexes: Type.Array(IndexName),
  /** manifest, reparse, rebuild, replay, promote, done */
  phase: Type.String(),
  object_count: Type.Integer(),
  /** pending, done (parsed again, or already as the current config would make it), failed */
  object_status_counts: Type.Record(Type.String(), Type.Integer()),
  source_document_count: Type.Integer(),
  replay_document_count: Type.Integer(),
  source_generation_ids: Type.Array(Type.Integer()),
  target_generation_id: Nullable(Type.Integer()),
  target_index_id: Nullable(Type.String()),
  promotion_id: Nullable(Type.String()),
  manifest_cutoff_at: Nullable(DateTime),
  requested_by: Type.String(),
  error_message: Nullable(Type.String()),
  created_at: DateTime,
  started_at: Nullable(DateTime),
  completed_at: Nullable(DateTime),
  updated_at: DateTime,
});
export type ReindexJob = Static<typeof ReindexJob>;

export const ReindexPath = Type.Object({ job_id: Id });
