import { Type, type Static } from '@sinclair/typebox';
import { DateTime, Id, Literals, Nullable } from './common.js';
import { LIMITS } from './limits.js';

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

export const Role = Literals(['Admin', 'Member'] as const);
/** Roles are accepted in any case (`admin`, `Admin`) and stored capitalised. */
export const RoleInput = Literals(['Admin', 'Member', 'admin', 'member'] as const);

export const ApiKeyCreate = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: LIMITS.name }),
    role: Type.Optional(RoleInput),
    expires_at: Type.Optional(Nullable(DateTime)),
  },
  { additionalProperties: false },
);
export type ApiKeyCreate = Static<typeof ApiKeyCreate>;

export const ApiKey = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  role: Type.String(),
  prefix: Type.String({ description: 'the start of the token, enough to recognise it' }),
  created_at: DateTime,
  expires_at: Nullable(DateTime),
  last_used_at: Nullable(DateTime),
  revoked_at: Nullable(DateTime),
  token: Type.Optional(Nullable(Type.String({ description: 'the key itself: in the response that mints it, never again' }))),
});
export type ApiKey = Static<typeof ApiKey>;
export const ApiKeyList = Type.Object({ api_keys: Type.Array(ApiKey), next_cursor: Nullable(Type.String()) });

export const PlatformKeyCreate = Type.Object({ name: Type.String({ minLength: 1, maxLength: LIMITS.name }) }, { additionalProperties: false });
export type PlatformKeyCreate = Static<typeof PlatformKeyCreate>;
export const PlatformKey = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  created_at: DateTime,
  last_used_at: Type.Optional(Nullable(DateTime)),
  revoked_at: Type.Optional(Nullable(DateTime)),
  token: Type.Optional(Nullable(Type.String())),
});
export type PlatformKey = Static<typeof PlatformKey>;
export const PlatformKeyList = Type.Object({ platform_keys: Type.Array(PlatformKey), next_cursor: Nullable(Type.String()) });

export const KeyPath = Type.Object({ id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) });

export const MemberCreate = Type.Object({ email: Type.String({ minLength: 3, maxLength: LIMITS.name, pattern: '^[^@\\s]+@[^@\\s]+$' }), role: RoleInput }, { additionalProperties: false });
export type MemberCreate = Static<typeof MemberCreate>;
export const Member = Type.Object({ user_id: Type.String(), email: Type.String(), role: Type.String(), created_at: DateTime });
export type Member = Static<typeof Member>;
export const MemberList = Type.Object({ members: Type.Array(Member), next_cursor: Nullable(Type.String()) });

export const TenantCreate = Type.Object({ name: Type.String({ minLength: 1, maxLength: LIMITS.name }) }, { additionalProperties: false });
export type TenantCreate = Static<typeof TenantCreate>;
export const Tenant = Type.Object({ tenant_id: Type.String(), name: Type.String(), created_at: DateTime });
export type Tenant = Static<typeof Tenant>;
export const TenantList = Type.Object({ tenants: Type.Array(Tenant), next_cursor: Nullable(Type.String()) });
export const TenantPath = Type.Object({ tenant_id: Id });
