import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { ApiKey, PlatformKey } from '../../api/identity.js';
import { Conflict, DiskFull, NotFound, Unauthenticated } from '../errors.js';
import { now } from '../ids.js';
import { logProblem } from '../log.js';
import { SYSTEM, scanPrefix, type Store } from '../store/db.js';
import type { Principal, Role } from './caller.js';
import type { TokenCache } from './tokenCache.js';
import { keys } from '../store/keys.js';

export type KeyKind = 'tenant' | 'platform';
export const KEY_PREFIX: Record<KeyKind, string> = { tenant: 'svctk.v1.', platform: 'svcpk.v1.' };
const TABLE: Record<KeyKind, string> = { tenant: 'apikey', platform: 'platkey' };
/** last_used_at is written at most this often per key, not on every request. */
const LAST_USED_RESOLUTION_MS = 60_000;

/** A key as stored: its secret only as a SHA-256 hash. */
interface KeyState {
  key_id: string;
  id: number;
  kind: KeyKind;
  tenant_id: string;
  name: string;
  role: Role;
  hash: string;
  created_by: string;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
}

const sha256 = (s: string) => createHash('sha256').update(s).digest();

/** Tenant keys (`svctk.v1.<key id>.<secret>`) and platform keys (`svcpk.v1.…`): minted, listed, revoked, verified. */
export class Keys {
  private readonly lastUsedWritten = new Map<string, number>();

  constructor(private readonly store: Store, private readonly cache: TokenCache) {}

  static isKey(token: string): boolean {
    return token.startsWith(KEY_PREFIX.tenant) || token.startsWith(KEY_PREFIX.platform);
  }

  async mint(kind: KeyKind, tenantId: string, fields: { name: string; role: Role; expires_at?: string | null; created_by: string }, replacing?: number): Promise<ApiKey> {
    const keyId = randomBytes(8).toString('hex');
    const secret = randomBytes(32).toString('base64url');
    const at = now();
    const state = await this.store.meta.transaction(() => {
      if (replacing === undefined && this.list(kind, tenantId).some((k) => k.name === fields.name && !k.revoked_at)) return null;
      const id = (this.store.meta.get(keys.counter(tenantId, TABLE[kind])) ?? 0) + 1;
      const key: KeyState = {
        key_id: keyId, id, kind, tenant_id: tenantId, name: fields.name, role: fields.role, hash: sha256(secret).toString('hex'),
        created_by: fields.created_by, created_at: at, expires_at: fields.expires_at ?? null, revoked_at: null, last_used_at: null,
      };
      this.store.meta.put(keys.counter(tenantId, TABLE[kind]), id);
      this.store.meta.put(keys.apiKey(SYSTEM, keyId), key);
      this.store.meta.put([tenantId, TABLE[kind], id], keyId);
      if (replacing !== undefined) this.revokeInTxn(kind, tenantId, replacing, at);
      return key;
    });
    if (!state) throw new Conflict(`a ${kind} key named '${fields.name}' already exists`);
    return { ...this.view(state), token: `${KEY_PREFIX[kind]}${keyId}.${secret}` };
  }

  list(kind: KeyKind, tenantId: string): ApiKey[] {
    return [...scanPrefix<string>(this.store.meta, [tenantId, TABLE[kind]])].flatMap(({ value }) => {
      const key: KeyState | undefined = this.store.meta.get(keys.apiKey(SYSTEM, value));
      return key ? [this.view(key)] : [];
    });
  }

  async revoke(kind: KeyKind, tenantId: string, id: number): Promise<ApiKey> {
    const key = await this.store.meta.transaction(() => this.revokeInTxn(kind, tenantId, id, now()));
    return this.view(key);
  }

  private revokeInTxn(kind: KeyKind, tenantId: string, id: number, at: string): KeyState {
    this.cache.clear();
    const keyId = this.store.meta.get([tenantId, TABLE[kind], id]);
    const key: KeyState | undefined = keyId && this.store.meta.get(keys.apiKey(SYSTEM, keyId));
    if (!key) throw new NotFound(`${kind} key ${id} not found`);
    key.revoked_at ??= at;
    this.store.meta.put(keys.apiKey(SYSTEM, keyId), key);
    return key;
  }

  /** The principal a key token stands for; 401 when malformed, unknown, wrong, revoked or expired. */
  verify(token: string): Principal {
    const cached = this.cache.get(token);
    if (cached) return cached;
    const kind: KeyKind = token.startsWith(KEY_PREFIX.platform) ? 'platform' : 'tenant';
    const parts = token.slice(KEY_PREFIX[kind].length).split('.');
    const [keyId, secret] = parts.length === 2 ? parts : [];
    const key: KeyState | undefined = keyId && secret ? this.store.meta.get(keys.apiKey(SYSTEM, keyId)) : undefined;
    const expected = key ? Buffer.from(key.hash, 'hex') : sha256('');
    const matches = timingSafeEqual(expected, sha256(secret ?? '')) && key !== undefined && key.kind === kind;
    if (!matches) throw new Unauthenticated('invalid API key');
    if (key.revoked_at) throw new Unauthenticated('API key revoked');
    if (key.expires_at && Date.parse(key.expires_at) <= Date.now()) throw new Unauthenticated('API key expired');
    this.touch(key);
    const principal: Principal = { user_id: `key:${kind}:${key.tenant_id}:${key.id}`, kind: kind === 'tenant' ? 'tenant_key' : 'platform_key', key: { id: key.id, tenant_id: key.tenant_id, role: key.role } };
    this.cache.set(token, principal, key.expires_at ? Date.parse(key.expires_at) : null, () => this.touch(key));
    return principal;
  }

  private touch(key: KeyState): void {
    const last = this.lastUsedWritten.get(key.key_id) ?? 0;
    if (Date.now() - last < LAST_USED_RESOLUTION_MS) return;
    this.lastUsedWritten.set(key.key_id, Date.now());
    // written in the background, as a search is answered: a key in use on a full disk still works
    this.store.meta
      .transaction(() => {
        const fresh: KeyState | undefined = this.store.meta.get(keys.apiKey(SYSTEM, key.key_id));
        if (fresh) this.store.meta.put(keys.apiKey(SYSTEM, key.key_id), { ...fresh, last_used_at: now() });
      })
      .catch((err) => {
        if (!(err instanceof DiskFull)) logProblem('last_used_not_written', err, { key_id: key.key_id });
      });
  }

  /** Removes every key of a tenant; call inside a write transaction. */
  removeTenant(tenantId: string): void {
    this.cache.clear();
    for (const kind of ['tenant', 'platform'] as const) {
      for (const { key, value } of scanPrefix<string>(this.store.meta, [tenantId, TABLE[kind]])) {
        this.store.meta.remove(keys.apiKey(SYSTEM, value));
        this.store.meta.remove(key);
      }
    }
  }

  private view(key: KeyState): ApiKey & PlatformKey {
    return {
      id: key.id, name: key.name, role: key.role, prefix: `${KEY_PREFIX[key.kind]}${key.key_id}`,
      created_at: key.created_at, expires_at: key.expires_at, last_used_at: key.last_used_at, revoked_at: key.revoked_at,
    };
  }
}
