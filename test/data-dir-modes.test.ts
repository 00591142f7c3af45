import { spawn } from 'node:child_process';
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { served, SVC, svc, tempDir, type Server } from './helpers/cli.js';
import { client, expectStatus, until } from './helpers/http.js';

/** Every entry under `root` whose mode is not owner-only: directories 0700, files 0600; the lock is a link to a pid. */
function notPrivate(root: string): string[] {
  const wrong: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      const st = lstatSync(path);
      const mode = st.mode & 0o777;
      if (st.isDirectory()) {
        if (mode !== 0o700) wrong.push(`${relative(root, path)}/ ${mode.toString(8)}`);
        walk(path);
      } else if (st.isSymbolicLink()) {
        if (path !== join(root, 'lock')) wrong.push(`${relative(root, path)} is a link`);
      } else if (mode !== 0o600) wrong.push(`${relative(root, path)} ${mode.toString(8)}`);
    }
  };
  if ((lstatSync(root).mode & 0o777) !== 0o700) wrong.push(`./ ${(lstatSync(root).mode & 0o777).toString(8)}`);
  walk(root);
  return wrong;
}

const umask022 = (args: string[]) => ['-c', `umask 022 && exec "${process.execPath}" "${SVC}" ${args.map((a) => `'${a}'`).join(' ')}`];

describe('the files of a data dir', () => {
  const dir = tempDir();
  const dataDir = join(dir.path, 'data');
  let server: Server | undefined;
  afterAll(async () => {
    await server?.stop();
    dir.remove();
  });

  it('are readable by their owner only, whatever the umask', async () => {
    mkdirSync(dataDir, { mode: 0o755 });
    chmodSync(dataDir, 0o755); // made by someone else under umask 022
    const r = svc(['init', '--yes', '--output', 'json'], { dataDir });
    expect(r.status, r.stderr).toBe(0);
    const who = r.json();
    const proc = spawn('sh', umask022(['serve', '--port', '0']), { env: { ...process.env, SVC_DATA_DIR: dataDir, SVC_MIN_FREE_BYTES: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
    server = await served(proc);
    const api = client(server.url, { token: who.token, tenant: who.tenant_id });

    expectStatus(await api.post('/v1/admin/datasets', { dataset_id: 'logs' }), 201);
    const lines = Array.from({ length: 500 }, (_, i) => JSON.stringify({ message: `disk report ${i}`, level: i % 2 ? 'WARN' : 'INFO' })).join('\n');
    const run = expectStatus(await api.call('POST', '/v1/ingest/sources/logs/stream?format=ndjson', { body: lines, contentType: 'application/x-ndjson' }), 202);
    // ready for text, SQL and vectors: every kind of file exists
    await until('the run and its vectors', async () => {
      const r = (await api.get(`/v1/ingest/runs/${run.ingest_run_id}`)).body;
      return r.status === 'ready' && r.ready_for.semantic_search ? r : undefined;
    }, 60_000);
    expect(expectStatus(await api.post('/v1/search', { text: 'report', datasets: ['logs'] }), 200).total.value).toBe(500);
    expect(expectStatus(await api.post('/v1/search', { text: 'disk report', datasets: ['logs'], mode: 'semantic' }), 200).records.length).toBeGreaterThan(0);
    expect(expectStatus(await api.post('/v1/sql', { sql: 'SELECT count(*) AS n FROM logs' }), 200).records[0].metadata.n).toBe(500);
    const session = expectStatus(await api.post('/v1/ingest/sources/logs/uploads', { filename: 'more.ndjson' }), 201);
    const [part] = expectStatus(await api.post('/v1/ingest/sources/logs/uploads/parts', { upload_session_id: session.upload_session_id, part_numbers: [1] }), 200).parts;
    expectStatus(await api.call('PUT', part.upload_url, { body: '{"message":"a part"}\n' }), 200);

    expect(readFileSync(join(dataDir, 'server.json'), 'utf8')).toContain(String(proc.pid));
    expect(notPrivate(dataDir)).toEqual([]);
    await server.stop();
    // what a server writes as it stops (snapshots) is private too
    expect(notPrivate(dataDir)).toEqual([]);
    const files = readdirSync(dataDir, { recursive: true }).map(String);
    for (const kind of [/^meta\/data\.mdb$/, /^sql\/.*\.duckdb$/, /^blobs\/.*\/stream$/, /text\.snapshot$/, /vector-.*\.usearch$/, /^secret$/]) {
      expect(files.some((f) => kind.test(f)), `a file matching ${kind}`).toBe(true);
    }
  }, 120_000);
});
