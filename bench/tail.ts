/**
 * The directory connector under `svc serve`: Loghub lines appended to a followed file in bursts,
 * lines/s from the first write to all of them searchable, against the same lines sent as one
 * stream to POST /v1/ingest (the baseline, same server); then single lines written one at a time,
 * the delay from each write to its first search hit (p50/p99).
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { LOGHUB, repeatLines } from './ingest.js';
import { quantile } from './lib/stats.js';
import { serve, svc, tempDir } from './lib/svc.js';
import { fixed, printTable } from './lib/table.js';

const LINES = 90_000;
const BURST = 1000;
const PROBES = 100;

export async function tailBench(): Promise<void> {
  const lines = repeatLines(LOGHUB, LINES);
  const work = tempDir('svc-bench-tail-');
  const dataDir = join(work.path, 'data');
  const logs = join(work.path, 'logs');
  mkdirSync(logs);
  const { out: admin } = svc(dataDir, ['init', '--yes']);
  for (const ds of ['tail', 'stream']) svc(dataDir, ['datasets', 'create', ds, '--no-semantic']);
  const server = await serve(dataDir);
  const call = async (method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown, raw?: string) => {
    const res = await request(server.url + path, {
      method,
      headers: { authorization: `Bearer ${admin.token}`, 'x-service-tenant-id': admin.tenant_id, 'content-type': raw === undefined ? 'application/json' : 'text/plain' },
      body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
    });
    const json = (await res.body.json()) as any;
    if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${JSON.stringify(json)}`);
    return json;
  };
  // a probe is looked up as text (the text index), not q (which reads every record: about a second here)
  const total = async (dataset: string, text?: string) => (await call('POST', '/v1/search', { datasets: [dataset], ...(text ? { text } : {}), limit: 1 })).total.value as number;
  const untilCount = async (dataset: string, n: number) => {
    while ((await total(dataset)) < n) await sleep(20);
  };
  try {
    // baseline: the same lines as one stream, to searchable
    let started = performance.now();
    await call('POST', '/v1/ingest/sources/stream/stream?format=text', undefined, lines.join('\n') + '\n');
    await untilCount('stream', LINES);
    const streamSeconds = (performance.now() - started) / 1000;

    await call('PUT', '/v1/admin/connector-sources/100', {
      dataset_id: 'tail', source_key: 'tail-dir', name: 'tail', source_type: 'connector', connector_id: 'directory',
      connector_config: { path: logs, include: ['*.log'], follow: true }, parse_config: { format: 'text' },
    });
    const file = join(logs, 'app.log');
    started = performance.now();
    for (let i = 0; i < LINES; i += BURST) {
      appendFileSync(file, lines.slice(i, i + BURST).join('\n') + '\n');
      await sleep(1);
    }
    const written = (performance.now() - started) / 1000;
    await untilCount('tail', LINES);
    const tailSeconds = (performance.now() - started) / 1000;

    const delays: number[] = [];
    for (let i = 0; i < PROBES; i++) {
      const marker = `probe${i}x${Date.now()}`;
      const at = performance.now();
      appendFileSync(file, `2024-05-01T00:00:00Z ${marker} written\n`);
      while ((await total('tail', marker)) === 0) await sleep(5);
      delays.push(performance.now() - at);
    }
    printTable(`Tail: ${LINES.toLocaleString('en')} Loghub lines appended in bursts of ${BURST} to a followed file (writes took ${fixed(written, 2)} s)`, ['path', 'seconds', 'lines/s'], [
      ['directory connector (follow), append → searchable', fixed(tailSeconds, 2), Math.round(LINES / tailSeconds)],
      ['baseline: one POST /v1/ingest stream → searchable', fixed(streamSeconds, 2), Math.round(LINES / streamSeconds)],
    ]);
    printTable(`Tail: delay from a line's write to its first search hit (${PROBES} lines, one at a time)`, ['p50 ms', 'p99 ms', 'max ms'], [
      [fixed(quantile(delays, 0.5), 0), fixed(quantile(delays, 0.99), 0), fixed(Math.max(...delays), 0)],
    ]);
  } finally {
    await server.stop();
    work.remove();
  }
}
