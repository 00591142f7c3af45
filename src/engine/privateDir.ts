import { chmodSync, mkdirSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';

/** Owner only: records, blobs, keys' hashes and the signing secret are nobody else's to read. */
const DIR_MODE = 0o700;
const UMASK = 0o077;

/**
 * Makes the data dir private before anything is written to it: the directory is 0700 (an existing
 * one is changed to it, which also closes whatever older files it holds to other users), and the
 * process umask becomes 077, so that every file and directory svc creates in it is 0600 / 0700.
 * The umask is the only lever that reaches every file: LMDB, DuckDB and USearch create theirs
 * with the process umask and take no mode. It is process-wide, which suits svc: nothing it writes
 * anywhere is meant for other users (its credentials file is 0600 already).
 */
export function makePrivate(dataDir: string): void {
  if (isMainThread) process.umask(UMASK); // a worker thread may not change it; its process already did
  mkdirSync(dataDir, { recursive: true, mode: DIR_MODE });
  chmodSync(dataDir, DIR_MODE);
}
