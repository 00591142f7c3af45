import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { binaryInputs, STAMP } from '../scripts/binary-inputs.mjs';
import { DATA, ROOT, SVC, served, tempDir, type Server } from './helpers/cli.js';

const BINARY = join(ROOT, 'dist/bin/svc');
const HDFS = join(DATA, 'loghub/HDFS/HDFS_2k.log');
const VERSION: string = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version;

/** dist/bin/svc, built only when it is missing or was made from another dist/ (npm test after build:binary reuses it). */
function ensureBinary(): void {
  if (!existsSync(join(ROOT, 'dist/cli/sea/start.js'))) build('npm', ['run', 'build']);
  const stamp = join(ROOT, STAMP);
  if (existsSync(BINARY) && existsSync(stamp) && readFileSync(stamp, 'utf8').trim() === binaryInputs(ROOT)) return;
  build(process.execPath, [join(ROOT, 'scripts/build-binary.mjs')]);
}

function build(cmd: string, args: string[]): void {
  const r = spawnSync(cmd, args, { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.stdout}${r.stderr}`);
}

describe('the single executable, copied away from the project', () => {
  const dir = tempDir('svc-binary-');
  const svcBin = join(dir.path, 'bin', 'svc');
  const dataDir = join(dir.path, 'data');
  const cache = join(dir.path, 'cache');
  const env = {
    ...process.env,
    SVC_DATA_DIR: dataDir,
    XDG_CACHE_HOME: cache,
    XDG_CONFIG_HOME: join(dir.path, 'config'),
    XDG_DATA_HOME: join(dir.path, 'data-home'),
    SVC_KEYRING: 'off',
    SVC_URL: '',
    SVC_TOKEN: '',
    SVC_TENANT: '',
    SVC_PROFILE: '',
    NODE_OPTIONS: '',
  };
  const run = (args: string[]) => {
    const r = spawnSync(svcBin, args, { cwd: dir.path, env, encoding: 'utf8', maxBuffer: 64 * 2 ** 20 });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr, json: () => JSON.parse(r.stdout) };
  };
  const ok = (args: string[]) => {
    const r = run([...args, '--output', 'json']);
    expect(r.status, `svc ${args.join(' ')}: ${r.stderr}`).toBe(0);
    return r.json();
  };
  /** every file the executable has unpacked, with what would show a rewrite */
  const unpacked = () => {
    const [versionDir] = readdirSync(join(cache, 'svc'));
    const at = join(cache, 'svc', versionDir);
    return Object.fromEntries(readdirSync(at).map((f) => [f, `${statSync(join(at, f)).mtimeMs} ${statSync(join(at, f)).ino}`]));
  };
  let token = '';
  let tenant = '';
  let server: Server | undefined;

  beforeAll(() => {
    ensureBinary();
    mkdirSync(join(dir.path, 'bin'));
    copyFileSync(BINARY, svcBin);
  }, 180_000);
  afterAll(async () => {
    await server?.stop();
    dir.remove();
  });

  it('prints its version without unpacking anything', () => {
    const r = run(['--version']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe(VERSION);
    expect(existsSync(join(cache, 'svc'))).toBe(false);
  });

  it('initialises a data dir, creates a dataset and ingests a log file', () => {
    ({ token, tenant_id: tenant } = ok(['init', '--yes']));
    expect(token).toMatch(/^ey/);
    // the store's addon was unpacked into a versioned cache dir of mode 0700, whole
    const [versionDir] = readdirSync(join(cache, 'svc'));
    expect(versionDir).toMatch(new RegExp(`^${VERSION.replace(/\./g, '\\.')}-[0-9a-f]{12}$`));
    expect(statSync(join(cache, 'svc', versionDir)).mode & 0o777).toBe(0o700);
    expect(Object.keys(unpacked())).toEqual(expect.arrayContaining(['lmdb.node']));
    expect(Object.keys(unpacked()).some((f) => f.endsWith('.tmp'))).toBe(false);
    expect(ok(['datasets', 'create', 'logs']).dataset_id).toBe('logs');
    const ingested = ok(['ingest', 'logs', HDFS, '--format', 'text', '--wait']);
    expect(ingested.status).toBe('ready');
    expect(ingested.documents.parsed).toBe(2000);
    expect(ingested.documents.index_committed).toBe(2000);
  }, 60_000);

  it('searches with the text worker it carries', () => {
    const found = ok(['search', '--dataset', 'logs', 'PacketResponder']);
    expect(found.total.value).toBe(603); // grep -c PacketResponder HDFS_2k.log
    expect(found.records[0].body).toMatch(/PacketResponder/);
    expect(Object.keys(unpacked())).toContain('text-worker.cjs');
  }, 60_000);

  it('answers SQL with the DuckDB it carries', () => {
    const counted = ok(['sql', 'SELECT count(*) AS n FROM logs']);
    expect(counted.records[0].metadata.n).toBe(2000);
    expect(Object.keys(unpacked())).toEqual(expect.arrayContaining(['duckdb.node', 'libduckdb.so']));
  }, 60_000);

  it('searches semantically with the builtin embedder and the vectors it carries', () => {
    const found = ok(['search', '--dataset', 'logs', '--mode', 'semantic', 'block terminating']);
    expect(found.mode).toBe('semantic');
    expect(found.records.length).toBeGreaterThan(0);
    expect(found.records[0].score_kind).not.toBe('bm25');
    expect(Object.keys(unpacked())).toEqual(expect.arrayContaining(['usearch.node', 'wink-sg-100d.bin']));
  }, 120_000);

  it('serves HTTP: /healthz, an authenticated search and the web console', async () => {
    server = await served(spawn(svcBin, ['serve', '--port', '0'], { cwd: dir.path, env, stdio: ['ignore', 'pipe', 'pipe'] }));
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
    expect((await health.json()).status).toBe('ok');
    const search = await fetch(`${server.url}/v1/search`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'x-service-tenant-id': tenant, 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'PacketResponder', datasets: ['logs'] }),
    });
    expect(search.status).toBe(200);
    const body = await search.json();
    expect(body.total.value).toBe(603);
    expect(body.records[0].body).toMatch(/PacketResponder/);
    const anonymous = await fetch(`${server.url}/v1/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(anonymous.status).toBe(401);
    // the web console, from the executable's own copy, byte for byte the built one
    const page = await fetch(`${server.url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await page.text()).toBe(readFileSync(join(ROOT, 'dist/console/index.html'), 'utf8'));
    const script = await fetch(`${server.url}/console/app.js`);
    expect(script.status).toBe(200);
    expect(Buffer.from(await script.arrayBuffer()).equals(readFileSync(join(ROOT, 'dist/console/app.js')))).toBe(true);
  }, 60_000);

  it('keeps a login in the same store as the CLI under node: the OS keyring, through the addon it carries, when there is one', () => {
    const where = (cmd: string, pre: string[], profile: string) => {
      const config = join(dir.path, `config-${profile}`);
      const withKeyring = { ...env, SVC_KEYRING: '', XDG_CONFIG_HOME: config };
      const login = spawnSync(cmd, [...pre, 'login', '--profile', profile, '--url', server!.url, '--token', token, '--tenant', tenant, '--output', 'json'], { cwd: dir.path, env: withKeyring, encoding: 'utf8' });
      expect(login.status, login.stderr).toBe(0);
      expect(JSON.parse(login.stdout).tenant_id).toBe(tenant);
      const inFile = existsSync(join(config, 'svc', 'credentials.json'));
      const logout = spawnSync(cmd, [...pre, 'logout', '--profile', profile, '--output', 'json'], { cwd: dir.path, env: withKeyring, encoding: 'utf8' });
      expect(logout.status, logout.stderr).toBe(0);
      expect(JSON.parse(logout.stdout).logged_out).toBe(true);
      return inFile ? 'file' : 'keyring';
    };
    const suffix = `${process.pid}-${Date.now()}`;
    expect(where(svcBin, [], `binary-${suffix}`)).toBe(where(process.execPath, [SVC], `node-${suffix}`));
    expect(Object.keys(unpacked())).toContain('keyring.node');
  }, 60_000);

  it('unpacks nothing on a second run', async () => {
    await server?.stop();
    const before = unpacked();
    expect(Object.keys(before).sort()).toEqual(['duckdb.node', 'keyring.node', 'libduckdb.so', 'lmdb.node', 'msgpackr-extract.node', 'text-worker.cjs', 'usearch.node', 'wink-sg-100d.bin']);
    expect(run(['--version']).stdout.trim()).toBe(VERSION);
    expect(ok(['datasets', 'list']).datasets.map((d: { dataset_id: string; record_count: number }) => [d.dataset_id, d.record_count])).toEqual([['logs', 2000]]);
    expect(ok(['search', '--dataset', 'logs', 'PacketResponder']).total.value).toBe(603);
    expect(ok(['sql', 'SELECT count(*) AS n FROM logs']).records[0].metadata.n).toBe(2000);
    expect(ok(['search', '--dataset', 'logs', '--mode', 'semantic', 'block terminating']).records.length).toBeGreaterThan(0);
    expect(unpacked()).toEqual(before);
  }, 120_000);
});
