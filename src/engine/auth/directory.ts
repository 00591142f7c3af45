import type { Me, Member } from '../../api/identity.js';
import { LIMITS } from '../../api/limits.js';
import { Conflict, Forbidden, NotFound, Unauthenticated } from '../errors.js';
import { newId, now } from '../ids.js';
import { SYSTEM, scanPrefix, type Store } from '../store/db.js';
import type { Caller, Principal, Role } from './caller.js';
import { keys } from '../store/keys.js';

/** Tenant ids are made here and short; a longer one names no tenant (and would not fit in an LMDB key). */
const possibleTenant = (tenantId: string) => tenantId.length <= LIMITS.id;

interface User { user_id: string; email: string; is_staff: boolean; created_at: string }
export interface TenantState { tenant_id: string; name: string; created_at: string; platform_tenant_id?: string }

/** Users, tenants and who is a member of what. Users live under SYSTEM; a membership under its tenant too. */
export class Directory {
  constructor(private readonly store: Store) {}

  private get db() {
    return this.store.meta;
  }

  user(userId: string): User | undefined {
    return this.db.get(keys.user(SYSTEM, userId));
  }

  userByEmail(email: string): User | undefined {
    const id = this.db.get(keys.email(SYSTEM, email.toLowerCase()));
    return id ? this.user(id) : undefined;
  }

  tenant(tenantId: string): TenantState | undefined {
    return possibleTenant(tenantId) ? this.db.get(keys.tenant(SYSTEM, tenantId)) : undefined;
  }

  tenants(): TenantState[] {
    return [...scanPrefix<TenantState>(this.db, keys.tenant(SYSTEM))].map((e) => e.value);
  }

  /** Creates a tenant with `email` as its admin (the user is created when new). */
  async createTenant(name: string, email: string): Promise<{ tenant: TenantState; user: User }> {
    const tenant: TenantState = { tenant_id: newId('ten'), name, created_at: now() };
    const user = await this.db.transaction(() => {
      this.db.put(keys.tenant(SYSTEM, tenant.tenant_id), tenant);
      return this.putMember(tenant.tenant_id, email, 'Admin');
    });
    return { tenant, user };
  }

  /** A tenant provisioned by a platform: no members; the platform's keys act in it. */
  async provisionTenant(platformTenantId: string, name: string): Promise<TenantState> {
    const tenant: TenantState = { tenant_id: newId('ten'), name, created_at: now(), platform_tenant_id: platformTenantId };
    await this.db.put(keys.tenant(SYSTEM, tenant.tenant_id), tenant);
    return tenant;
  }

  provisionedBy(platformTenantId: string): TenantState[] {
    return this.tenants().filter((t) => t.platform_tenant_id === platformTenantId);
  }

  /** Adds a member or changes its role; the user is created when new. */
  async addMember(tenantId: string, email: string, role: Role): Promise<Member> {
    const user = await this.db.transaction(() => this.putMember(tenantId, email, role));
    return { user_id: user.user_id, email: user.email, role, created_at: this.db.get(keys.member(tenantId, user.user_id)).created_at };
  }

  members(tenantId: string): Member[] {
    return [...scanPrefix<{ role: Role; created_at: string }>(this.db, keys.member(tenantId))].flatMap(({ key, value }) => {
      const user = this.user(String(key[2]));
      return user ? [{ user_id: user.user_id, email: user.email, role: value.role, created_at: value.created_at }] : [];
    });
  }

  /** Call inside a write transaction. */
  private putMember(tenantId: string, email: string, role: Role): User {
    let user = this.userByEmail(email);
    if (!user) {
      user = { user_id: newId('usr'), email: email.toLowerCase(), is_staff: false, created_at: now() };
      this.db.put(keys.user(SYSTEM, user.user_id), user);
      this.db.put(keys.email(SYSTEM, user.email), user.user_id);
    }
    const previous = this.db.get(keys.member(tenantId, user.user_id));
    this.db.put(keys.member(tenantId, user.user_id), { role, created_at: previous?.created_at ?? now() });
    this.db.put(keys.membership(SYSTEM, user.user_id, tenantId), role);
    return user;
  }

  /** Removes a tenant's record and memberships; call inside a write transaction. */
  removeTenant(tenantId: string): void {
    for (const { key } of scanPrefix(this.db, keys.member(tenantId))) this.db.remove(keys.membership(SYSTEM, String(key[2]), tenantId));
    this.db.remove(keys.tenant(SYSTEM, tenantId));
  }

  role(tenantId: string, userId: string): Role | undefined {
    return possibleTenant(tenantId) ? this.db.get(keys.membership(SYSTEM, userId, tenantId)) : undefined;
  }

  /** The tenants a principal reaches, with its role in each. */
  reach(principal: Principal): { tenant: TenantState; role: Role }[] {
    const key = principal.key;
    if (principal.kind === 'tenant_key' && key) {
      const tenant = this.tenant(key.tenant_id);
      return tenant ? [{ tenant, role: key.role }] : [];
    }
    if (principal.kind === 'platform_key' && key) {
      const own = this.tenant(key.tenant_id);
      return [...(own ? [own] : []), ...this.provisionedBy(key.tenant_id)].map((tenant) => ({ tenant, role: 'Admin' as Role }));
    }
    return [...scanPrefix<Role>(this.db, keys.membership(SYSTEM, principal.user_id))].flatMap(({ key: k, value }) => {
      const tenant = this.tenant(String(k[3]));
      return tenant ? [{ tenant, role: value }] : [];
    });
  }

  /** The caller a principal becomes in a tenant; 403 when it cannot reach it (or the tenant does not exist). */
  callerIn(principal: Principal, tenantId: string): Caller {
    const role = this.roleIn(principal, tenantId);
    if (!role) throw new Forbidden(`no access to tenant '${tenantId}'`);
    return { ...principal, tenant_id: tenantId, role };
  }

  private roleIn(principal: Principal, tenantId: string): Role | undefined {
    const key = principal.key;
    if (principal.kind === 'tenant_key') return key?.tenant_id === tenantId ? key.role : undefined;
    if (principal.kind === 'platform_key') {
      const tenant = this.tenant(tenantId);
      return tenant && key && (tenant.tenant_id === key.tenant_id || tenant.platform_tenant_id === key.tenant_id) ? 'Admin' : undefined;
    }
    return this.role(tenantId, principal.user_id);
  }

  me(principal: Principal): Me {
    const tenants = this.reach(principal).map(({ tenant, role }) => ({ tenant_id: tenant.tenant_id, name: tenant.name, role, is_admin: role === 'Admin' }));
    if (principal.key) return { user_id: principal.user_id, email: '', is_staff: false, tenants };
    const user = this.user(principal.user_id);
    if (!user) throw new Unauthenticated('unknown user');
    return { user_id: user.user_id, email: user.email, is_staff: user.is_staff, tenants };
  }

  /** The principal of an existing user, by e-mail: 404 when there is none. */
  principalByEmail(email: string): Principal {
    const user = this.userByEmail(email);
    if (!user) throw new NotFound(`user '${email}' not found`);
    return { user_id: user.user_id, kind: 'local' };
  }

  /** The first admin of a tenant: who a local command acts as. */
  firstAdmin(tenantId: string): Principal {
    for (const { key, value } of scanPrefix<{ role: Role }>(this.db, keys.member(tenantId))) {
      if (value.role === 'Admin') return { user_id: String(key[2]), kind: 'local' };
    }
    throw new NotFound(`tenant '${tenantId}' has no admin`);
  }

  assertInitialized(): TenantState[] {
    const tenants = this.tenants();
    if (tenants.length === 0) throw new Conflict('this data dir is not initialized: run `svc init` first');
    return tenants;
  }
}
