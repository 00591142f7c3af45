import { Type, type Static } from '@sinclair/typebox';
import { DateTime, Literals, Nullable, PagedListQuery } from './common.js';
import { LIMITS } from './limits.js';
import { SearchEnvelope, SearchRequest } from './search.js';
import { SqlEnvelope } from './sql.js';

export const EndpointParamType = Literals(['string', 'integer', 'number', 'boolean', 'timestamp', 'string[]'] as const);
export type EndpointParamType = Static<typeof EndpointParamType>;

const ParamName = Type.String({ minLength: 1, maxLength: LIMITS.fieldPath, pattern: '^[A-Za-z_][A-Za-z0-9_]*$' });
const ParamValue = Type.Union([
  Type.String({ maxLength: LIMITS.whereValue }),
  Type.Number(),
  Type.Boolean(),
  Type.Array(Type.String({ maxLength: LIMITS.whereValue }), { maxItems: LIMITS.endpointParams }),
]);

export const EndpointParam = Type.Object(
  {
    name: ParamName,
    type: EndpointParamType,
    required: Type.Optional(Type.Boolean({ default: false })),
    default: Type.Optional(ParamValue),
    enum: Type.Optional(Type.Array(Type.Union([Type.String({ maxLength: LIMITS.whereValue }), Type.Number()]), { maxItems: LIMITS.endpointParams })),
    min: Type.Optional(Type.Number()),
    max: Type.Optional(Type.Number()),
    description: Type.Optional(Type.String({ maxLength: LIMITS.description })),
  },
  { additionalProperties: false },
);
export type EndpointParam = Static<typeof EndpointParam>;

/** Exactly one of `sql` and `search_request` (checked by the engine). */
export const EndpointCreate = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: LIMITS.datasetId, pattern: '^[a-z0-9][a-z0-9_-]*$' }),
    description: Type.Optional(Type.String({ maxLength: LIMITS.description })),
    /** one read-only statement; its parameters are DuckDB's named `$name`, bound, never spliced */
    sql: Type.Optional(Type.String({ minLength: 1, maxLength: LIMITS.sql })),
    /** a search whose string members may hold `{{param}}` placeholders */
    search_request: Type.Optional(SearchRequest),
    params: Type.Optional(Type.Array(EndpointParam, { maxItems: LIMITS.endpointParams })),
    /** seconds a run's answer is kept and served again for the same parameters; not cached when absent */
    cache_ttl_s: Type.Optional(Type.Integer({ minimum: 1, maximum: 86_400 })),
  },
  { additionalProperties: false },
);
export type EndpointCreate = Static<typeof EndpointCreate>;
export const EndpointUpdate = Type.Omit(EndpointCreate, ['name']);
export type EndpointUpdate = Static<typeof EndpointUpdate>;

export const Endpoint = Type.Object({
  name: Type.String(),
  description: Nullable(Type.String()),
  sql: Nullable(Type.String()),
  search_request: Nullable(SearchRequest),
  params: Type.Array(EndpointParam),
  cache_ttl_s: Nullable(Type.Integer()),
  created_at: DateTime,
  updated_at: DateTime,
});
export type Endpoint = Static<typeof Endpoint>;
export const EndpointList = Type.Object({ query_endpoints: Type.Array(Endpoint), next_cursor: Nullable(Type.String()) });
/** A page of the list, by name: `cursor` is the last name of the page before. */
export const EndpointListQuery = PagedListQuery;
export type EndpointListQuery = Static<typeof EndpointListQuery>;
export type EndpointList = Static<typeof EndpointList>;
export const EndpointPath = Type.Object({ name: Type.String({ minLength: 1, maxLength: LIMITS.datasetId }) });
/** a run's parameters in a POST body; in a GET, the query string holds them */
export const EndpointRun = Type.Object({ params: Type.Optional(Type.Record(Type.String(), ParamValue)) }, { additionalProperties: false });
export type EndpointRun = Static<typeof EndpointRun>;
export const EndpointRunQuery = Type.Record(Type.String(), Type.Union([Type.String(), Type.Array(Type.String())]));
/** what a run answers: the search envelope, or the SQL one (`mode: "sql"`) for a SQL endpoint */
export const EndpointAnswer = Type.Union([SqlEnvelope, SearchEnvelope]);
