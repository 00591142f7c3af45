import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { isDiskError } from './diskErrors.js';
import { pidAlive } from './lock.js';
import { logProblem } from './log.js';
import { layout } from './layout.js';

export interface ServerInfo { pid: number; url: string; started_at: string }

const file = layout.serverInfo;

/**
 * Tells local commands that a server holds this data dir and where it listens. On a full disk the
 * server serves all the same: local commands then find the data dir locked, and say it is in use.
 */
export function writeServerInfo(dataDir: string, url: string): () => void {
  const info: ServerInfo = { pid: process.pid, url, started_at: new Date().toISOString() };
  const remove = () => rmSync(file(dataDir), { force: true });
  try {
    writeFileSync(file(dataDir), JSON.stringify(info) + '\n', { mode: 0o600 });
  } catch (err) {
    remove();
    if (!isDiskError(err)) throw err;
    logProblem('server_info_not_written', err);
  }
  return remove;
}

/** The server holding this data dir, if one is alive. */
export function liveServer(dataDir: string): ServerInfo | null {
  try {
    const info: ServerInfo = JSON.parse(readFileSync(file(dataDir), 'utf8'));
    return pidAlive(info.pid) ? info : null;
  } catch {
    return null;
  }
}
