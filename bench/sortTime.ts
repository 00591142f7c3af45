/**
 * Newest first by time (without text, and with text matching every record), and the last tenth of
 * the records' time span (alone, with an aggregation, with text), on a dataset whose records arrived in time order (only the run of seqs in the range
 * is read) against the same records with one of them out of order (every record read), in the same run.
 */
import { Readable } from 'node:stream';
import type { SearchRequest } from '../src/api/search.js';
import { Engine } from '../src/engine/index.js';
import { quantile } from './lib/stats.js';
import { tempDir } from './lib/svc.js';
import { fixed, printTable } from './lib/table.js';

const RECORDS = Number(process.env.SVC_BENCH_SORT_RECORDS ?? 300_000);
const SEARCHES = 20;
const START = Date.parse('2026-01-01T00:00:00Z');

function ndjson(outOfOrder: boolean): Buffer {
  const lines: string[] = [];
  for (let i = 0; i < RECORDS; i++) {
    // one record, early in the file, an hour late: the dataset is no longer in time order
    const time = outOfOrder && i === 10 ? START + RECORDS * 100 + 3_600_000 : START + i * 100;
    lines.push(JSON.stringify({ time: new Date(time).toISOString(), level: i % 17 === 0 ? 'ERROR' : 'INFO', msg: `request ${i} served in ${i % 900} ms` }));
  }
  return Buffer.from(lines.join('\n') + '\n');
}

export async function sortTimeBench(): Promise<void> {
  const work = tempDir('svc-bench-sort-');
  const engine = await Engine.open(work.path);
  try {
    await engine.init('bench', 'admin@localhost');
    const caller = engine.localCaller();
    const rows: string[][] = [];
    for (const [d, late] of [['ordered', false], ['one_late', true]] as const) {
      await engine.datasets.create(caller, { dataset_id: d, semantic: false });
      const run = await engine.ingest.submit(caller, Readable.from([ndjson(late)]), { dataset_id: d, format: 'ndjson', filename: `${d}.ndjson` });
      const done = await engine.ingest.wait(caller, run.ingest_run_id);
      if (done.status !== 'ready') throw new Error(JSON.stringify(done));
      const ordered = engine.datasets.state(caller.tenant_id, d).time_ordered ? 'yes' : 'no';
      const lastTenth = { gte: new Date(START + RECORDS * 90).toISOString() };
      const searches: [string, Partial<SearchRequest>][] = [
        ['sort: time', { sort: [{ field: 'time' }] }],
        ['time: last tenth', { time: lastTenth }],
        ['last tenth + terms agg', { time: lastTenth, aggregations: [{ name: 'levels', type: 'terms', field: 'metadata.level' }] }],
        ['last tenth + text', { time: lastTenth, text: 'served' }],
        ['text, sort: time', { text: 'served', sort: [{ field: 'time' }] }],
      ];
      for (const [what, request] of searches) {
        const took: number[] = [];
        let total = 0;
        for (let i = 0; i < SEARCHES; i++) {
          const started = performance.now();
          total = (await engine.search.run(caller, { datasets: [d], limit: 20, ...request })).total.value;
          took.push(performance.now() - started);
        }
        rows.push([d, ordered, what, fixed(quantile(took, 0.5), 1), fixed(quantile(took, 0.99), 1), total.toLocaleString('en')]);
      }
    }
    printTable(`by time: ${RECORDS.toLocaleString('en')} NDJSON records per dataset, ${SEARCHES} searches each (limit 20)`, ['dataset', 'in time order', 'search', 'p50 ms', 'p99 ms', 'total'], rows);
  } finally {
    await engine.close();
    work.remove();
  }
}
