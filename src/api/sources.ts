import { Type, type Static } from '@sinclair/typebox';
import { DateTime, Nullable } from './common.js';

export const TextField = Type.Object({
  field: Type.String({ minLength: 1 }),
  boost: Type.Number({ default: 1, exclusiveMinimum: 0 }),
  natural_language: Type.Boolean({ default: false }),
});
export const SearchConfig = Type.Object({ text_fields: Type.Array(TextField) });
export type SearchConfig = Static<typeof SearchConfig>;

const Fields = <T extends ReturnType<typeof Type.Object>>(item: T) => Type.Object({ fields: Type.Array(item) });
export const SemanticConfig = Type.Object({
  document_embeddings: Type.Optional(Fields(Type.Object({ field: Type.String(), max_chars: Type.Integer({ default: 4000, minimum: 1 }) }))),
  filters: Type.Optional(Fields(Type.Object({ field: Type.String(), array: Type.Boolean({ default: false }) }))),
  image_embeddings: Type.Optional(
    Type.Object({ fields: Type.Array(Type.Object({ field: Type.String() })), index_standalone: Type.Boolean({ default: false }) }),
  ),
  vocabulary: Type.Optional(Fields(Type.Object({ field: Type.String() }))),
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
