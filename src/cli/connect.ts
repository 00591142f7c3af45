import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { mintLocalSession } from '../engine/auth/localSession.js';
import { Invalid, NotFound, Unauthenticated } from '../engine/errors.js';
import { Engine } from '../engine/index.js';
import { defaultDataDir } from '../engine/paths.js';
import { liveServer } from '../engine/serverInfo.js';
import { localService } from './localService.js';
import { remoteService } from './remoteService.js';
import type { Service } from './service.js';

export interface GlobalOptions {
  dataDir?: string;
  url?: string;
  token?: string;
  tenant?: string;
  output?: string;
  json?: boolean;
  yes?: boolean;
}

/** Lifetime of the session a local command mints to talk to the server holding its data dir. */
const DELEGATED_SESSION_TTL = 300;

export const dataDirOf = (g: GlobalOptions) => g.dataDir ?? defaultDataDir();

/**
 * Remote mode with --url; else the server holding the data dir, if one runs; else the engine in
 * this process. Flags win over environment variables (commander reads both).
 */
export async function connect(g: GlobalOptions): Promise<Service> {
  if (g.url) {
    if (!g.token) throw new Unauthenticated('a token is required with --url: pass --token or set SVC_TOKEN');
    return remoteService({ url: g.url, token: g.token, tenant: g.tenant ?? (await onlyTenant(g.url, g.token)) });
  }
  const dataDir = dataDirOf(g);
  const server = liveServer(dataDir);
  if (server) {
    const session = await mintLocalSession(dataDir, { tenant: g.tenant }, DELEGATED_SESSION_TTL);
    return remoteService({ url: server.url, token: session.token, tenant: session.tenant_id });
  }
  if (!existsSync(join(dataDir, 'meta'))) throw new NotFound(`no data dir at ${dataDir}: run \`svc init\` first`);
  const engine = await Engine.open(dataDir);
  try {
    return localService(engine, engine.localCaller(g.tenant));
  } catch (err) {
    await engine.close();
    throw err;
  }
}

async function onlyTenant(url: string, token: string): Promise<string | undefined> {
  const me = await remoteService({ url, token }).me();
  if (me.tenants.length === 1) return me.tenants[0].tenant_id;
  if (me.tenants.length === 0) return undefined;
  throw new Invalid(`this token reaches ${me.tenants.length} tenants: choose one with --tenant or SVC_TENANT`);
}
