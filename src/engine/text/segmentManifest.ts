import { closeSync, fsyncSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** Which sealed segments a text index is made of: the commit point of a seal or a merge. */
export interface SegmentManifest {
  config: string;
  /** the last seq the sealed segments cover: the in-memory segment holds what comes after */
  sealed: number;
  /** the number the next segment file takes */
  next: number;
  /** file names, oldest records first */
  files: string[];
}

export const manifestPath = (snapshotPath: string) => `${snapshotPath}.segments`;
export const segmentPath = (snapshotPath: string, n: number) => `${snapshotPath}.seg-${n}`;

/** The manifest, or null when there is none or it cannot be read (the index is then rebuilt). */
export function readManifest(snapshotPath: string): SegmentManifest | null {
  try {
    return JSON.parse(readFileSync(manifestPath(snapshotPath), 'utf8')) as SegmentManifest;
  } catch {
    return null;
  }
}

/** Temp file, fsync, rename: a crash leaves the old manifest or the new one. */
export function writeManifest(snapshotPath: string, manifest: SegmentManifest): void {
  const path = manifestPath(snapshotPath);
  const fd = openSync(`${path}.tmp`, 'w');
  try {
    writeSync(fd, JSON.stringify(manifest));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(`${path}.tmp`, path);
}

/** Removes the index's segment files but `keep` (left by a crash mid-seal or mid-merge, or all of them). */
export function removeSegmentFiles(snapshotPath: string, keep: string[] = []): void {
  const prefix = `${basename(snapshotPath)}.seg-`;
  let names: string[];
  try {
    names = readdirSync(dirname(snapshotPath));
  } catch {
    return;
  }
  for (const name of names) if (name.startsWith(prefix) && !keep.includes(name)) rmSync(join(dirname(snapshotPath), name), { force: true });
}
