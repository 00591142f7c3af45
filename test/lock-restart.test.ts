import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { init, serve, served, serverInfo, SVC, tempDir, type Server } from './helpers/cli.js';
import { client, expectStatus, until } from './helpers/http.js';

describe('a server started right after the last one was killed with SIGKILL', () => {
  const dir = tempDir();
  const dataDir = join(dir.path, 'data');
  const servers: Server[] = [];
  afterAll(async () => {
    for (const s of servers) await s.stop();
    dir.remove();
  });

  it('takes the data dir over at once, with what the killed one had accepted', async () => {
    const who = init(dataDir);
    const first = await serve(dataDir);
    servers.push(first);
    let api = client(first.url, { token: who.token, tenant: who.tenant_id });
    expectStatus(await api.post('/v1/admin/datasets', { dataset_id: 'logs' }), 201);

    first.proc.kill('SIGKILL'); // and no waiting for it to be gone
    const second = await serve(dataDir);
    servers.push(second);
    api = client(second.url, { token: who.token, tenant: who.tenant_id });
    expect(expectStatus(await api.get('/v1/datasets/logs'), 200).dataset_id).toBe('logs');
  });

  it.skipIf(process.platform !== 'linux')('takes it over from a killed holder its parent has not reaped yet (a zombie)', async () => {
    await Promise.all(servers.splice(0).map((s) => s.stop()));
    // sleep becomes the server's parent and never reaps it: once killed, the server stays a zombie
    const holder = spawn('sh', ['-c', `"${process.execPath}" "${SVC}" serve --port 0 & exec sleep 60`], { env: { ...process.env, SVC_DATA_DIR: dataDir }, stdio: ['ignore', 'pipe', 'pipe'] });
    servers.push(await served(holder));
    const pid = await until('server.json', () => (existsSync(join(dataDir, 'server.json')) ? serverInfo(dataDir).pid : undefined));
    process.kill(pid, 'SIGKILL');
    await until('the holder to be a zombie', () => (isZombie(pid) ? true : undefined));

    const started = Date.now();
    const next = await serve(dataDir);
    servers.push(next);
    expect(Date.now() - started).toBeLessThan(4000); // not the whole lock wait: a zombie holds nothing
    expect(serverInfo(dataDir).pid).toBe(next.proc.pid);
  });
});

function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] === 'Z';
  } catch {
    return false;
  }
}
