/** Search latency: 300 SciFact queries one after another over HTTP to `svc serve`, and plain MiniSearch in process. */
import { request } from 'undici';
import { miniScifact } from './lib/mini.js';
import { CORPUS, corpus, queries } from './lib/scifact.js';
import { quantile } from './lib/stats.js';
import { serve, svc, tempDir } from './lib/svc.js';
import { fixed, printTable } from './lib/table.js';

const LIMIT = 10;

export async function latencyBench(): Promise<void> {
  const qs = queries('test');
  const dir = tempDir('svc-bench-latency-');
  const rows: (string | number)[][] = [];
  let breakdown: (string | number)[][] = [];
  try {
    const { out: init } = svc(dir.path, ['init', '--yes']);
    // text search alone: without vectors to build, the server does no embedding while it is measured
    svc(dir.path, ['datasets', 'create', 'scifact', '--no-semantic']);
    svc(dir.path, ['ingest', 'scifact', CORPUS, '--format', 'ndjson', '--id-field', '_id', '--body-field', 'text', '--wait']);
    const server = await serve(dir.path);
    try {
      const phases: Record<string, number[]> = {};
      const headers = { authorization: `Bearer ${init.token}`, 'x-service-tenant-id': init.tenant_id, 'content-type': 'application/json' };
      const search = async (text: string) => {
        const res = await request(`${server.url}/v1/search`, { method: 'POST', headers, body: JSON.stringify({ text, datasets: ['scifact'], limit: LIMIT }) });
        const body = (await res.body.json()) as { records: unknown[] };
        if (res.statusCode !== 200) throw new Error(`POST /v1/search: ${res.statusCode} ${JSON.stringify(body)}`);
        for (const part of String(res.headers['server-timing'] ?? '').split(', ')) {
          const [name, dur] = part.split(';dur=');
          if (dur !== undefined) (phases[name] ??= []).push(Number(dur));
        }
        return body;
      };
      // The first search loads the index snapshot; it is shown on its own, not mixed into the quantiles.
      let started = performance.now();
      await search(qs[0].text);
      const first = performance.now() - started;
      const ms: number[] = [];
      for (const q of qs) {
        started = performance.now();
        await search(q.text);
        ms.push(performance.now() - started);
      }
      rows.push([`svc POST /v1/search (limit ${LIMIT})`, fixed(quantile(ms, 0.5), 2), fixed(quantile(ms, 0.99), 2), fixed(first, 1)]);
      const client = ms.map((m, i) => m - (phases.total?.[i + 1] ?? m)); // the first search's phases are not in `ms`
      breakdown = [
        ...Object.entries(phases).map(([name, values]) => [name === 'total' ? 'total in the server' : name, fixed(quantile(values.slice(1), 0.5), 2), fixed(quantile(values.slice(1), 0.99), 2)]),
        ['client and network (HTTP, JSON parse)', fixed(quantile(client, 0.5), 2), fixed(quantile(client, 0.99), 2)],
      ];
    } finally {
      await server.stop();
    }
  } finally {
    dir.remove();
  }

  const docs = corpus();
  for (const analyzer of [true, false]) {
    const mini = miniScifact(docs, analyzer);
    const ms: number[] = [];
    for (const q of qs) {
      const started = performance.now();
      mini.search(q.text).slice(0, LIMIT);
      ms.push(performance.now() - started);
    }
    rows.push([`MiniSearch in process, ${analyzer ? 'Porter + stop words' : 'default options'}`, fixed(quantile(ms, 0.5), 2), fixed(quantile(ms, 0.99), 2), '']);
  }
  printTable(`b. search latency: ${qs.length} SciFact test queries, sequential`, ['search', 'p50 ms', 'p99 ms', 'first ms'], rows);
  printTable('b. where a search over HTTP spends its time (Server-Timing of each answer; each phase\'s own quantiles)', ['phase', 'p50 ms', 'p99 ms'], breakdown);
}
