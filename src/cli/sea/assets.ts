import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { getAsset } from 'node:sea';
import { seaCacheDir } from './cacheDir.js';
import { seaManifest } from './manifest.js';

const ready = new Map<string, string>();

/**
 * The path of an asset the executable carries, unpacked into the cache dir on first need (with
 * what it needs beside it). A file already there of the build's size is used as is: the build hash
 * names the dir, so nothing is hashed at start-up. A new file is checked against its build-time
 * hash, written to a temporary name and renamed into place, so a concurrent run never sees half of it.
 */
export function assetFile(name: string): string {
  const known = ready.get(name);
  if (known) return known;
  const asset = seaManifest().assets[name];
  if (!asset) throw new Error(`svc: no asset '${name}' in this executable`);
  for (const need of asset.needs ?? []) assetFile(need);
  const dir = seaCacheDir();
  const file = join(dir, name);
  if (sizeOf(file) !== asset.size) unpack(name, dir, file, asset.sha256);
  ready.set(name, file);
  return file;
}

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return -1;
  }
}

function unpack(name: string, dir: string, file: string, sha256: string): void {
  const bytes = new Uint8Array(getAsset(name));
  const actual = createHash('sha256').update(bytes).digest('hex');
  if (actual !== sha256) throw new Error(`svc: asset '${name}' is damaged (sha256 ${actual}, built as ${sha256})`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = join(dir, `.${name}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    writeFileSync(tmp, bytes, { mode: /\.(node|so)(\.\d+)*$/.test(name) ? 0o700 : 0o600 });
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}
