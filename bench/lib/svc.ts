import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SVC } from './paths.js';

export function tempDir(prefix: string): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

// Blank remote settings so a user's own server or profile never stands in for the data dir.
const env = (dataDir: string) => ({ ...process.env, SVC_DATA_DIR: dataDir, SVC_URL: '', SVC_TOKEN: '', SVC_TENANT: '' });

/** Runs the built CLI to completion on a data dir and returns its JSON output and wall time. */
export function svc(dataDir: string, args: string[]): { out: any; seconds: number } {
  const started = performance.now();
  const r = spawnSync(process.execPath, [SVC, ...args, '--output', 'json'], { env: env(dataDir), encoding: 'utf8', maxBuffer: 64 * 2 ** 20 });
  const seconds = (performance.now() - started) / 1000;
  if (r.status !== 0) throw new Error(`svc ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return { out: r.stdout.trim() ? JSON.parse(r.stdout) : null, seconds };
}

export interface Served { url: string; proc: ChildProcess; stop: () => Promise<void> }

/** `svc serve` on a free loopback port; resolves with its URL once it says it is serving. */
export async function serve(dataDir: string): Promise<Served> {
  // stdout carries one log line per request; ignoring it keeps a full pipe from stalling the server.
  const proc = spawn(process.execPath, [SVC, 'serve', '--port', '0'], { env: env(dataDir), stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  const url = await new Promise<string>((ok, fail) => {
    proc.stderr!.on('data', (d) => {
      stderr += d;
      const m = /serving .* on (http:\/\/\S+)/.exec(stderr);
      if (m) ok(m[1]);
    });
    proc.on('exit', (code) => fail(new Error(`svc serve exited ${code}: ${stderr}`)));
  });
  const stop = () =>
    new Promise<void>((ok) => {
      if (proc.exitCode !== null) return ok();
      proc.on('exit', () => ok());
      proc.kill('SIGTERM');
    });
  return { url, proc, stop };
}
