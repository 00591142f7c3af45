/**
 * Auth overhead: requests/s of an authenticated POST /v1/search (bearer session + tenant header)
 * beside GET /healthz (no auth) on the same server in the same run, driven by autocannon from
 * this process. A selective search (a handful of hits) keeps the search itself small, so the gap
 * is mostly auth, routing and validation; a broad one shows what search work costs. Then the
 * cost of authenticating alone (token check + tenant and role) is timed in-process.
 */
import autocannon from 'autocannon';
import { join } from 'node:path';
import { Engine } from '../src/engine/index.js';
import { DATA } from './lib/paths.js';
import { serve, svc, tempDir } from './lib/svc.js';
import { fixed, printTable } from './lib/table.js';

const SECONDS = Number(process.env.SVC_BENCH_SECONDS ?? 5);
const CONNECTIONS = 16;

async function rps(url: string, opts: { method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: string }): Promise<{ rps: number; p99: number; errors: number }> {
  const result = await autocannon({ url, connections: CONNECTIONS, duration: SECONDS, ...opts });
  return { rps: result.requests.average, p99: result.latency.p99, errors: result.errors + result.non2xx };
}

/** Microseconds per authenticate + tenant/role resolution of a session token, in-process. */
async function authenticateCost(dataDir: string, token: string, tenantId: string): Promise<number> {
  const engine = await Engine.open(dataDir);
  try {
    const rounds = 200_000;
    const started = performance.now();
    for (let i = 0; i < rounds; i++) engine.callerIn(await engine.authenticate(token), tenantId);
    return ((performance.now() - started) * 1000) / rounds;
  } finally {
    await engine.close();
  }
}

export async function authBench(): Promise<void> {
  const dir = tempDir('svc-bench-auth-');
  const dataDir = join(dir.path, 'data');
  try {
    const who = svc(dataDir, ['init', '--yes']).out;
    svc(dataDir, ['datasets', 'create', 'logs']);
    svc(dataDir, ['ingest', 'logs', join(DATA, 'loghub/HDFS/HDFS_2k.log'), '--format', 'text', '--wait']);
    const perCallUs = await authenticateCost(dataDir, who.token, who.tenant_id);
    const server = await serve(dataDir);
    try {
      const auth = { authorization: `Bearer ${who.token}`, 'x-service-tenant-id': who.tenant_id };
      const health = await rps(`${server.url}/healthz`, {});
      const me = await rps(`${server.url}/v1/me`, { headers: auth });
      const searchFor = (text: string) =>
        rps(`${server.url}/v1/search`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ text, datasets: ['logs'], limit: 10 }) });
      const selective = await searchFor('blk_-8775602795571523802');
      const broad = await searchFor('PacketResponder terminating');
      const healthAgain = await rps(`${server.url}/healthz`, {});
      const base = (health.rps + healthAgain.rps) / 2;
      printTable(
        `Auth overhead (${CONNECTIONS} connections, ${SECONDS} s each; /healthz measured before and after)`,
        ['endpoint', 'req/s', 'p99 ms', 'errors', 'vs /healthz'],
        [
          ['GET /healthz (no auth)', fixed(base, 0), health.p99, health.errors + healthAgain.errors, '1.00'],
          ['GET /v1/me (JWT verify)', fixed(me.rps, 0), me.p99, me.errors, fixed(me.rps / base, 2)],
          ['POST /v1/search, selective (4 hits)', fixed(selective.rps, 0), selective.p99, selective.errors, fixed(selective.rps / base, 2)],
          ['POST /v1/search, broad (603 hits)', fixed(broad.rps, 0), broad.p99, broad.errors, fixed(broad.rps / base, 2)],
        ],
      );
      const requestUs = 1e6 / selective.rps;
      console.log(`authenticating a request in-process: ${fixed(perCallUs, 2)} µs; a selective search request takes ${fixed(requestUs, 0)} µs of server time per request at this load → auth is ${fixed((perCallUs / requestUs) * 100, 2)}% of it`);
    } finally {
      await server.stop();
    }
  } finally {
    dir.remove();
  }
}
