import { existsSync } from 'node:fs';
import { configFromEnv, mapSizeFromEnv } from '../engine/config.js';
import { Invalid, NotFound, Unauthenticated } from '../engine/errors.js';
import { defaultDataDir } from './paths.js';
import { liveServer } from '../engine/serverInfo.js';
import { loadToken } from './credentials.js';
import { resolveProfile } from './profiles.js';
import { remoteService } from './remoteService.js';
import type { Service } from './service.js';
import { layout } from '../engine/layout.js';

export interface GlobalOptions {
  dataDir?: string;
  url?: string;
  token?: string;
  tenant?: string;
  profile?: string;
  /** set when --data-dir or SVC_DATA_DIR names a data dir: it then wins over a saved profile */
  dataDirGiven?: boolean;
  output?: string;
  json?: boolean;
  yes?: boolean;
}

/** Lifetime of the session a local command mints to talk to the server holding its data dir. */
const DELEGATED_SESSION_TTL = 300;

/** An empty value (`SVC_URL=`) counts as unset, so a variable can be blanked out without unsetting it. */
export const given = (v: string | undefined) => (v ? v : undefined);

export const dataDirOf = (g: GlobalOptions) => given(g.dataDir) ?? defaultDataDir();

/**
 * Remote mode with --url/SVC_URL; else (unless --data-dir or SVC_DATA_DIR names a data dir) the
 * profile's server, if it has one; else the server holding the data dir, if one runs; else the engine in this process.
 * Flags win over environment variables (commander reads both), and both win over the profile.
 */
export async function connect(g: GlobalOptions): Promise<Service> {
  const [url, token, tenant] = [given(g.url), given(g.token), given(g.tenant)];
  const { name, explicit, profile } = resolveProfile(given(g.profile));
  if (url) {
    if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) throw new Invalid(`invalid server URL '${url}': use http(s)://host:port`);
    const stored = token ?? loadToken(name, url);
    if (!stored) throw new Unauthenticated('a token is required with --url: pass --token, set SVC_TOKEN or run `svc login`');
    return remoteService({ url, token: stored, tenant: tenant ?? (() => onlyTenant(url, stored)) });
  }
  if (explicit && !profile) throw new NotFound(`no profile '${name}': run \`svc login --profile ${name} --url URL\``);
  if (profile?.url && !g.dataDirGiven) {
    const stored = token ?? loadToken(name, profile.url);
    if (!stored) throw new Unauthenticated(`no stored token for profile '${name}' (${profile.url}): run \`svc login --profile ${name} --url ${profile.url}\``);
    return remoteService({ url: profile.url, token: stored, tenant: tenant ?? profile.tenant ?? (() => onlyTenant(profile.url!, stored)) });
  }
  if (token) throw new Invalid('a token is for remote mode: give --url or SVC_URL (or run `svc login`); local commands act as the data dir\'s admin');
  const dataDir = dataDirOf(g);
  const server = liveServer(dataDir);
  if (server) {
    const session = await (await import('../engine/auth/localSession.js')).mintLocalSession(dataDir, { tenant }, DELEGATED_SESSION_TTL, { mapSize: mapSizeFromEnv() });
    return remoteService({ url: server.url, token: session.token, tenant: session.tenant_id });
  }
  if (!existsSync(layout.meta(dataDir))) throw new NotFound(`no data dir at ${dataDir}: run \`svc init\` first`);
  // loaded here: a remote command, --help and --version never load the engine
  const [{ Engine }, { localService }] = await Promise.all([import('../engine/index.js'), import('./localService.js')]);
  const engine = await Engine.open(dataDir, { config: configFromEnv() });
  try {
    return localService(engine, engine.localCaller(tenant));
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
