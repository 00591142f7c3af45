import { mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { newId } from '../ids.js';

/**
 * Objects being written live in their tenant's temp folder, blobs/<tenant>/.tmp (a name no bucket
 * may take), until a rename puts them in place. Kept apart from the objects, a file a killed
 * writer left behind is found without walking every object's folder.
 */
export const TEMP_DIR = '.tmp';

/**
 * A temp file untouched this long belongs to a writer that is gone: a live one writes as bytes
 * arrive, so its file's mtime stays fresh. Ten minutes leave a stream that stalls a while alone.
 */
export const TEMP_FILE_MAX_AGE_MS = 10 * 60_000;

const TEMP_NAME = /^tmp_[0-9a-z]{26}$/;

/** A path for a new temp file of a tenant, on the same file system as its objects. */
export function newTempFile(tenantDir: string): string {
  const dir = join(tenantDir, TEMP_DIR);
  mkdirSync(dir, { recursive: true });
  return join(dir, newId('tmp'));
}

/**
 * Removes the temp files of every tenant under `blobsRoot` not written to for `maxAgeMs`; returns
 * how many went. A file that cannot be read or removed is left for the next sweep.
 */
export function sweepTempFiles(blobsRoot: string, maxAgeMs = TEMP_FILE_MAX_AGE_MS, nowMs = Date.now()): number {
  let removed = 0;
  for (const tenant of namesIn(blobsRoot)) {
    const dir = join(blobsRoot, tenant, TEMP_DIR);
    for (const name of namesIn(dir)) {
      if (!TEMP_NAME.test(name)) continue;
      const path = join(dir, name);
      try {
        const stat = statSync(path);
        if (!stat.isFile() || nowMs - stat.mtimeMs < maxAgeMs) continue;
        rmSync(path, { force: true });
        removed++;
      } catch {
        // gone meanwhile, or not ours to remove
      }
    }
  }
  return removed;
}

function namesIn(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
