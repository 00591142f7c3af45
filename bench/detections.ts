/**
 * On-ingest detections and query endpoints: the same log lines ingested in process with 0, 10 and
 * 100 enabled detections, each on a fresh data dir; then a query endpoint over HTTP against the
 * same search sent to POST /v1/search, with and without its answer cache.
 */
import { createReadStream, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import type { DetectionCreate } from '../src/api/detections.js';
import type { EndpointCreate } from '../src/api/endpoints.js';
import type { IngestRun } from '../src/api/ingest.js';
import type { Caller } from '../src/engine/auth/caller.js';
import { Engine } from '../src/engine/index.js';
import { LOGHUB, repeatLines } from './ingest.js';
import { quantile } from './lib/stats.js';
import { serve, tempDir } from './lib/svc.js';
import { fixed, printTable } from './lib/table.js';

const TARGET_LINES = 90_000; // as the ingest bench: three runs of it stay well within a few minutes
const COUNTS = [0, 10, 100];
const DATASET = 'logs';
/** a q search over the 90k lines takes most of a second: 60 runs a way keep the bench within minutes */
const RUNS = 60;
const LIMIT = 20;
/** words each found in the Loghub samples, cycled over the endpoint runs: a cached endpoint misses on a word's first run only */
const WORDS = ['error', 'failed', 'password', 'session', 'closed', 'invalid', 'kernel', 'block', 'instance', 'connection', 'exception', 'denied', 'GET', 'interrupt', 'received', 'user', 'root', 'timeout', 'warning', 'server'];
const IP_PATTERN = 'from (\\d+\\.\\d+\\.\\d+\\.\\d+)';

/**
 * The i-th detection of a realistic mix: q phrases and words, text terms, `where` filters on the
 * body, and a third of them with a per-IP threshold.
 */
function detection(i: number): DetectionCreate {
  const word = WORDS[i % WORDS.length];
  const shapes: DetectionCreate['query']['search_request'][] = [
    { q: '"Failed password"' },
    { q: word },
    { text: `${word} error` },
    { q: 'error', where: [{ field: 'body', op: 'contains', value: word }] },
    { text: word, where: [{ field: 'body', op: 'contains', value: 'sshd' }] },
    { q: `"authentication failure" OR ${word}` },
  ];
  const search_request = shapes[i % shapes.length]!;
  const threshold = i % 3 === 0 ? { count_gte: 5, window: '10m', group_pattern: IP_PATTERN } : null;
  return {
    name: `bench ${i}`,
    severity: (['low', 'medium', 'high'] as const)[i % 3],
    datasets: [DATASET],
    query: { search_request },
    trigger: { on_ingest: true },
    threshold,
  };
}

/** Every hit the tenant's detections hold, read page by page. */
function hitsStored(engine: Engine, caller: Caller): number {
  let total = 0;
  for (const det of engine.detections.list(caller, { limit: 500 }).detections) {
    let cursor: string | undefined;
    do {
      const page = engine.detections.hits(caller, det.detection_id, { limit: 500, cursor });
      total += page.hits.length;
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
  }
  return total;
}

export async function detectionsBench(): Promise<void> {
  const lines = repeatLines(LOGHUB, TARGET_LINES);
  const n = lines.length;
  const work = tempDir('svc-bench-detections-');
  try {
    const file = join(work.path, 'logs.log');
    writeFileSync(file, lines.join('\n') + '\n');

    // 1. ingest with 0, 10 and 100 on-ingest detections, each on its own data dir
    const results: { count: number; seconds: number; hits: number }[] = [];
    let served: { dir: string; token: string; tenant: string } | null = null;
    for (const count of COUNTS) {
      const dir = join(work.path, `d${count}`);
      const engine = await Engine.open(dir);
      const init = await engine.init('bench', 'admin@localhost');
      const caller = engine.localCaller();
      await engine.datasets.create(caller, { dataset_id: DATASET });
      for (let i = 0; i < count; i++) await engine.detections.create(caller, detection(i));
      const started = performance.now();
      const submitted = await engine.ingest.submit(caller, createReadStream(file, { highWaterMark: 1 << 20 }), { dataset_id: DATASET, format: 'text', filename: 'logs.log' });
      const run: IngestRun = await engine.ingest.wait(caller, submitted.ingest_run_id);
      const seconds = (performance.now() - started) / 1000;
      if (run.status !== 'ready' || run.documents.parsed !== n) throw new Error(`ingest run: ${JSON.stringify(run)}`);
      results.push({ count, seconds, hits: hitsStored(engine, caller) });
      if (count === 0) {
        // the endpoints for part 2 live on the data dir without detections
        const search_request = { q: '{{word}}', datasets: [DATASET], limit: LIMIT };
        const params: EndpointCreate['params'] = [{ name: 'word', type: 'string', required: true }];
        await engine.endpoints.create(caller, { name: 'by-word', search_request, params });
        await engine.endpoints.create(caller, { name: 'by-word-cached', search_request, params, cache_ttl_s: 600 });
        served = { dir, token: init.token, tenant: init.tenant_id };
      }
      await engine.close();
    }
    const base = results[0]!;
    const rate = (r: { seconds: number }) => n / r.seconds;
    printTable(
      `a. on-ingest detections: ${n.toLocaleString('en')} log lines, ${fixed(statSync(file).size / 2 ** 20, 1)} MB, engine in process, submit to ready`,
      ['detections', 'seconds', 'records/s', 'cost vs 0', 'hits stored'],
      results.map((r) => [r.count, fixed(r.seconds, 2), Math.round(rate(r)).toLocaleString('en'), r === base ? '' : `${fixed((1 - rate(r) / rate(base)) * 100, 1)}%`, r.hits.toLocaleString('en')]),
    );

    // 2. a query endpoint over HTTP against the same search through POST /v1/search
    const { dir, token, tenant } = served!;
    const server = await serve(dir);
    try {
      const headers = { authorization: `Bearer ${token}`, 'x-service-tenant-id': tenant, 'content-type': 'application/json' };
      const call = async (method: 'GET' | 'POST', path: string, body?: unknown) => {
        const res = await request(`${server.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
        const out = (await res.body.json()) as { records?: unknown[] };
        if (res.statusCode !== 200 || !Array.isArray(out.records)) throw new Error(`${method} ${path}: ${res.statusCode} ${JSON.stringify(out)}`);
      };
      const ways: [string, (word: string) => Promise<void>][] = [
        ['POST /v1/search (baseline)', (word) => call('POST', '/v1/search', { q: word, datasets: [DATASET], limit: LIMIT })],
        ['GET /v1/query-endpoints/by-word', (word) => call('GET', `/v1/query-endpoints/by-word?word=${encodeURIComponent(word)}`)],
        ['GET /v1/query-endpoints/by-word-cached (cache_ttl_s 600)', (word) => call('GET', `/v1/query-endpoints/by-word-cached?word=${encodeURIComponent(word)}`)],
      ];
      // The first search loads the index snapshot; it is kept out of every measurement.
      await ways[0]![1](WORDS[0]);
      const rows: (string | number)[][] = [];
      let p50Base = 0;
      for (const [name, run] of ways) {
        const ms: number[] = [];
        for (let i = 0; i < RUNS; i++) {
          const started = performance.now();
          await run(WORDS[i % WORDS.length]);
          ms.push(performance.now() - started);
        }
        const p50 = quantile(ms, 0.5);
        if (rows.length === 0) p50Base = p50;
        rows.push([name, fixed(p50, 2), fixed(quantile(ms, 0.95), 2), `${fixed(p50 / p50Base, 3)}×`]);
      }
      printTable(`b. query endpoint: ${RUNS} runs each over ${WORDS.length} words (q, limit ${LIMIT}), sequential, on the ${n.toLocaleString('en')} lines`, ['request', 'p50 ms', 'p95 ms', 'p50 / search'], rows);
    } finally {
      await server.stop();
    }
  } finally {
    work.remove();
  }
}
