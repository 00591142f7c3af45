import type { Me } from '../../api/identity.js';
import { Conflict, Forbidden, NotFound, Unauthenticated } from '../errors.js';
import { newId, now } from '../ids.js';
import { SYSTEM, scanPrefix, type Store } from '../store/db.js';
import type { Caller, Principal, Role } from './caller.js';

interface User { user_id: string; email: string; is_staff: boolean; created_at: string }
interface Tenant { tenant_id: string; name: string; created_at: string }

/** Users, tenants and who is a member of what. Users live under SYSTEM; a membership under its tenant too. */
export class Directory {
  constructor(private readonly store: Store) {}

  private get db() {
    return this.store.meta;
  }

  user(userId: string): User | undefined {
    return this.db.get([SYSTEM, 'user', userId]);
  }

  userByEmail(email: string): User | undefined {
    const id = this.db.get([SYSTEM, 'email', email.toLowerCase()]);
    return id ? this.user(id) : undefined;
  }

  tenant(tenantId: string): Tenant | undefined {
    return this.db.get([SYSTEM, 'tenant', tenantId]);
  }

  tenants(): Tenant[] {
    return [...scanPrefix<Tenant>(this.db, [SYSTEM, 'tenant'])].map((e) => e.value);
  }

  /** Creates a tenant with `email` as its admin (the user is created when new). */
  async createTenant(name: string, email: string): Promise<{ tenant: Tenant; user: User }> {
    const tenant: Tenant = { tenant_id: newId('ten'), name, created_at: now() };
    let user = this.userByEmail(email);
    await this.db.transaction(() => {
      if (!user) {
        user = { user_id: newId('usr'), email: email.toLowerCase(), is_staff: false, created_at: now() };
        this.db.put([SYSTEM, 'user', user.user_id], user);
        this.db.put([SYSTEM, 'email', user.email], user.user_id);
      }
      this.db.put([SYSTEM, 'tenant', tenant.tenant_id], tenant);
      this.putMembership(tenant.tenant_id, user.user_id, 'Admin');
    });
    return { tenant, user: user! };
  }

  private putMembership(tenantId: string, userId: string, role: Role) {
    this.db.put([tenantId, 'member', userId], { role, created_at: now() });
    this.db.put([SYSTEM, 'membership', userId, tenantId], role);
  }

  role(tenantId: string, userId: string): Role | undefined {
    return this.db.get([SYSTEM, 'membership', userId, tenantId]);
  }

  /** The caller a principal becomes in a tenant; 403 when it is not a member (or the tenant does not exist). */
  callerIn(principal: Principal, tenantId: string): Caller {
    const role = this.role(tenantId, principal.user_id);
    if (!role) throw new Forbidden(`no access to tenant '${tenantId}'`);
    return { ...principal, tenant_id: tenantId, role };
  }

  me(principal: Principal): Me {
    const user = this.user(principal.user_id);
    if (!user) throw new Unauthenticated('unknown user');
    const tenants = [...scanPrefix<Role>(this.db, [SYSTEM, 'membership', user.user_id])].flatMap(({ key, value }) => {
      const tenant = this.tenant(String(key[3]));
      return tenant ? [{ tenant_id: tenant.tenant_id, name: tenant.name, role: value, is_admin: value === 'Admin' }] : [];
    });
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
    for (const { key, value } of scanPrefix<{ role: Role }>(this.db, [tenantId, 'member'])) {
      if (value.role === 'Admin') return { user_id: String(key[2]), kind: 'local' };
    }
    throw new NotFound(`tenant '${tenantId}' has no admin`);
  }

  assertInitialized(): Tenant[] {
    const tenants = this.tenants();
    if (tenants.length === 0) throw new Conflict('this data dir is not initialized: run `svc init` first');
    return tenants;
  }
}
