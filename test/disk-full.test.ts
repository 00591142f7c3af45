import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { served, SVC, tempDir, type Server } from './helpers/cli.js';
import { client, expectStatus, until } from './helpers/http.js';

/**
 * A real full disk: `svc serve` runs in a private mount namespace on a 64 MiB tmpfs that a ballast
 * file fills to within a few MiB. The first test turns the floor off, so that the writes
 * themselves meet ENOSPC; the second keeps the default floor, which must stop ingest first. Space
 * is freed by removing the ballast through /proc/<pid>/root, the server's view of its namespace.
 * Mounting needs root: elsewhere the tests are skipped, saying why.
 */
const MOUNT_ERROR = mountProblem();
const LINES = 30_000;
const id = (object: number, n: number) => `o${object}x${String(n).padStart(6, '0')}`;
const body = (object: number, lines: number) => Array.from({ length: lines }, (_, i) => `2026-11-22T08:00:00Z WARN node-${i % 13} slow request ${id(object, i + 1)} took ${i % 5000} ms`).join('\n');

/** Why a tmpfs cannot be mounted in a private namespace here, or null when it can. */
function mountProblem(): string | null {
  if (process.platform !== 'linux') return 'needs Linux mount namespaces';
  if (process.getuid?.() !== 0) return 'needs root to mount a tmpfs in a private mount namespace (unshare -m)';
  const dir = tempDir('svc-mount-probe-');
  try {
    const r = spawnSync('unshare', ['-m', 'sh', '-c', `mount -t tmpfs -o size=1m tmpfs '${dir.path}'`], { encoding: 'utf8' });
    return r.status === 0 ? null : `unshare -m / mount -t tmpfs is not permitted here: ${(r.stderr || r.error?.message || '').trim()}`;
  } finally {
    dir.remove();
  }
}

/**
 * Starts `svc serve` (`servers` times, one after the other) on a data dir of its own on a 64 MiB
 * tmpfs that a ballast file fills up to `freeMiB`, in a mount namespace of its own.
 */
async function fullDisk(root: string, freeMiB: number, env: Record<string, string>, servers = 1) {
  const mnt = join(root, 'mnt');
  mkdirSync(mnt);
  const serveCmd = `"${process.execPath}" "${SVC}" serve --data-dir "${mnt}/data" --port 0`;
  const script = [
    'set -e',
    `mount -t tmpfs -o size=64m tmpfs "${mnt}"`,
    `"${process.execPath}" "${SVC}" init --data-dir "${mnt}/data" --yes --output json > "${root}/init.json"`,
    `avail=$(df -k --output=avail "${mnt}" | tail -1)`,
    `head -c $(( (avail - ${freeMiB * 1024}) * 1024 )) /dev/zero > "${mnt}/ballast"`,
    ...Array.from({ length: servers - 1 }, () => serveCmd),
    `exec ${serveCmd}`,
  ].join('\n');
  const proc = spawn('unshare', ['-m', 'sh', '-c', script], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const inside = (path: string) => `/proc/${proc.pid}/root${path}`; // the namespace as the server sees it
  const server = await served(proc);
  return { proc, server, mnt, inside, who: JSON.parse(readFileSync(join(root, 'init.json'), 'utf8')) };
}

describe('a server whose disk fills', () => {
  const dirs = [tempDir(), tempDir()];
  let server: Server | undefined;
  afterAll(async () => {
    await server?.stop();
    for (const d of dirs) d.remove();
  });

  it('fails the run as disk_full, keeps serving reads, restarts on the full disk, and finishes the run once space is freed', async (ctx) => {
    if (MOUNT_ERROR) return ctx.skip(MOUNT_ERROR);
    // the first server is stopped by the test, and the second starts on the same, still full, disk
    const disk = await fullDisk(dirs[0].path, 6, { SVC_MIN_FREE_BYTES: '0' }, 2);
    const { proc, inside, who, mnt } = disk;
    server = disk.server;
    let url = server.url;
    const api = () => client(url, { token: who.token, tenant: who.tenant_id });
    const runOf = async (runId: string) => expectStatus(await api().get(`/v1/ingest/runs/${runId}`), 200);

    expectStatus(await api().post('/v1/admin/datasets', { dataset_id: 'logs' }), 201);
    const stream = (object: number, lines: number) => api().call('POST', '/v1/ingest/sources/logs/stream?format=text', { body: body(object, lines), contentType: 'text/plain' });
    // a small object first, so that the SQL index exists before the disk is full
    const first = expectStatus(await stream(0, 100), 202);
    await until('the first run', async () => ((await runOf(first.ingest_run_id)).status === 'ready' ? true : undefined));
    expect(expectStatus(await api().post('/v1/sql', { sql: 'SELECT count(*) AS n FROM logs' }), 200).records[0].metadata.n).toBe(100);

    // objects until the disk is full: a run that fails for want of space, or a stream refused with 507
    const accepted: { object: number; runId: string; lines: number }[] = [{ object: 0, runId: first.ingest_run_id, lines: 100 }];
    let stopped: { status: number; detail?: any; run?: any } | undefined;
    for (let object = 1; !stopped && object <= 10; object++) {
      const res = await stream(object, LINES);
      if (res.status === 507) stopped = { status: 507, detail: res.body.detail };
      else {
        expect(res.status, res.text).toBe(202);
        accepted.push({ object, runId: res.body.ingest_run_id, lines: LINES });
        const run = await until('the run to stop', async () => {
          const r = await runOf(res.body.ingest_run_id);
          return r.status === 'ready' || r.status === 'failed' ? r : undefined;
        });
        if (run.status === 'failed') stopped = { status: 202, run };
      }
    }
    expect(stopped, 'the disk never filled').toBeDefined();
    if (stopped!.run) expect(stopped!.run).toMatchObject({ error_code: 'disk_full', lifecycle: { repairable: true }, error_message: expect.stringMatching(/disk is full/) });
    else expect(stopped!.detail).toMatchObject({ code: 'disk_full' });

    const reads = async () => {
      expect(proc.exitCode).toBeNull();
      expectStatus(await api().get('/healthz'), 200);
      const hit = expectStatus(await api().post('/v1/search', { text: id(0, 7), datasets: ['logs'], max_expansion_terms: 0 }), 200);
      expect(hit.total.value).toBe(1);
      for (const { runId } of accepted) await runOf(runId);
      expect(expectStatus(await api().post('/v1/sql', { sql: 'SELECT count(*) AS n FROM logs' }), 200).records[0].metadata.n).toBeGreaterThanOrEqual(100);
    };
    await reads();
    const refused = await stream(99, LINES);
    expect(refused.status).toBe(507);
    expect(refused.body.detail.code).toBe('disk_full');

    // a restart with the disk still full comes up and serves reads; the run waits
    const firstPid = JSON.parse(readFileSync(inside(`${mnt}/data/server.json`), 'utf8')).pid;
    process.kill(firstPid, 'SIGTERM');
    url = await until('the second server', () => [...server!.stderr().matchAll(/on (http:\/\/\S+)/g)][1]?.[1], 30_000);
    await reads();
    if (stopped!.run) expect(await runOf(stopped!.run.ingest_run_id)).toMatchObject({ status: 'failed', error_code: 'disk_full' });

    rmSync(inside(`${mnt}/ballast`));
    for (const { runId } of accepted) {
      await until(`run ${runId} to finish`, async () => ((await runOf(runId)).status === 'ready' ? true : undefined), 60_000);
    }
    const total = accepted.reduce((n, a) => n + a.lines, 0);
    expect(expectStatus(await api().get('/v1/datasets/logs'), 200).record_count).toBe(total);
    for (const { object, lines } of accepted) {
      for (const n of [1, lines]) {
        const hit = expectStatus(await api().post('/v1/search', { text: id(object, n), datasets: ['logs'], max_expansion_terms: 0 }), 200);
        expect(hit.total.value, id(object, n)).toBe(1);
      }
    }
    expect(expectStatus(await api().post('/v1/sql', { sql: 'SELECT count(*) AS n FROM logs' }), 200).records[0].metadata.n).toBe(total);
    expect(proc.exitCode).toBeNull();
    // nothing went unhandled on the way
    expect(server.stderr()).not.toMatch(/unhandled_rejection|uncaught_exception/);
  }, 120_000);

  it('with the default floor (5% of a small disk) stops ingest before the disk is full, and resumes once space is freed', async (ctx) => {
    if (MOUNT_ERROR) return ctx.skip(MOUNT_ERROR);
    await server?.stop();
    // the floor variables unset: min(1 GiB, 5% of 64 MiB) = 3.2 MiB
    const disk = await fullDisk(dirs[1].path, 12, { SVC_MIN_FREE_BYTES: '', SVC_MIN_FREE_PERCENT: '' });
    server = disk.server;
    const api = client(server.url, { token: disk.who.token, tenant: disk.who.tenant_id });
    expectStatus(await api.post('/v1/admin/datasets', { dataset_id: 'logs' }), 201);
    const stream = (object: number) => api.call('POST', '/v1/ingest/sources/logs/stream?format=text', { body: body(object, LINES), contentType: 'text/plain' });

    const run = expectStatus(await stream(1), 202);
    const failed = await until('the run to stop at the floor', async () => {
      const r = expectStatus(await api.get(`/v1/ingest/runs/${run.ingest_run_id}`), 200);
      return r.status === 'failed' || r.status === 'ready' ? r : undefined;
    });
    expect(failed).toMatchObject({ status: 'failed', error_code: 'disk_full', lifecycle: { repairable: true }, error_message: expect.stringMatching(/nearly full/) });
    const refused = await stream(2);
    expect(refused.status).toBe(507);
    expect(refused.body.detail.message).toMatch(/nearly full/);
    expect(expectStatus(await api.post('/v1/search', { text: id(1, 1), datasets: ['logs'], max_expansion_terms: 0 }), 200).total.value).toBe(1);
    // the floor kept the disk from filling: no write met ENOSPC
    expect(server.stderr()).not.toMatch(/ENOSPC|No space left|Input\/output error/);

    rmSync(disk.inside(`${disk.mnt}/ballast`));
    const ready = await until('the run to resume', async () => {
      const r = expectStatus(await api.get(`/v1/ingest/runs/${run.ingest_run_id}`), 200);
      return r.status === 'ready' ? r : undefined;
    }, 60_000);
    expect(ready.documents).toMatchObject({ parsed: LINES, duplicates: 0 });
    expect(expectStatus(await api.get('/v1/datasets/logs'), 200).record_count).toBe(LINES);
    expect(expectStatus(await api.post('/v1/search', { text: id(1, LINES), datasets: ['logs'], max_expansion_terms: 0 }), 200).total.value).toBe(1);
  }, 60_000);
});
