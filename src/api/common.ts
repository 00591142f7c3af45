import { Type, type TLiteral, type TSchema, type TUnion } from '@sinclair/typebox';
import { LIMITS } from './limits.js';

export const DateTime = Type.String({ format: 'date-time' });
/** A string enum whose static type is the union of its values. */
export const Literals = <const T extends readonly string[]>(values: T) =>
  Type.Union(values.map((v) => Type.Literal(v))) as unknown as TUnion<{ -readonly [K in keyof T]: TLiteral<T[K] & string> }>;
export const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

/** An id the server made (tenant, run, job, session, …), as a path, query or body member names it. */
export const Id = Type.String({ minLength: 1, maxLength: LIMITS.id });
/** A dataset id naming an existing dataset: only its length is checked; one that is no slug is not found. */
export const DatasetIdRef = Type.String({ minLength: 1, maxLength: LIMITS.datasetId });
/** A field path a request names. */
export const FieldPath = Type.String({ minLength: 1, maxLength: LIMITS.fieldPath });
/** A list of field paths: no config can name more fields than a dataset may have. */
export const FieldPaths = (opts: { minItems?: number } = {}) => Type.Array(FieldPath, { ...opts, maxItems: LIMITS.datasetFields });

/** The page of a list that pages by cursor (views, exports): newest first, `limit` at most 500. */
export const PagedListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500 })),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: LIMITS.cursor })),
});

export const ApiError = Type.Object(
  {
    detail: Type.Union([Type.String(), Type.Object({ code: Type.String(), message: Type.String() })]),
  },
  { $id: 'ApiError' },
);

export const ValidationIssue = Type.Object({
  loc: Type.Array(Type.Union([Type.String(), Type.Integer()])),
  msg: Type.String(),
  type: Type.String(),
  ctx: Type.Optional(Type.Object({}, { additionalProperties: true })),
  input: Type.Optional(Type.Unknown()),
});
export const HTTPValidationError = Type.Object({ detail: Type.Array(ValidationIssue) }, { $id: 'HTTPValidationError' });

