import type { ApiKey, ApiKeyCreate, Member, MemberCreate, PlatformKey, PlatformKeyCreate } from '../../api/identity.js';
import { Forbidden } from '../errors.js';
import type { Caller, Role } from './caller.js';
import type { Directory } from './directory.js';
import type { Keys } from './keys.js';

export const toRole = (role: string | undefined): Role => (role?.toLowerCase() === 'admin' ? 'Admin' : 'Member');

/** Members and keys of the caller's tenant. Who may call what is the route policy's business. */
export class Identity {
  constructor(private readonly directory: Directory, private readonly keys: Keys) {}

  addMember(caller: Caller, req: MemberCreate): Promise<Member> {
    return this.directory.addMember(caller.tenant_id, req.email, toRole(req.role));
  }

  members(caller: Caller): Member[] {
    return this.directory.members(caller.tenant_id);
  }

  createApiKey(caller: Caller, req: ApiKeyCreate): Promise<ApiKey> {
    return this.keys.mint('tenant', caller.tenant_id, { name: req.name, role: toRole(req.role ?? 'member'), expires_at: req.expires_at, created_by: caller.user_id });
  }

  apiKeys(caller: Caller): ApiKey[] {
    return this.keys.list('tenant', caller.tenant_id);
  }

  revokeApiKey(caller: Caller, id: number): Promise<ApiKey> {
    return this.keys.revoke('tenant', caller.tenant_id, id);
  }

  async createPlatformKey(caller: Caller, req: PlatformKeyCreate): Promise<PlatformKey> {
    return platformView(await this.keys.mint('platform', caller.tenant_id, { name: req.name, role: 'Admin', created_by: caller.user_id }));
  }

  platformKeys(caller: Caller): PlatformKey[] {
    return this.keys.list('platform', caller.tenant_id).map(platformView);
  }

  async revokePlatformKey(caller: Caller, id: number): Promise<PlatformKey> {
    return platformView(await this.keys.revoke('platform', caller.tenant_id, id));
  }

  /** A new platform key in place of the calling one, which is revoked in the same transaction. */
  async rotatePlatformKey(caller: Caller): Promise<PlatformKey> {
    const key = caller.key;
    if (caller.kind !== 'platform_key' || !key) throw new Forbidden('rotation needs a platform key');
    const current = this.keys.list('platform', key.tenant_id).find((k) => k.id === key.id)!;
    return platformView(await this.keys.mint('platform', key.tenant_id, { name: current.name, role: 'Admin', created_by: caller.user_id }, key.id));
  }
}

function platformView(key: ApiKey): PlatformKey {
  return { id: key.id, name: key.name, created_at: key.created_at, last_used_at: key.last_used_at, revoked_at: key.revoked_at, ...(key.token ? { token: key.token } : {}) };
}
