import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, existsSync, fchmodSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { configDir } from './paths.js';

export const DEFAULT_PROFILE = 'default';

export interface Profile { url: string; tenant?: string }
export interface ProfilesFile { current: string; profiles: Record<string, Profile> }

export const configPath = () => join(configDir(), 'config.json');

/** The same server written with or without a trailing slash is one server. */
export const normalizeUrl = (url: string) => url.replace(/\/+$/, '');

/** Reads a JSON file of ours; a missing file is `fallback`, a broken one an error naming it. */
export function readJson<T>(path: string, fallback: T): T {
  if (!existsSync(path)) return fallback;
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T;
  } catch (err) {
    throw new Error(`cannot read ${path}: ${(err as Error).message}`);
  }
}

/**
 * Replaces a file whole (temp file + rename) so a crash never leaves half of it, with `mode` set
 * on the descriptor before the rename so the content is never readable with looser permissions.
 */
export function writeJson(path: string, value: unknown, mode = 0o600): void {
  const dir = dirname(path);
  if (!existsSync(dir)) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700); // mkdir's mode goes through the umask
  }
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    const fd = openSync(tmp, 'wx', mode);
    try {
      writeSync(fd, JSON.stringify(value, null, 2) + '\n');
      fchmodSync(fd, mode);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

export function readProfiles(): ProfilesFile {
  const file = readJson<Partial<ProfilesFile>>(configPath(), {});
  return { current: file.current || DEFAULT_PROFILE, profiles: file.profiles ?? {} };
}

/** `name` (from --profile or SVC_PROFILE; empty means unset), else the current profile. */
export function resolveProfile(name?: string): { name: string; explicit: boolean; profile?: Profile } {
  const file = readProfiles();
  const chosen = name || file.current;
  return { name: chosen, explicit: !!name, profile: file.profiles[chosen] };
}

export function setProfile(name: string, profile: Profile): void {
  const file = readProfiles();
  file.profiles[name] = { url: normalizeUrl(profile.url), ...(profile.tenant ? { tenant: profile.tenant } : {}) };
  writeJson(configPath(), file);
}

export function removeProfile(name: string): boolean {
  const file = readProfiles();
  if (!file.profiles[name]) return false;
  delete file.profiles[name];
  writeJson(configPath(), file);
  return true;
}
