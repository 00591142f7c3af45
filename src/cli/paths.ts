import { homedir } from 'node:os';
import { join } from 'node:path';

/** $SVC_DATA_DIR, else the XDG data dir. */
export function defaultDataDir(env = process.env): string {
  if (env.SVC_DATA_DIR) return env.SVC_DATA_DIR;
  return join(env.XDG_DATA_HOME || join(homedir(), '.local', 'share'), 'svc');
}

export function configDir(env = process.env): string {
  return join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'svc');
}
