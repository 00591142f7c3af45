import type { Command } from 'commander';
import { existsSync, lstatSync, readFileSync, readlinkSync } from 'node:fs';
import { layout } from '../engine/layout.js';
import { pidAlive } from '../engine/lock.js';
import { liveServer } from '../engine/serverInfo.js';
import { dataDirOf, given, type GlobalOptions } from './connect.js';
import { resolveProfile } from './profiles.js';

/** Where a setting came from: a flag, an environment variable, the saved profile, or svc's default. */
export type Origin = 'flag' | 'env' | 'profile' | 'config' | 'default';

/**
 * What `connect` would talk to, told without connecting, in its order: --url/SVC_URL; else the
 * profile's server unless a data dir was named; else the data dir (through its server when one holds it).
 */
export function modeOf(g: GlobalOptions): 'local' | 'remote' {
  if (given(g.url)) return 'remote';
  return resolveProfile(given(g.profile)).profile?.url && !g.dataDirGiven ? 'remote' : 'local';
}

const originOf = (cmd: Command, key: string, value: string | undefined): Origin | undefined => {
  if (!given(value)) return undefined;
  return cmd.getOptionValueSourceWithGlobals(key) === 'cli' ? 'flag' : 'env';
};

/** The pid the data dir's lock names, when a live process holds it. */
function lockHolder(dataDir: string): number | null {
  const path = layout.lock(dataDir);
  try {
    const pid = Number(lstatSync(path).isSymbolicLink() ? readlinkSync(path) : readFileSync(path, 'utf8').trim());
    return pidAlive(pid) ? pid : null;
  } catch {
    return null;
  }
}

/** `svc status`: every setting a command would use, and where each came from. */
export function status(cmd: Command, g: GlobalOptions) {
  const chosen = resolveProfile(given(g.profile));
  const profileUrl = chosen.profile?.url;
  const urlFrom = originOf(cmd, 'url', g.url) ?? (profileUrl && !g.dataDirGiven ? 'profile' : undefined);
  const dataDir = dataDirOf(g);
  const server = liveServer(dataDir);
  return {
    mode: modeOf(g),
    url: given(g.url) ?? (urlFrom === 'profile' ? profileUrl : null) ?? null,
    url_from: urlFrom ?? null,
    profile: chosen.profile ? chosen.name : null,
    profile_from: chosen.profile ? (originOf(cmd, 'profile', g.profile) ?? 'config') : null,
    token_from: originOf(cmd, 'token', g.token) ?? null,
    tenant: given(g.tenant) ?? chosen.profile?.tenant ?? null,
    data_dir: dataDir,
    data_dir_from: originOf(cmd, 'dataDir', g.dataDir) ?? 'default',
    data_dir_exists: existsSync(layout.meta(dataDir)),
    server: server?.url ?? null,
    server_pid: server?.pid ?? null,
    lock_pid: lockHolder(dataDir),
  };
}
