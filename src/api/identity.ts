import { Type, type Static } from '@sinclair/typebox';

export const MeTenant = Type.Object({
  tenant_id: Type.String(),
  name: Type.String(),
  role: Type.String(),
  is_admin: Type.Boolean(),
});
export const Me = Type.Object({
  user_id: Type.String(),
  email: Type.String(),
  is_staff: Type.Boolean(),
  tenants: Type.Array(MeTenant),
});
export type Me = Static<typeof Me>;

export const InitResult = Type.Object({ tenant_id: Type.String(), user_id: Type.String(), token: Type.String() });
export type InitResult = Static<typeof InitResult>;
