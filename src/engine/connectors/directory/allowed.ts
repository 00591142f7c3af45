import { realpathSync } from 'node:fs';
import { relative, resolve, isAbsolute } from 'node:path';

/** Where directory connectors may read: the operator's roots (none set: anywhere), never the data dir. */
export interface DirectoryRoots {
  dataDir: string;
  /** SVC_CONNECTOR_DIRECTORY_ROOTS; empty: any directory the server's user can read */
  roots: string[];
}

/** The path with its symlinks resolved, as far as it exists. */
function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

const within = (path: string, root: string) => {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
};

/**
 * Why a directory connector may not read `path`, or null. Checked when the source is put and
 * again at each sync, since the path may since have become a symlink.
 */
export function directoryRefusal(path: string, allowed: DirectoryRoots): string | null {
  const at = real(path);
  const dataDir = real(allowed.dataDir);
  if (within(at, dataDir) || within(dataDir, at)) return `directory '${path}' holds svc's own data dir`;
  if (allowed.roots.length > 0 && !allowed.roots.some((root) => within(at, real(root)))) {
    return `directory '${path}' is outside the directories connectors may read (SVC_CONNECTOR_DIRECTORY_ROOTS)`;
  }
  return null;
}
