import { spawn } from 'node:child_process';
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { init, serve, svc, svcCommand, tempDir, type Server } from './helpers/cli.js';
import { client, expectStatus, until } from './helpers/http.js';

describe('svc connectors on a local data dir', () => {
  const dir = tempDir('svc-cli-connectors-');
  const dataDir = join(dir.path, 'data');
  const logs = join(dir.path, 'logs');
  const run = (args: string[]) => svc([...args, '--output', 'json'], { dataDir });
  beforeAll(() => {
    init(dataDir);
    mkdirSync(logs);
    writeFileSync(join(logs, 'app.log'), 'Nov 22 07:00:00 host app[1]: started\nNov 22 07:00:01 host app[1]: listening on 8080\n');
    expect(run(['datasets', 'create', 'applogs', '--no-semantic']).status).toBe(0);
  });
  afterAll(() => dir.remove());

  it('creates a directory source, syncs it (waiting for its runs) and finds its lines', () => {
    const created = run(['connectors', 'create', '10', '--dataset', 'applogs', '--key', 'applogs-dir', '--kind', 'directory', '--path', logs, '--include', '*.log', '--format', 'text']);
    expect(created.status, created.stderr).toBe(0);
    expect(created.json()).toMatchObject({ source_id: 10, source_type: 'connector', connector_id: 1, format: 'text' });

    const sync = run(['connectors', 'sync', '10']);
    expect(sync.status, sync.stderr).toBe(0);
    expect(sync.json()).toMatchObject({ status: 'succeeded', objects: 1, trigger: 'manual' });
    const hits = run(['search', 'listening', '--dataset', 'applogs']).json();
    expect(hits.records.map((r: { body: string }) => r.body)).toEqual(['Nov 22 07:00:01 host app[1]: listening on 8080']);

    const got = run(['connectors', 'get', '10']).json();
    expect(got.integration).toMatchObject({ provider_key: 'directory', source_id: 10, credential_status: 'not_configured' });
    expect(got.integration.stream_config.last_sync.connector_run_id).toBe(sync.json().connector_run_id);
    expect(run(['connectors', 'syncs', '10']).json().syncs).toHaveLength(1);
  });

  it('sets a cron schedule and refuses a bad one with the spec status as an exit code', () => {
    const ok = run(['connectors', 'connect', '10', '--cron', '*/5 * * * *', '--timezone', 'Europe/Paris']);
    expect(ok.status, ok.stderr).toBe(0);
    expect(ok.json().integration).toMatchObject({ schedule_type: 'cron', cron_expression: '*/5 * * * *', connection_status: 'active' });
    const bad = run(['connectors', 'connect', '10', '--cron', 'every day']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/invalid cron expression/);
  });

  it('says what is missing or wrong in one line', () => {
    const missing = run(['connectors', 'create', '11', '--kind', 'directory', '--path', logs]);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/give --dataset, --key/);
    const relative = svc(['connectors', 'create', '11', '--dataset', 'applogs', '--key', 'x', '--kind', 'http', '--url', 'not-a-url'], { dataDir });
    expect(relative.status).toBe(2);
    expect(relative.stderr.trim().split('\n')).toHaveLength(1);
    expect(run(['connectors', 'sync', '99']).status).toBe(3);
    const env = run(['connectors', 'create', '11', '--dataset', 'applogs', '--key', 'x', '--kind', 'http', '--url', 'http://127.0.0.1:9/', '--bearer-token-env', 'SVC_TEST_NO_SUCH_VAR']);
    expect(env.status).toBe(2);
    expect(env.stderr).toMatch(/SVC_TEST_NO_SUCH_VAR/);
  });
});

describe('svc ingest --follow against a server', () => {
  const dir = tempDir('svc-cli-follow-');
  const dataDir = join(dir.path, 'data');
  const file = join(dir.path, 'app.log');
  let server: Server;
  let admin: { tenant_id: string; token: string };
  const http = client(() => server.url, () => ({ token: admin.token, tenant: admin.tenant_id }));
  const found = async (text: string) => expectStatus(await http.post('/v1/search', { datasets: ['follow'], q: `"${text}"`, limit: 10 }), 200).total.value as number;

  beforeAll(async () => {
    admin = init(dataDir);
    expect(svc(['datasets', 'create', 'follow', '--no-semantic'], { dataDir }).status).toBe(0);
    server = await serve(dataDir);
  });
  afterAll(async () => {
    await server.stop();
    dir.remove();
  });

  it('ingests the file, then each line as it is written (a repeated line too), until interrupted', async () => {
    writeFileSync(file, 'first line\nsecond line\n');
    const proc = spawn(...svcCommand(['ingest', 'follow', file, '--follow', '--format', 'text', '--output', 'ndjson']), {
      env: { ...process.env, SVC_URL: server.url, SVC_TOKEN: admin.token, SVC_TENANT: admin.tenant_id, SVC_DATA_DIR: join(dir.path, 'none') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (d) => (stdout += d));
    proc.stderr.on('data', (d) => (stderr += d));
    await until('the first lines', async () => ((await found('second line')) === 1 ? true : undefined), 20_000);
    appendFileSync(file, 'heartbeat ok\n');
    await until('one heartbeat', async () => ((await found('heartbeat ok')) === 1 ? true : undefined), 20_000);
    appendFileSync(file, 'heartbeat ok\n');
    await until('two heartbeats', async () => ((await found('heartbeat ok')) === 2 ? true : undefined), 20_000);
    proc.kill('SIGINT');
    const code = await new Promise((ok) => proc.on('exit', ok));
    expect(code, stderr).toBe(0);
    const runs = stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(runs.length).toBe(3);
    expect(runs.every((r) => r.dataset_id === 'follow' && r.ingest_run_id)).toBe(true);
  });

  it('refuses --follow of stdin or several files, and a missing file', () => {
    expect(svc(['ingest', 'follow', '-', '--follow'], { dataDir: join(dir.path, 'none') }).stderr).toMatch(/--follow takes one FILE/);
    const missing = svc(['ingest', 'follow', join(dir.path, 'nope.log'), '--follow'], { env: { SVC_URL: server.url, SVC_TOKEN: admin.token } });
    expect(missing.status).toBe(3);
  });
});
