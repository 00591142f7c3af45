import { Type, type Static } from '@sinclair/typebox';
import { DatasetIdRef, DateTime, FieldPath, FieldPaths, Literals, Nullable } from './common.js';
import { LIMITS } from './limits.js';

export const TextField = Type.Object({
  field: FieldPath,
  boost: Type.Number({ default: 1, exclusiveMinimum: 0 }),
  natural_language: Type.Boolean({ default: false }),
});
export const SearchConfig = Type.Object({ text_fields: Type.Array(TextField, { maxItems: LIMITS.datasetFields }) });
export type SearchConfig = Static<typeof SearchConfig>;

const Fields = <T extends ReturnType<typeof Type.Object>>(item: T) => Type.Object({ fields: Type.Array(item, { maxItems: LIMITS.datasetFields }) });
export const SemanticConfig = Type.Object({
  document_embeddings: Type.Optional(Fields(Type.Object({ field: FieldPath, max_chars: Type.Integer({ default: 4000, minimum: 1 }) }))),
  filters: Type.Optional(Fields(Type.Object({ field: FieldPath, array: Type.Boolean({ default: false }) }))),
  image_embeddings: Type.Optional(
    Type.Object({ fields: Type.Array(Type.Object({ field: FieldPath }), { maxItems: LIMITS.datasetFields }), index_standalone: Type.Boolean({ default: false }) }),
  ),
  vocabulary: Type.Optional(Fields(Type.Object({ field: FieldPath }))),
  /** Addition: which embedder makes this source's vectors; members left out come from the server (SVC_EMBEDDER*). */
  embedder: Type.Optional(
    Type.Object(
      {
        provider: Literals(['builtin', 'openai', 'onnx'] as const),
        model: Type.Optional(Type.String({ minLength: 1, maxLength: LIMITS.name })),
        url: Type.Optional(Type.String({ minLength: 1, maxLength: LIMITS.url })),
        /** onnx: what the model was trained to see before a query or a document (e5: `query: `, `passage: `); kept as given, spaces included */
        query_prefix: Type.Optional(Type.String({ maxLength: LIMITS.embedderPrefix })),
        document_prefix: Type.Optional(Type.String({ maxLength: LIMITS.embedderPrefix })),
      },
      { additionalProperties: false },
    ),
  ),
});
export type SemanticConfig = Static<typeof SemanticConfig>;

export const Source = Type.Object({
  source_id: Type.Integer(),
  source_key: Type.String(),
  source_type: Type.String(),
  tenant_id: Type.String(),
  dataset_id: Type.String(),
  name: Type.String(),
  enabled: Type.Boolean(),
  connector_id: Nullable(Type.Integer()),
  bucket: Type.String(),
  prefix: Type.String(),
  access_role_ref: Type.String(),
  intake_role_ref: Nullable(Type.String()),
  external_id_configured: Type.Boolean(),
  retention_days: Nullable(Type.Integer()),
  format: Type.String(),
  parse_config: Type.Record(Type.String(), Type.Unknown()),
  transform_config: Type.Record(Type.String(), Type.Unknown()),
  search_config: SearchConfig,
  semantic_config: SemanticConfig,
  ingest_token_configured: Type.Boolean(),
  ingest_token_created_at: Nullable(DateTime),
  ingest_token_last_used_at: Nullable(DateTime),
  ingest_token_revoked_at: Nullable(DateTime),
  created_at: DateTime,
  updated_at: DateTime,
});
export type Source = Static<typeof Source>;

export const TransformConfigSchema = Type.Object(
  {
    id_field: Type.Optional(Nullable(FieldPath)),
    title_field: Type.Optional(Nullable(FieldPath)),
    body_field: Type.Optional(Nullable(FieldPath)),
    time_field: Type.Optional(Nullable(FieldPath)),
    rename: Type.Optional(Type.Record(Type.String(), FieldPath, { maxProperties: LIMITS.datasetFields, propertyNames: { maxLength: LIMITS.fieldPath } })),
    drop: Type.Optional(FieldPaths()),
  },
  { additionalProperties: false },
);

export const ParseConfig = Type.Object(
  {
    format: Type.Optional(Literals(['ndjson', 'jsonl', 'json', 'csv', 'text'] as const)),
    /** how a text line's time is read: a name of TIME_FORMAT_NAMES or a strftime-like pattern (engine/ingest/lineTime.ts) */
    time_format: Type.Optional(Type.String({ minLength: 1, maxLength: LIMITS.fieldPath })),
  },
  { additionalProperties: true, maxProperties: LIMITS.configMembers, propertyNames: { maxLength: LIMITS.fieldPath } },
);

const sourceMembers = {
  dataset_id: DatasetIdRef,
  name: Type.String({ minLength: 1, maxLength: LIMITS.name }),
  source_key: Type.String({ maxLength: LIMITS.sourceKey, pattern: `^[A-Za-z0-9][A-Za-z0-9_.-]{0,${LIMITS.sourceKey - 1}}$` }),
  source_type: Type.String({ minLength: 1, maxLength: LIMITS.id }),
  connector_id: Type.Optional(Nullable(Type.Integer())),
  enabled: Type.Optional(Type.Boolean()),
  parse_config: Type.Optional(ParseConfig),
  retention_days: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
  search_config: Type.Optional(SearchConfig),
  semantic_config: Type.Optional(SemanticConfig),
  transform_config: Type.Optional(TransformConfigSchema),
};

export const SourcePut = Type.Object(
  {
    ...sourceMembers,
    bucket: Type.String({ minLength: 1, maxLength: LIMITS.name }),
    access_role_ref: Type.String({ minLength: 1, maxLength: LIMITS.url }),
    intake_role_ref: Type.Optional(Nullable(Type.String({ maxLength: LIMITS.url }))),
    prefix: Type.Optional(Type.String({ default: '', maxLength: LIMITS.url })),
  },
  { additionalProperties: false },
);
export type SourcePut = Static<typeof SourcePut>;

export const HostedSourcePut = Type.Object(sourceMembers, { additionalProperties: false });
export type HostedSourcePut = Static<typeof HostedSourcePut>;

export const SourcePath = Type.Object({ source_id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) });
export const SourceKeyPath = Type.Object({ source_key: Type.String({ minLength: 1, maxLength: LIMITS.sourceKey }) });
export const SourceList = Type.Object({ sources: Type.Array(Source), next_cursor: Nullable(Type.String()) });
export const SourceListQuery = Type.Object({ dataset_id: Type.Optional(DatasetIdRef) });
export const IngestTokenMinted = Type.Object({ source_id: Type.Integer(), created_at: DateTime, token: Type.String() });
export type IngestTokenMinted = Static<typeof IngestTokenMinted>;
