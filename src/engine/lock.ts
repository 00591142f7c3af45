import { lstatSync, mkdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { asDiskFull } from './diskErrors.js';
import { Unavailable } from './errors.js';
import { layout } from './layout.js';

/**
 * Whether a process is there to hold what it claims: it exists and is not a zombie. A process
 * killed with SIGKILL stays a zombie until its parent reaps it, and a zombie holds nothing.
 */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  return !zombie(pid);
}

/** From /proc/<pid>/stat, "pid (comm) state …"; where there is no /proc, no process counts as one. */
function zombie(pid: number): boolean {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return false;
  }
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3); // comm may hold ')' itself
  return state === 'Z' || state === 'X';
}

/**
 * One process owns a data dir at a time. A lock left by a dead process is taken over; a live owner
 * is waited for up to `waitMs`, which also covers an owner still on its way out.
 *
 * The lock is a symbolic link whose target is the owner's pid: it appears whole in one step (no
 * one ever reads an empty lock and takes it for a stale one), and it needs no data block, so that
 * a server can start on a full disk and serve reads. Linux ignores a link's own permissions; the
 * data dir's 0700 keeps other users from it.
 */
export async function lockDataDir(dataDir: string, waitMs: number): Promise<() => void> {
  mkdirSync(dataDir, { recursive: true });
  const path = layout.lock(dataDir);
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      place(path);
      return () => rmSync(path, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw asDiskFull(err, 'the lock');
    }
    const owner = holder(path);
    if (owner === null) continue; // removed meanwhile
    if (!owner || !pidAlive(owner)) {
      rmSync(path, { force: true });
      continue;
    }
    if (Date.now() >= deadline) throw new Unavailable(`data dir ${dataDir} is in use by process ${owner}`);
    await sleep(100);
  }
}

/** Creates the lock, or fails with EEXIST; a filesystem without symbolic links gets a file holding the pid. */
function place(path: string): void {
  try {
    symlinkSync(String(process.pid), path);
  } catch (err) {
    if (!['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS'].includes((err as NodeJS.ErrnoException).code ?? '')) throw err;
    writeFileSync(path, String(process.pid), { flag: 'wx', mode: 0o600 });
  }
}

/** The pid the lock names (a regular file holding it, from an older svc, too); null when there is none any more. */
function holder(path: string): number | null {
  try {
    return Number(lstatSync(path).isSymbolicLink() ? readlinkSync(path) : readFileSync(path, 'utf8').trim());
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}
