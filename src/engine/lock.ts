import { mkdirSync, openSync, readFileSync, rmSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Unavailable } from './errors.js';

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * One process owns a data dir at a time. A lock left by a dead process is taken over;
 * a live owner is waited for up to `waitMs`.
 */
export async function lockDataDir(dataDir: string, waitMs: number): Promise<() => void> {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, 'lock');
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(path, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const owner = Number(readFileSync(path, 'utf8').trim());
    if (!owner || !pidAlive(owner)) {
      rmSync(path, { force: true });
      continue;
    }
    if (Date.now() >= deadline) throw new Unavailable(`data dir ${dataDir} is in use by process ${owner}`);
    await sleep(100);
  }
}
