/**
 * Benchmarks, each against a baseline measured in the same run.
 *   npm run bench              ingest, latency, relevance
 *   npm run bench -- reopen    1M-record reopen (slow)
 *   npm run bench -- tune      BM25 grid search on SciFact train
 *   npm run bench -- auth      authenticated search vs /healthz (autocannon)
 *   npm run bench -- upload    multipart upload of 200 MB vs fs.writeFile, server peak RSS
 *   npm run bench -- upload-ingest   1M log lines through an upload to ready
 *   npm run bench -- sql       GROUP BY over 1M records via /v1/sql vs DuckDB directly
 *   npm run bench -- semantic  embedding throughput, HNSW recall, nDCG text/semantic/hybrid
 *   npm run bench -- query-parse   q parse time at 1, 4 and 16 KB for pathological shapes
 *   npm run bench -- load      search at 50 and 200 connections, with and without a streaming ingest; heavy searches on 1M records
 *   npm run bench -- export    1M records exported to NDJSON and CSV vs LMDB → JSON.stringify, server RSS
 *   npm run bench -- reindex   1M records ingested, then reindexed under a stream of text searches (slow)
 *   npm run bench -- startup   start-up of node bin/svc.js and of the single executable (first run, warm), its size
 *   npm run bench -- tail      a followed directory: append → searchable lines/s vs one ingest stream, write → first hit delay
 *   npm run bench -- console   the web console in Chromium: page weight, first paint, response → results on screen
 *   npm run bench -- scale [--lines N] [--memory-max MiB]   N log lines (10M) through svc serve: lines/s, peak RSS, segments, search p50/p99 over time, reopen, size
 *   npm run bench -- sort-time   sort by time and a time range without text: a dataset in time order against one record out of order
 *   npm run bench -- detections   ingest with 0, 10 and 100 on-ingest detections; a query endpoint vs POST /v1/search, cached and not
 * Names can be combined: npm run bench -- ingest relevance
 */
import { cpus, loadavg } from 'node:os';
import { ingestBench } from './ingest.js';
import { latencyBench } from './latency.js';
import { relevanceBench } from './relevance.js';

const BENCHES: Record<string, () => Promise<unknown>> = {
  ingest: ingestBench,
  latency: latencyBench,
  relevance: relevanceBench,
  reopen: async () => (await import('./reopen.js')).reopenBench(),
  tune: () => import('./tune-bm25.js'),
  auth: async () => (await import('./auth.js')).authBench(),
  upload: async () => (await import('./upload.js')).uploadBench(),
  'upload-ingest': async () => (await import('./uploadIngest.js')).uploadIngestBench(),
  sql: async () => (await import('./sql.js')).sqlBench(),
  semantic: async () => (await import('./semantic.js')).semanticBench(),
  'query-parse': async () => (await import('./queryParse.js')).queryParseBench(),
  load: async () => (await import('./load.js')).loadBench(),
  export: async () => (await import('./export.js')).exportBench(),
  reindex: async () => (await import('./reindex.js')).reindexBench(),
  detections: async () => (await import('./detections.js')).detectionsBench(),
  tail: async () => (await import('./tail.js')).tailBench(),
  startup: async () => (await import('./startup.js')).startupBench(),
  console: async () => (await import('./console.js')).consoleBench(),
  scale: async () => (await import('./scale.js')).scaleBench(),
  'sort-time': async () => (await import('./sortTime.js')).sortTimeBench(),
};
const DEFAULT = ['ingest', 'latency', 'relevance'];

// options (--lines 1000000) are the benches' own
const VALUED = ['--lines', '--memory-max'];
const named = process.argv.slice(2).filter((arg, i, all) => !arg.startsWith('--') && !VALUED.includes(all[i - 1]));
const chosen = named.length > 0 ? named : DEFAULT;
const unknown = chosen.filter((name) => !BENCHES[name]);
if (unknown.length > 0) {
  console.error(`unknown bench ${unknown.join(', ')}; choose from ${Object.keys(BENCHES).join(', ')}`);
  process.exit(2);
}
// Timings mean little on a busy machine: the load average is printed so a reader can tell.
const load = () => loadavg()[0].toFixed(2);
console.log(`node ${process.version}, ${cpus().length} cpus, load average ${load()}`);
for (const name of chosen) await BENCHES[name]();
console.log(`\nload average at the end: ${load()}`);
