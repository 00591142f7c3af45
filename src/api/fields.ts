import { Type, type Static } from '@sinclair/typebox';
import { DatasetIdRef, FieldPath } from './common.js';

const FieldFlags = {
  indexed: Type.Boolean(),
  stored: Type.Boolean(),
  fast: Type.Boolean(),
  seen_count: Type.Integer(),
};

export const FieldVariant = Type.Object({
  dataset_id: Type.String(),
  tenant_id: Type.String(),
  field_path: Type.String(),
  physical_field: Type.String(),
  value_type: Type.String(),
  sample_value: Type.String(),
  ...FieldFlags,
});

export const Field = Type.Object({
  dataset_id: Type.String(),
  tenant_id: Type.String(),
  field_path: Type.String(),
  type: Type.String(),
  ...FieldFlags,
  variants: Type.Array(FieldVariant),
});
export type Field = Static<typeof Field>;

export const FieldList = Type.Object({ fields: Type.Array(Field) });
export type FieldList = Static<typeof FieldList>;

export const FieldQuery = Type.Object({
  dataset_id: Type.Optional(DatasetIdRef),
  prefix: Type.Optional(FieldPath),
});
export type FieldQuery = Static<typeof FieldQuery>;
