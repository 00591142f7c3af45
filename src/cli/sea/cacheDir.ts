import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { seaManifest } from './manifest.js';

/**
 * Where the executable unpacks what it carries: `$XDG_CACHE_HOME/svc/<version>-<build>/`, else
 * `~/.cache/svc/...`. The build hash in the name changes with any asset, so one build's files never
 * pass for another's.
 */
export function seaCacheDir(): string {
  const xdg = process.env.XDG_CACHE_HOME;
  const base = xdg && isAbsolute(xdg) ? xdg : join(homedir(), '.cache');
  const { version, build } = seaManifest();
  return join(base, 'svc', `${version}-${build}`);
}
