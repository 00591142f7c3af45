import { existsSync } from 'node:fs';
import { NotFound } from '../errors.js';
import { openStore, type StoreOptions } from '../store/db.js';
import { Directory } from './directory.js';
import { loadSecret } from './secret.js';
import { Sessions } from './sessions.js';
import { layout } from '../layout.js';

/**
 * A console session minted from the data dir itself (its secret and directory), for whoever can read
 * the data dir: `svc token create`, and local commands that talk to the server holding the dir.
 * It reads LMDB without taking the data dir's lock, which LMDB allows across processes; `storeOpts`
 * opens it as the engine would (the map size of SVC_LMDB_MAP_SIZE, see config.ts).
 */
export async function mintLocalSession(dataDir: string, who: { email?: string; tenant?: string }, ttlSeconds: number, storeOpts: StoreOptions = {}) {
  if (!existsSync(layout.meta(dataDir))) throw new NotFound(`no data dir at ${dataDir}: run \`svc init\` first`);
  const store = openStore(dataDir, storeOpts);
  try {
    const directory = new Directory(store);
    const tenants = directory.assertInitialized();
    const tenant = who.tenant ? directory.tenant(who.tenant) : tenants[0];
    if (!tenant) throw new NotFound(`tenant '${who.tenant}' not found`);
    const principal = who.email ? directory.principalByEmail(who.email) : directory.firstAdmin(tenant.tenant_id);
    const token = await new Sessions(loadSecret(dataDir)).issue(principal.user_id, ttlSeconds);
    return { user_id: principal.user_id, tenant_id: tenant.tenant_id, token, expires_at: new Date(Date.now() + ttlSeconds * 1000).toISOString() };
  } finally {
    await store.close();
  }
}
