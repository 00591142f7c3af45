import { setTimeout as sleep } from 'node:timers/promises';
import { DiskFull } from './errors.js';

/**
 * The one place that decides whether a failed write means "no room": every write path (LMDB
 * commits, blobs, snapshots, DuckDB, vector files) passes its errors through here, so that a full
 * disk is reported as DiskFull (507, `disk_full`, repairable) and never as a crash or a 500.
 */

/** errno names, and their numbers on Linux: LMDB reports an errno as a bare number in `code`. */
const ERRNO: Record<string, number> = { ENOSPC: 28, EDQUOT: 122, EIO: 5, EFBIG: 27 };
const ERRNO_NUMBERS = new Set(Object.values(ERRNO));
/** lmdb's MDB_MAP_FULL */
export const MDB_MAP_FULL = -30792;
/** What LMDB, Node and DuckDB say when they could not write for want of room (or of a working disk). */
const MESSAGES = /MDB_MAP_FULL|No space left on device|Disk quota exceeded|Input\/output error|File too large|Could not write/i;

export function isDiskError(err: unknown): boolean {
  if (err instanceof DiskFull) return true;
  if (!err || typeof err !== 'object') return false;
  const { code, errno, message } = err as { code?: unknown; errno?: unknown; message?: unknown };
  if (typeof code === 'string' && Object.hasOwn(ERRNO, code)) return true;
  if (typeof code === 'number' && (ERRNO_NUMBERS.has(code) || code === MDB_MAP_FULL)) return true;
  // Node's fs errors carry errno as a negative number
  if (typeof errno === 'number' && ERRNO_NUMBERS.has(-errno)) return true;
  return typeof message === 'string' && MESSAGES.test(message);
}

/** `err` as DiskFull when it is one, else `err` itself: `catch (err) { throw asDiskFull(err) }`. */
export function asDiskFull(err: unknown, what?: string): unknown {
  if (err instanceof DiskFull || !isDiskError(err)) return err;
  const cause = (err as Error).message?.split('\n')[0] ?? String(err);
  const full = new DiskFull(`the disk is full: ${what ? `${what} could not be written` : 'a write failed'} (${cause}); free some space and retry`);
  full.cause = err;
  return full;
}

/**
 * lmdb-js rejects a failed commit with "Commit failed" and puts the reason in `commitError`, a
 * second promise that it rejects a moment later: nobody else awaits it, so unobserved it would end
 * the process as an unhandled rejection. This observes it and answers with the reason, when it
 * comes; a commit that failed for no reason given is taken for a failed write all the same.
 */
export async function commitFailure(err: unknown): Promise<unknown> {
  const pending = (err as { commitError?: Promise<unknown> } | null)?.commitError;
  if (!pending || typeof pending.then !== 'function') return err;
  const reason = await Promise.race([
    pending.then(() => null, (cause: unknown) => cause),
    sleep(1000, null, { ref: false }),
  ]);
  if (reason && isDiskError(reason)) return reason;
  return Object.assign(new Error(`LMDB commit failed: ${(reason as Error | null)?.message ?? 'Input/output error'}`), { code: 'EIO' });
}

/** Runs a synchronous write; a disk error comes out as DiskFull. */
export function diskWriteSync<T>(what: string, write: () => T): T {
  try {
    return write();
  } catch (err) {
    throw asDiskFull(err, what);
  }
}

/** Awaits a write; a disk error (an LMDB commit failure included) comes out as DiskFull. */
export async function diskWrite<T>(what: string, write: Promise<T> | (() => Promise<T>)): Promise<T> {
  try {
    return await (typeof write === 'function' ? write() : write);
  } catch (err) {
    throw asDiskFull(await commitFailure(err), what);
  }
}
