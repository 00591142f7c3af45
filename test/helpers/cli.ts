import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { client, expectStatus, until } from './http.js';
import { afterAll, beforeAll } from 'vitest';

export const ROOT = resolve(import.meta.dirname, '../..');
export const SVC = join(ROOT, 'bin/svc.js');
export const DATA = resolve(ROOT, '../shared/data');

/**
 * How a test starts `svc`: node on this checkout's bin/svc.js, or with SVC_TEST_BIN the single
 * executable (`SVC_TEST_BIN=dist/bin/svc npx vitest run test/cli.test.ts …` runs those tests on it).
 */
const BIN = process.env.SVC_TEST_BIN ? resolve(ROOT, process.env.SVC_TEST_BIN) : undefined;
export const svcCommand = (args: string[]): [string, string[]] => (BIN ? [BIN, args] : [process.execPath, [SVC, ...args]]);

export function tempDir(prefix = 'svc-test-'): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export interface Run { status: number; stdout: string; stderr: string; json: () => any }

interface SvcOpts { dataDir?: string; input?: string | Buffer; env?: Record<string, string> }

// without a data dir, the default one ($XDG_DATA_HOME/svc) must not be the user's own
const svcEnv = (opts: SvcOpts) => ({ ...process.env, SVC_DATA_DIR: opts.dataDir ?? '', XDG_DATA_HOME: join(tmpdir(), 'svc-test-no-data-home'), SVC_URL: '', SVC_TOKEN: '', SVC_TENANT: '', ...opts.env });

const ran = (status: number | null, stdout: string, stderr: string): Run => ({ status: status ?? -1, stdout, stderr, json: () => JSON.parse(stdout) });

/** Runs the built `svc` executable to completion. */
export function svc(args: string[], opts: SvcOpts = {}): Run {
  const r = spawnSync(...svcCommand(args), { input: opts.input ?? '', env: svcEnv(opts), encoding: 'utf8', maxBuffer: 256 * 2 ** 20 });
  return ran(r.status, r.stdout, r.stderr);
}

/** `svc` as `svc()` runs it, without blocking this process: for a server the test itself answers with. */
export function svcAsync(args: string[], opts: SvcOpts = {}): Promise<Run> {
  const proc = spawn(...svcCommand(args), { env: svcEnv(opts), stdio: ['pipe', 'pipe', 'pipe'] });
  let [stdout, stderr] = ['', ''];
  proc.stdout.on('data', (d) => (stdout += d));
  proc.stderr.on('data', (d) => (stderr += d));
  proc.stdin.end(opts.input ?? '');
  return new Promise((ok) => proc.on('close', (code) => ok(ran(code, stdout, stderr))));
}

/** `svc init` on a fresh data dir: returns what it printed. */
export function init(dataDir: string): { tenant_id: string; user_id: string; token: string } {
  const r = svc(['init', '--yes', '--output', 'json'], { dataDir });
  if (r.status !== 0) throw new Error(`svc init failed: ${r.stderr}`);
  return r.json();
}

export interface Server { url: string; proc: ChildProcess; stop: () => Promise<void>; logs: () => string; stderr: () => string }

/** `svc serve` on a free loopback port, for the duration of a test file; `env` adds to the environment. */
export async function serve(dataDir: string, opts: { env?: Record<string, string> } = {}): Promise<Server> {
  const proc = spawn(...svcCommand(['serve', '--port', '0']), { env: { ...process.env, SVC_DATA_DIR: dataDir, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  return served(proc);
}

/** A process that runs `svc serve` (perhaps inside a wrapper): resolves once it says where it listens. */
export async function served(proc: ChildProcess): Promise<Server> {
  let stdout = '';
  let stderr = '';
  proc.stdout!.on('data', (d) => (stdout += d));
  const url = await new Promise<string>((ok, fail) => {
    proc.stderr!.on('data', (d) => {
      stderr += d;
      const m = /on (http:\/\/\S+)/.exec(stderr);
      if (m) ok(m[1]);
    });
    proc.on('exit', (code) => fail(new Error(`svc serve exited ${code}: ${stderr}`)));
  });
  return {
    url,
    proc,
    logs: () => stdout,
    stderr: () => stderr,
    stop: () =>
      new Promise<void>((ok) => {
        if (proc.exitCode !== null || proc.signalCode !== null) return ok();
        proc.on('exit', () => ok());
        proc.kill('SIGTERM');
      }),
  };
}

export function serverInfo(dataDir: string): { pid: number; url: string } {
  return JSON.parse(readFileSync(join(dataDir, 'server.json'), 'utf8'));
}

/**
 * For one describe block: `svc serve` on a fresh data dir whose dataset `hdfs` holds the HDFS
 * sample (no vectors), and `remote` running a command against it as its first admin (or `as`),
 * with no data dir to fall back on. `dir` is the block's folder for files.
 */
export function useHdfsServer(prefix: string) {
  const dir = tempDir(prefix);
  const at = { url: '', token: '', server: undefined as Server | undefined };
  beforeAll(async () => {
    const dataDir = join(dir.path, 'data');
    const admin = init(dataDir);
    at.token = admin.token;
    at.server = await serve(dataDir);
    at.url = at.server.url;
    // the dataset and its records over HTTP, as `svc datasets create hdfs --no-semantic` and
    // `svc ingest hdfs FILE --wait` would send them: the server is up anyway, and spawning svc
    // twice more would test nothing these blocks look at
    const http = client(at.url, { token: admin.token, tenant: admin.tenant_id });
    expectStatus(await http.post('/v1/admin/datasets', { dataset_id: 'hdfs', semantic: false }), 201, 'create hdfs');
    const file = join(DATA, 'loghub/HDFS/HDFS_2k.log_structured.csv');
    const run = expectStatus(await http.call('POST', `/v1/ingest/sources/hdfs/stream?format=csv&filename=${basename(file)}`, { body: readFileSync(file), contentType: 'text/csv' }), 202, 'ingest hdfs');
    const done = await until(`run ${run.ingest_run_id}`, async () => {
      const r = expectStatus(await http.get(`/v1/ingest/runs/${run.ingest_run_id}`), 200);
      return r.status === 'ready' || r.status === 'failed' ? r : undefined;
    });
    if (done.status !== 'ready' || done.documents.parsed !== 2000) throw new Error(`ingest of hdfs: ${JSON.stringify(done)}`);
  });
  afterAll(async () => {
    await at.server?.stop();
    dir.remove();
  });
  const remote = (args: string[], as?: string) => svc(args, { dataDir: join(dir.path, 'none'), env: { SVC_URL: at.url, SVC_TOKEN: as ?? at.token } });
  return { dir, at, remote };
}
