import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pidAlive } from './lock.js';

export interface ServerInfo { pid: number; url: string; started_at: string }

const file = (dataDir: string) => join(dataDir, 'server.json');

/** Tells local commands that a server holds this data dir and where it listens. */
export function writeServerInfo(dataDir: string, url: string): () => void {
  const info: ServerInfo = { pid: process.pid, url, started_at: new Date().toISOString() };
  writeFileSync(file(dataDir), JSON.stringify(info) + '\n', { mode: 0o600 });
  return () => rmSync(file(dataDir), { force: true });
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
