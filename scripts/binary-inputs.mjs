/**
 * What dist/bin/svc is made from, as one hash: the built JavaScript in dist/ (not the bundles or
 * the executable), the build script, this Node and the vectors file's size. scripts/build-binary.mjs
 * writes it beside the executable; a test rebuilds only when it no longer matches.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

export const STAMP = 'dist/bin/svc.inputs';

export function binaryInputs(root) {
  const hash = createHash('sha256').update(`${process.version} ${process.platform}-${process.arch}\n`);
  const skip = new Set([join(root, 'dist', 'sea'), join(root, 'dist', 'bin')]);
  const files = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!skip.has(path)) walk(path);
      } else files.push(path);
    }
  };
  if (existsSync(join(root, 'dist'))) walk(join(root, 'dist'));
  files.push(join(root, 'scripts', 'build-binary.mjs'));
  for (const file of files.sort()) hash.update(`${relative(root, file)}\n`).update(readFileSync(file));
  const vectors = join(root, 'build', 'embeddings', 'wink-sg-100d.bin');
  hash.update(`vectors ${existsSync(vectors) ? statSync(vectors).size : 0}\n`);
  return hash.digest('hex');
}
