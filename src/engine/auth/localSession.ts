import { existsSync } from 'node:fs';
import { NotFound } from '../errors.js';
import { openStore, type StoreOptions } from '../store/db.js';
import { Directory } from './directory.js';
import { loadSecret } from './secret.js';
import { Sessions } from './sessions.js';
import { layout } from '../layout.js';

interface Who { email?: string; tenant?: string }

/**
 * Signs a token for a user of the data dir from the data dir itself (its secret and directory), for
 * whoever can read the data dir. It reads LMDB without taking the data dir's lock, which LMDB allows
 * across processes; `storeOpts` opens it as the engine would (SVC_LMDB_MAP_SIZE, see config.ts).
 * The user is the one with `email`, else the first admin of the tenant.
 */
async function signLocally<T>(dataDir: string, who: Who, storeOpts: StoreOptions, sign: (sessions: Sessions, userId: string, tenantId: string) => Promise<T>): Promise<T> {
  if (!existsSync(layout.meta(dataDir))) throw new NotFound(`no data dir at ${dataDir}: run \`svc init\` first`);
  const store = openStore(dataDir, storeOpts);
  try {
    const directory = new Directory(store);
    const tenants = directory.assertInitialized();
    const tenant = who.tenant ? directory.tenant(who.tenant) : tenants[0];
    if (!tenant) throw new NotFound(`tenant '${who.tenant}' not found`);
    const principal = who.email ? directory.principalByEmail(who.email) : directory.firstAdmin(tenant.tenant_id);
    return await sign(new Sessions(loadSecret(dataDir)), principal.user_id, tenant.tenant_id);
  } finally {
    await store.close();
  }
}

/** A console session: `svc token create`, and local commands that talk to the server holding the dir. */
export function mintLocalSession(dataDir: string, who: Who, ttlSeconds: number, storeOpts: StoreOptions = {}) {
  return signLocally(dataDir, who, storeOpts, async (sessions, user_id, tenant_id) => ({
    user_id,
    tenant_id,
    token: await sessions.issue(user_id, ttlSeconds),
    expires_at: new Date(Date.now() + ttlSeconds * 1000).toISOString(),
  }));
}

/** The code of a one-time web console sign-in link (`svc console`); the server spends it. */
export function mintSignInCode(dataDir: string, who: Who, ttlSeconds: number, storeOpts: StoreOptions = {}) {
  return signLocally(dataDir, who, storeOpts, async (sessions, user_id) => ({
    user_id,
    code: await sessions.issueSignIn(user_id, ttlSeconds),
    expires_at: new Date(Date.now() + ttlSeconds * 1000).toISOString(),
  }));
}
