import { readdirSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';

/**
 * Where everything lives in a data dir: the one place that names its files and folders.
 *
 *   meta/                         LMDB: records and every piece of state (the truth)
 *   secret, lock, server.json     signing secret, the process lock, a running server's address
 *   blobs/<tenant>/<bucket>/<key> stored objects (and a tenant's temp files)
 *   indexes/<tenant>/<dataset>/   derived indexes: text-<generation>.snapshot, vector-<generation>.*
 *   sql/<tenant>.duckdb           the SQL index of a tenant
 */
export const layout = {
  meta: (dataDir: string) => join(dataDir, 'meta'),
  secret: (dataDir: string) => join(dataDir, 'secret'),
  lock: (dataDir: string) => join(dataDir, 'lock'),
  serverInfo: (dataDir: string) => join(dataDir, 'server.json'),
  blobs: (dataDir: string) => join(dataDir, 'blobs'),
  tenantBlobs: (dataDir: string, t: string) => join(dataDir, 'blobs', t),
  tenantIndexes: (dataDir: string, t: string) => join(dataDir, 'indexes', t),
  datasetIndexes: (dataDir: string, t: string, d: string) => join(dataDir, 'indexes', t, d),
  /** generation 0 is the name the text index had before it had generations */
  textSnapshot: (dataDir: string, t: string, d: string, generation: number) => join(dataDir, 'indexes', t, d, generation === 0 ? 'text.snapshot' : `text-${generation}.snapshot`),
  vectorBase: (dataDir: string, t: string, d: string, generation: number) => join(dataDir, 'indexes', t, d, `vector-${generation}`),
  sqlDir: (dataDir: string) => join(dataDir, 'sql'),
  sqlFile: (dataDir: string, t: string) => join(dataDir, 'sql', `${t}.duckdb`),
};

/** Removes the files of a dataset's text or vector generations but those of `keep`: a generation left by a crash or a cancel, or one replaced. */
export function removeGenerations(dataDir: string, t: string, d: string, kind: 'text' | 'vector', keep: number[]): void {
  const dir = layout.datasetIndexes(dataDir, t, d);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return; // no folder: nothing to remove
  }
  // a text generation is its snapshot and the files named after it (segments, their manifest)
  const ours = kind === 'text' ? /^text(-\d+)?\.snapshot(\..+)?$/ : /^vector-\d+\./;
  const kept = (name: string) =>
    keep.some((g) => {
      const base = basename(kind === 'text' ? layout.textSnapshot(dataDir, t, d, g) : layout.vectorBase(dataDir, t, d, g));
      return (kind === 'text' && name === base) || name.startsWith(`${base}.`);
    });
  for (const name of names) if (ours.test(name) && !kept(name)) rmSync(join(dir, name), { force: true });
}
