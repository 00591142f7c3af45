import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** The package root, found upwards from here, so the same code works from bench/ and from its compiled copy. */
function findRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

export const ROOT = findRoot(import.meta.dirname);
export const SVC = join(ROOT, 'bin/svc.js');
export const DATA = process.env.SVC_BENCH_DATA ?? resolve(ROOT, '../shared/data');
