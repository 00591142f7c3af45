import { Type, type TLiteral, type TSchema, type TUnion } from '@sinclair/typebox';

export const DateTime = Type.String({ format: 'date-time' });
/** A string enum whose static type is the union of its values. */
export const Literals = <const T extends readonly string[]>(values: T) =>
  Type.Union(values.map((v) => Type.Literal(v))) as unknown as TUnion<{ -readonly [K in keyof T]: TLiteral<T[K] & string> }>;
export const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

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

export const TenantHeader = Type.Object({ 'x-service-tenant-id': Type.Optional(Type.String()) });
