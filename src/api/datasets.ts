import { Type, type Static } from '@sinclair/typebox';
import { DatasetIdRef, DateTime, FieldPaths, Nullable } from './common.js';
import { LIMITS } from './limits.js';

export const DatasetCreate = Type.Object(
  {
    dataset_id: Type.String({ maxLength: LIMITS.datasetId, pattern: `^[a-z0-9][a-z0-9_-]{0,${LIMITS.datasetId - 1}}$` }),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: LIMITS.name })),
    description: Type.Optional(Type.String({ maxLength: LIMITS.description })),
    retention_days: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
    /** Additions: the fields the default source embeds (default title and body), or no vectors at all. */
    semantic_fields: Type.Optional(FieldPaths({ minItems: 1 })),
    semantic: Type.Optional(Type.Boolean({ default: true })),
  },
  { additionalProperties: false },
);
export type DatasetCreate = Static<typeof DatasetCreate>;

export const Readiness = Type.Object({
  text_search: Type.Boolean(),
  sql_search: Type.Boolean(),
  semantic_search: Type.Boolean(),
});

export const Dataset = Type.Object({
  dataset_id: Type.String(),
  tenant_id: Type.String(),
  name: Type.String(),
  description: Nullable(Type.String()),
  retention_days: Nullable(Type.Integer()),
  record_count: Type.Integer(),
  sources: Type.Array(Type.Integer(), { description: 'source_id of each source feeding the dataset' }),
  readiness: Readiness,
  created_at: DateTime,
  updated_at: DateTime,
});
export type Dataset = Static<typeof Dataset>;

export const DatasetList = Type.Object({ datasets: Type.Array(Dataset), next_cursor: Nullable(Type.String()) });
export type DatasetList = Static<typeof DatasetList>;

export const DatasetPath = Type.Object({ dataset_id: DatasetIdRef });
