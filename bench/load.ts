/**
 * Search under load: autocannon at 50 and 200 connections on POST /v1/search, alone and with a
 * streaming ingest running beside it, against GET /healthz at the same connections in the same
 * run. Each phase prints req/s, p50/p99, errors, how much the data dir grew, and the server's
 * longest event-loop delay (from /healthz). Then single heavy searches over the whole dataset
 * (a term in most records, a filter over every record, aggregations), each with the delay it caused.
 */
import autocannon from 'autocannon';
import { createWriteStream, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { LOGHUB, repeatLines } from './ingest.js';
import { serve, svc, tempDir } from './lib/svc.js';
import { fixed, printTable } from './lib/table.js';

const SECONDS = Number(process.env.SVC_BENCH_SECONDS ?? 10);
const RECORDS = Number(process.env.SVC_BENCH_LOAD_RECORDS ?? 1_000_000);
const STREAM_LINES = 20_000;

const bytesUnder = (dir: string) =>
  readdirSync(dir, { withFileTypes: true, recursive: true }).reduce((n, e) => (e.isFile() ? n + statSync(join(e.parentPath, e.name)).size : n), 0);

export async function loadBench(): Promise<void> {
  const dir = tempDir('svc-bench-load-');
  const dataDir = join(dir.path, 'data');
  // the bench measures throughput: the per-credential limit would answer most of it with 429
  process.env.SVC_RATE_LIMIT = 'off';
  try {
    const file = join(dir.path, 'logs.log');
    const out = createWriteStream(file);
    for (const line of repeatLines(LOGHUB, RECORDS)) if (!out.write(line + '\n')) await new Promise<void>((ok) => out.once('drain', () => ok()));
    out.end();
    await finished(out);
    const who = svc(dataDir, ['init', '--yes']).out;
    svc(dataDir, ['datasets', 'create', 'logs', '--no-semantic']);
    const ingest = svc(dataDir, ['ingest', 'logs', file, '--format', 'text', '--wait']);
    console.log(`\n${RECORDS} log lines ingested to ready in ${fixed(ingest.seconds, 1)} s`);

    const server = await serve(dataDir);
    const auth = { authorization: `Bearer ${who.token}`, 'x-service-tenant-id': who.tenant_id };
    const json = { ...auth, 'content-type': 'application/json' };
    const delay = async (): Promise<number> => {
      const res = await fetch(`${server.url}/healthz?reset=true`);
      return ((await res.json()) as { event_loop: { delay_max_ms: number } }).event_loop.delay_max_ms;
    };
    const searches = [
      { text: 'PacketResponder terminating', limit: 10 },
      { text: 'authentication failure', limit: 10, where: [{ field: 'level', op: 'eq', value: 'ERROR' }] },
      { q: 'level:WARN', limit: 20 },
      { text: 'blk_-8775602795571523802', limit: 10 },
    ].map((body) => ({ method: 'POST' as const, path: '/v1/search', headers: json, body: JSON.stringify({ datasets: ['logs'], ...body }) }));
    const lines = repeatLines(LOGHUB, STREAM_LINES).join('\n') + '\n';

    try {
      const rows: (string | number)[][] = [];
      for (const connections of [50, 200]) {
        await delay();
        const health = await autocannon({ url: `${server.url}/healthz`, connections, duration: SECONDS });
        rows.push([`GET /healthz`, connections, '-', fixed(health.requests.average, 0), health.latency.p50, health.latency.p99, health.errors + health.non2xx, '-', '-', fixed(await delay(), 0)]);
        for (const withIngest of [false, true]) {
          const before = bytesUnder(dataDir);
          let streaming = withIngest;
          let streamed = 0;
          const ingesting = (async () => {
            while (streaming) {
              const res = await fetch(`${server.url}/v1/ingest/sources/logs/stream?format=text`, { method: 'POST', headers: { ...auth, 'content-type': 'text/plain' }, body: lines });
              if (res.status !== 202) throw new Error(`stream: ${res.status} ${await res.text()}`);
              streamed += STREAM_LINES;
            }
          })();
          await delay();
          const r = await autocannon({ url: server.url, connections, duration: SECONDS, requests: searches });
          streaming = false;
          await ingesting;
          const lag = await delay();
          rows.push([
            'POST /v1/search', connections, withIngest ? `${streamed} lines` : 'no', fixed(r.requests.average, 0), r.latency.p50, r.latency.p99,
            r.errors + r.non2xx, `${fixed((bytesUnder(dataDir) - before) / 2 ** 20, 2)} MB`, withIngest ? fixed(streamed / SECONDS, 0) : '-', fixed(lag, 0),
          ]);
        }
      }
      printTable(
        `Load on ${RECORDS} records (${SECONDS} s a phase; searches rotate: two texts, a filter, a q)`,
        ['endpoint', 'conns', 'ingest beside', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'data dir grew', 'lines/s in', 'max loop delay ms'],
        rows,
      );

      const heavy: [string, object][] = [
        ['a term in most records', { text: 'INFO' }],
        ['every record through a filter', { where: [{ field: 'body', op: 'contains', value: 'block' }] }],
        ['every record, two aggregations', { aggregations: [{ name: 'levels', type: 'terms', field: 'level' }, { name: 'per_hour', type: 'date_histogram', field: 'time', interval: '1h' }] }],
        ['a term in most records, filtered', { text: 'INFO', q: '-level:ERROR' }],
      ];
      const heavyRows: (string | number)[][] = [];
      for (const [name, body] of heavy) {
        await delay();
        const started = performance.now();
        const res = await fetch(`${server.url}/v1/search`, { method: 'POST', headers: json, body: JSON.stringify({ datasets: ['logs'], limit: 20, ...body }) });
        const answer = (await res.json()) as { total?: { value: number }; detail?: unknown };
        heavyRows.push([name, res.status, answer.total?.value ?? JSON.stringify(answer.detail).slice(0, 60), fixed(performance.now() - started, 0), fixed(await delay(), 0)]);
      }
      printTable('Single heavy searches over the whole dataset', ['search', 'status', 'total', 'ms', 'max loop delay ms'], heavyRows);
    } finally {
      await server.stop();
    }
  } finally {
    delete process.env.SVC_RATE_LIMIT;
    dir.remove();
  }
}
