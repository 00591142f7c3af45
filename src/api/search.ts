import { Type, type Static } from '@sinclair/typebox';
import { DateTime, Literals as lit, Nullable } from './common.js';
import { LIMITS } from './limits.js';

export const WhereItem = Type.Object(
  {
    field: Type.String({ minLength: 1, maxLength: LIMITS.fieldPath }),
    op: lit(['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'nin', 'exists', 'prefix', 'contains']),
    value: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: false },
);
export type WhereItem = Static<typeof WhereItem>;

export const TimeFilter = Type.Object(
  {
    field: Type.Optional(Type.String({ minLength: 1, maxLength: LIMITS.fieldPath })),
    gte: Type.Optional(Type.String({ maxLength: 64 })),
    lt: Type.Optional(Type.String({ maxLength: 64 })),
    last: Type.Optional(Type.String({ maxLength: 32, description: 'a duration back from now: 30s, 15m, 24h, 7d, 2w' })),
  },
  { additionalProperties: false },
);
export type TimeFilter = Static<typeof TimeFilter>;

export const AggregationSpec = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: LIMITS.name }),
    type: lit(['terms', 'date_histogram', 'histogram', 'stats', 'count']),
    field: Type.Optional(Type.String({ minLength: 1, maxLength: LIMITS.fieldPath })),
    size: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
    interval: Type.Optional(Type.Union([Type.String({ maxLength: 32 }), Type.Number({ exclusiveMinimum: 0 })])),
  },
  { additionalProperties: false },
);
export type AggregationSpec = Static<typeof AggregationSpec>;

export const SearchMode = lit(['text', 'semantic', 'hybrid']);

/**
 * One key of a search's order: `score` (or `_score`), `time`, `id`, `created_at`, or a record field
 * path as `where` names it. Without `order`: descending for score, time and created_at, else ascending.
 */
export const SortKey = Type.Object(
  {
    field: Type.String({ minLength: 1, maxLength: LIMITS.fieldPath }),
    order: Type.Optional(lit(['asc', 'desc'])),
  },
  { additionalProperties: false },
);
export type SortKey = Static<typeof SortKey>;

export const SearchRequest = Type.Object(
  {
    text: Type.Optional(Type.String({ default: '', maxLength: LIMITS.text })),
    q: Type.Optional(Nullable(Type.String({ maxLength: LIMITS.q }))),
    datasets: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: LIMITS.datasetId }), { maxItems: LIMITS.datasets })),
    /** `selected`: exactly `datasets` (at least one); `all`: every dataset of the tenant (`datasets` empty). Default: `selected` when `datasets` names any, else `all`. */
    dataset_scope: Type.Optional(lit(['all', 'selected'])),
    /** `text`: text records only; `image`: image objects only (an image ingested is one record); null: both. */
    content_filter: Type.Optional(Nullable(lit(['text', 'image']))),
    mode: Type.Optional(SearchMode),
    semantic: Type.Optional(Type.Boolean()),
    semantic_min_score: Type.Optional(Nullable(Type.Number())),
    max_expansion_terms: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
    cursor: Type.Optional(Nullable(Type.String({ maxLength: LIMITS.cursor }))),
    aggregations: Type.Optional(Type.Array(AggregationSpec, { maxItems: LIMITS.aggregations })),
    collapse: Type.Optional(Nullable(Type.Object({ field: Type.String({ minLength: 1, maxLength: LIMITS.fieldPath }) }, { additionalProperties: false }))),
    time: Type.Optional(Nullable(TimeFilter)),
    where: Type.Optional(Type.Array(WhereItem, { maxItems: LIMITS.whereItems })),
    /** Addition: the order of the results, key by key; ties go to the next key, then to the default order (score, or newest first) */
    sort: Type.Optional(Type.Array(SortKey, { maxItems: LIMITS.sortKeys })),
  },
  { additionalProperties: false },
);
export type SearchRequest = Static<typeof SearchRequest>;

export const Provenance = Type.Object({
  dataset_id: Type.String(),
  tenant_id: Type.String(),
  source_bucket: Type.String(),
  source_key: Type.String(),
  source_etag: Type.String(),
  line: Type.Integer({ minimum: 1 }),
  transform_version: Type.Integer(),
});

export const ResultRecord = Type.Object({
  id: Type.String(),
  title: Nullable(Type.String()),
  body: Type.String(),
  metadata: Type.Record(Type.String(), Type.Unknown()),
  score: Type.Number(),
  score_kind: Type.String(),
  snippets: Type.Array(Type.String()),
  created_at: DateTime,
  /** Addition: the record's own time (from its time field), when it has one. */
  time: Nullable(DateTime),
  provenance: Provenance,
});
export type ResultRecord = Static<typeof ResultRecord>;

export const Total = Type.Object({ relation: lit(['eq', 'gte']), value: Type.Integer() });

/**
 * Addition: a note on how a search was answered. `unknown_field` names a field (of `where`, `q`,
 * `collapse` or an aggregation) that no searched dataset has, with the known names closest to it.
 */
export const SearchWarning = Type.Object({
  code: Type.String(),
  message: Type.String(),
  field: Type.Optional(Type.String()),
  suggestions: Type.Optional(Type.Array(Type.String())),
});
export type SearchWarning = Static<typeof SearchWarning>;

export const SearchEnvelope = Type.Object({
  search_id: Type.String(),
  took_ms: Type.Number(),
  mode: Type.String(),
  total: Total,
  records: Type.Array(ResultRecord),
  aggregations: Type.Record(Type.String(), Type.Unknown()),
  next_cursor: Nullable(Type.String()),
  /** Addition: what the caller should know of how the search was answered (a ranking cut short, …). */
  warnings: Type.Optional(Type.Array(SearchWarning)),
});
export type SearchEnvelope = Static<typeof SearchEnvelope>;
