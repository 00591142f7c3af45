import { Type, type Static } from '@sinclair/typebox';
import { DateTime, PagedListQuery, Id, Literals, Nullable } from './common.js';
import { LIMITS } from './limits.js';
import { ResultRecord, SearchRequest, Total } from './search.js';

export const ViewKind = Literals(['materialized', 'live'] as const);

/** Exactly one of `from_search_id` and `search_request` (checked by the engine: both or neither is a 422). */
export const ViewCreate = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: LIMITS.name }),
    kind: Type.Optional(ViewKind),
    from_search_id: Type.Optional(Id),
    search_request: Type.Optional(SearchRequest),
    /** when the view stops answering (404) and is swept; never, when absent */
    expires_at: Type.Optional(Nullable(DateTime)),
  },
  { additionalProperties: false },
);
export type ViewCreate = Static<typeof ViewCreate>;

export const View = Type.Object({
  view_id: Type.String(),
  name: Type.String(),
  kind: ViewKind,
  from_search_id: Nullable(Type.String()),
  /** the request as saved: what a live view runs, and what a materialized one was made from */
  search_request: SearchRequest,
  /** records the view held when it was made */
  record_count: Type.Integer(),
  /** Addition: records a deletion (deletion job, retention, dataset removal) has taken out of a materialized view since */
  deleted_count: Type.Integer(),
  total: Total,
  created_at: DateTime,
  expires_at: Nullable(DateTime),
});
export type View = Static<typeof View>;

export const ViewPath = Type.Object({ view_id: Id });
export const ViewListQuery = PagedListQuery;
export type ViewListQuery = Static<typeof ViewListQuery>;
export const ViewList = Type.Object({ views: Type.Array(View), next_cursor: Nullable(Type.String()) });
export type ViewList = Static<typeof ViewList>;

export const ViewRecordsQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  /** a live view's cursor is its view id and a search cursor (up to `LIMITS.cursor`) */
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: LIMITS.id + 2 + LIMITS.cursor })),
});
export type ViewRecordsQuery = Static<typeof ViewRecordsQuery>;

export const ViewRecords = Type.Object({
  view_id: Type.String(),
  kind: ViewKind,
  expires_at: Nullable(DateTime),
  returned: Type.Integer(),
  total: Total,
  records: Type.Array(ResultRecord),
  next_cursor: Nullable(Type.String()),
});
export type ViewRecords = Static<typeof ViewRecords>;
