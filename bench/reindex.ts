/**
 * Reindex at 1M records, as a user runs it against `svc serve`: a fresh data dir, a dataset made
 * with the defaults (vectors on), the Loghub records (NDJSON, cycled to N) ingested with
 * `svc ingest logs FILE --format ndjson --wait` through the server; that first ingest is timed to
 * ready (text and SQL) and on to its vectors. Then `POST /v1/admin/reindex/jobs` rebuilds the
 * dataset while a steady stream of text searches runs against the server; the reindex's records/s
 * is set against the first ingest's, and the searches' p50/p99 against the same searches on the
 * idle server just before. Optionally a separately timed vector reindex of a smaller dataset.
 *
 *   npm run bench -- reindex
 *   SVC_BENCH_REINDEX_RECORDS=200000 npm run bench -- reindex        (a smaller run; default 1,000,000)
 *   SVC_BENCH_REINDEX_INDEXES=text,sql,vector                         (which indexes the timed reindex rebuilds)
 *   SVC_BENCH_REINDEX_RATE=2  SVC_BENCH_REINDEX_IDLE_SECONDS=30       (searches a second; length of the idle baseline)
 *   SVC_BENCH_REINDEX_VECTOR_RECORDS=100000                           (the vector reindex's dataset; 0 skips it)
 *   SVC_BENCH_REINDEX_SEMANTIC=off                                    (the big dataset without vectors: no wait for its embedding)
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import type { IngestRun } from '../src/api/ingest.js';
import type { ReindexJob } from '../src/api/reindex.js';
import { SVC } from './lib/paths.js';
import { quantile } from './lib/stats.js';
import { serve, svc, tempDir, type Served } from './lib/svc.js';
import { fixed, printTable } from './lib/table.js';
import { writeRecords } from './sql.js';

const RECORDS = Number(process.env.SVC_BENCH_REINDEX_RECORDS ?? 1_000_000);
const INDEXES = (process.env.SVC_BENCH_REINDEX_INDEXES ?? 'text,sql').split(',').map((s) => s.trim()) as ReindexJob['indexes'];
const RATE = Number(process.env.SVC_BENCH_REINDEX_RATE ?? 2);
const IDLE_SECONDS = Number(process.env.SVC_BENCH_REINDEX_IDLE_SECONDS ?? 30);
/** off: the big dataset is made with --no-semantic, which spares the embedding of all its records (the longest step) */
const SEMANTIC = process.env.SVC_BENCH_REINDEX_SEMANTIC !== 'off';
const VECTOR_RECORDS = Number(process.env.SVC_BENCH_REINDEX_VECTOR_RECORDS ?? 100_000);
/** Text searches the stream rotates through: common and rare terms of the Loghub systems. */
const TEXTS = ['PacketResponder terminating', 'authentication failure', 'instruction cache parity error corrected', 'Received block', 'session opened for user root', 'blk_-1608999687919862906'];

const seconds = (since: number) => (performance.now() - since) / 1000;
const perSecond = (n: number, s: number) => `${Math.round(n / s).toLocaleString('en')} records/s`;
const count = (n: number) => n.toLocaleString('en');

interface Client {
  server: Served;
  call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T>;
}

function client(server: Served, who: { token: string; tenant_id: string }): Client {
  const headers = { authorization: `Bearer ${who.token}`, 'x-service-tenant-id': who.tenant_id, 'content-type': 'application/json' };
  return {
    server,
    async call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
      const res = await request(`${server.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      const answer = (await res.body.json()) as T;
      if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${JSON.stringify(answer)}`);
      return answer;
    },
  };
}

/** `svc ingest DATASET FILE --format ndjson --wait` against the server, as a user runs it; the run it printed and its wall time. */
async function ingestThrough(server: Served, who: { token: string }, dataset: string, file: string, scratch: string): Promise<{ run: IngestRun; seconds: number }> {
  const started = performance.now();
  const proc = spawn(process.execPath, [SVC, 'ingest', dataset, file, '--format', 'ndjson', '--wait', '--output', 'json'], {
    env: { ...process.env, SVC_DATA_DIR: scratch, SVC_URL: server.url, SVC_TOKEN: who.token, SVC_TENANT: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  proc.stdout!.on('data', (d) => (stdout += d));
  proc.stderr!.on('data', (d) => (stderr += d));
  const [code] = await once(proc, 'exit');
  if (code !== 0) throw new Error(`svc ingest exited ${code}: ${stderr}`);
  return { run: JSON.parse(stdout), seconds: seconds(started) };
}

/** Polls the run until all its records have vectors; the time since `from`. */
async function vectorsDone(c: Client, runId: string, from: number): Promise<{ run: IngestRun; seconds: number }> {
  for (;;) {
    const run = await c.call<IngestRun>('GET', `/v1/ingest/runs/${runId}`);
    if (run.ready_for.semantic_search) return { run, seconds: seconds(from) };
    if (run.status === 'failed') throw new Error(`run failed: ${JSON.stringify(run)}`);
    await sleep(250);
  }
}

/** The server's longest event-loop delay since the last call. */
async function loopDelay(c: Client): Promise<number> {
  return (await c.call<{ event_loop: { delay_max_ms: number } }>('GET', '/healthz?reset=true')).event_loop.delay_max_ms;
}

interface Answered {
  ms: number;
  /** 200, or the error code the server answered with */
  code: string;
}

interface Stream {
  /** Stops issuing and waits for the searches in flight; every answer, and the most in flight at once. */
  stop(): Promise<{ answers: Answered[]; maxInFlight: number }>;
}

/**
 * Text searches issued on a fixed schedule, RATE a second, whether or not the earlier ones have
 * answered (a slow server is not given fewer searches); each latency is from its send to its answer.
 */
function searchStream(c: Client, dataset: string): Stream {
  const answers: Answered[] = [];
  const inFlight = new Set<Promise<void>>();
  let maxInFlight = 0;
  let i = 0;
  const one = async (text: string) => {
    const started = performance.now();
    try {
      await c.call('POST', '/v1/search', { datasets: [dataset], text, limit: 10 });
      answers.push({ ms: performance.now() - started, code: '200' });
    } catch (err) {
      const m = /: (\d{3}) .*?"code":"([^"]+)"/.exec((err as Error).message);
      answers.push({ ms: performance.now() - started, code: m ? `${m[1]} ${m[2]}` : (err as Error).message.slice(0, 120) });
    }
  };
  const timer = setInterval(() => {
    const p = one(TEXTS[i++ % TEXTS.length]);
    inFlight.add(p);
    maxInFlight = Math.max(maxInFlight, inFlight.size);
    void p.finally(() => inFlight.delete(p));
  }, 1000 / RATE);
  return {
    async stop() {
      clearInterval(timer);
      await Promise.all(inFlight);
      return { answers, maxInFlight };
    },
  };
}

/** Starts a reindex and waits for it to end; the job as it ended, the wall time, and the phases seen on the way. */
async function reindex(c: Client, dataset: string, indexes: ReindexJob['indexes']): Promise<{ job: ReindexJob; seconds: number; phases: Record<string, number> }> {
  const started = performance.now();
  let job = await c.call<ReindexJob>('POST', '/v1/admin/reindex/jobs', { dataset_id: dataset, indexes });
  const phases: Record<string, number> = {};
  let phase = '';
  let since = performance.now();
  for (;;) {
    job = await c.call<ReindexJob>('GET', `/v1/admin/reindex/jobs/${job.job_id}`);
    if (job.phase !== phase) {
      if (phase) phases[phase] = seconds(since);
      phase = job.phase;
      since = performance.now();
    }
    if (['succeeded', 'failed', 'cancelled'].includes(job.status)) break;
    await sleep(250);
  }
  phases[phase] = seconds(since);
  if (job.status !== 'succeeded') throw new Error(`reindex ${job.status}: ${JSON.stringify(job)}`);
  return { job, seconds: seconds(started), phases };
}

/** What a few checks answer: the hits of each text, and the SQL count. */
async function counts(c: Client, dataset: string): Promise<string> {
  const hits = [];
  for (const text of TEXTS) hits.push((await c.call<{ total: { value: number } }>('POST', '/v1/search', { datasets: [dataset], text, limit: 1 })).total.value);
  const sql = await c.call<{ records: { metadata: Record<string, unknown> }[] }>('POST', '/v1/sql', { sql: `SELECT count(*) AS n FROM ${dataset}` });
  return `hits ${hits.join('/')}, SQL count ${Number(sql.records[0].metadata.n)}`;
}

/** Latency over every answer, errors included at the time they took to come; then the answers that were not 200, by code. */
function latencyRow(name: string, s: { answers: Answered[]; maxInFlight: number }, delay: number): (string | number)[] {
  const ms = s.answers.map((a) => a.ms);
  const ok = s.answers.filter((a) => a.code === '200').length;
  return [name, s.answers.length, ok, s.answers.length - ok, fixed(quantile(ms, 0.5), 1), fixed(quantile(ms, 0.99), 1), fixed(Math.max(...ms), 0), s.maxInFlight, fixed(delay, 0)];
}

function errorCodes(s: { answers: Answered[] }): string {
  const by: Record<string, number> = {};
  for (const a of s.answers) if (a.code !== '200') by[a.code] = (by[a.code] ?? 0) + 1;
  return Object.entries(by).map(([code, k]) => `${k} × ${code}`).join(', ') || 'none';
}

export async function reindexBench(): Promise<void> {
  const work = tempDir('svc-bench-reindex-');
  const dataDir = join(work.path, 'data');
  const n = count(RECORDS);
  try {
    const file = join(work.path, 'logs.ndjson');
    let started = performance.now();
    await writeRecords(file, RECORDS);
    console.log(`\n${n} Loghub records written as NDJSON in ${fixed(seconds(started), 1)} s`);

    const who = svc(dataDir, ['init', '--yes']).out;
    svc(dataDir, ['datasets', 'create', 'logs', ...(SEMANTIC ? [] : ['--no-semantic'])]); // the defaults: vectors on
    const server = await serve(dataDir);
    const c = client(server, who);
    try {
      // 1. the first ingest, on the fresh data dir
      started = performance.now();
      const first = await ingestThrough(server, who, 'logs', file, join(work.path, 'cli'));
      if (first.run.status !== 'ready' || first.run.documents.parsed !== RECORDS || !first.run.ready_for.text_search || !first.run.ready_for.sql_search) {
        throw new Error(`first ingest: ${JSON.stringify(first.run)}`);
      }
      // the embedding job runs after ready: it is waited for, or it would run on through the measurements below
      const vectors = SEMANTIC ? await vectorsDone(c, first.run.ingest_run_id, started) : null;
      const embedded = vectors?.run.documents.semantic_embedded ?? 0;
      const since = (at: string | null) => (Date.parse(at!) - Date.parse(first.run.created_at)) / 1000;
      printTable(`First ingest: ${n} records into a fresh data dir, svc ingest --format ndjson --wait through svc serve (${SEMANTIC ? 'dataset defaults: vectors on' : '--no-semantic'})`, ['step', 'value'], [
        ['to ready (upload, parse, records, text index, SQL index)', `${fixed(first.seconds, 1)} s, ${perSecond(RECORDS, first.seconds)}`],
        ['  of which run created → text indexed → ready (server clock)', `${fixed(since(first.run.text_indexed_at), 1)} s → ${fixed(since(first.run.completed_at), 1)} s`],
        ...(vectors
          ? [
              ['to vectors done (embedded after ready, by the background job)', `${fixed(vectors.seconds, 1)} s, ${perSecond(RECORDS, vectors.seconds)}`],
              ['  embedding alone (ready → vectors done)', `${fixed(vectors.seconds - first.seconds, 1)} s, ${perSecond(embedded, vectors.seconds - first.seconds)} (${count(embedded)} embedded, ${vectors.run.documents.semantic_failed} failed)`],
            ]
          : [['vectors', 'none: the dataset was made with --no-semantic']]),
      ]);
      const before = await counts(c, 'logs');

      // 2. the same searches on the idle server
      for (const text of TEXTS) await c.call('POST', '/v1/search', { datasets: ['logs'], text, limit: 10 }); // warm
      await loopDelay(c);
      started = performance.now();
      const idleStream = searchStream(c, 'logs');
      await sleep(IDLE_SECONDS * 1000);
      const idle = await idleStream.stop();
      const idleSeconds = seconds(started);
      const idleDelay = await loopDelay(c);

      // 3. the reindex, the same searches running beside it
      const during = searchStream(c, 'logs');
      started = performance.now();
      const re = await reindex(c, 'logs', INDEXES);
      const busy = await during.stop();
      const busySeconds = seconds(started);
      const busyDelay = await loopDelay(c);
      const after = await counts(c, 'logs');
      const rebuilt = re.job.source_document_count + re.job.replay_document_count;
      const serverSeconds = (Date.parse(re.job.completed_at!) - Date.parse(re.job.started_at!)) / 1000;

      printTable(`Reindex of ${n} records, indexes [${re.job.indexes.join(', ')}], against the first ingest in this run`, ['step', 'value'], [
        ['first ingest to ready (text + SQL)', `${fixed(first.seconds, 1)} s, ${perSecond(RECORDS, first.seconds)}`],
        ['reindex, POST → succeeded seen', `${fixed(re.seconds, 1)} s, ${perSecond(rebuilt, re.seconds)}`],
        ['reindex, job started_at → completed_at', `${fixed(serverSeconds, 1)} s, ${perSecond(rebuilt, serverSeconds)}`],
        ['reindex speed / first ingest speed', `${fixed(first.seconds / re.seconds, 2)}×`],
        ['records rebuilt (source + replayed)', `${count(re.job.source_document_count)} + ${count(re.job.replay_document_count)}`],
        ['phases (s, polled every 250 ms; replay includes sealing)', Object.entries(re.phases).map(([p, s]) => `${p} ${fixed(s, 1)}`).join(', ')],
        ['objects (manifest)', `${re.job.object_count} ${JSON.stringify(re.job.object_status_counts)}`],
        ['checks before reindex', before],
        ['checks after reindex', after],
      ]);
      const q = (x: { answers: Answered[] }, p: number) => quantile(x.answers.map((a) => a.ms), p);
      printTable(
        `Text searches, ${RATE}/s on a fixed schedule (${TEXTS.length} texts in turn, limit 10), idle server vs during the reindex; latency over every answer`,
        ['phase', 'issued', '200', 'errors', 'p50 ms', 'p99 ms', 'max ms', 'most in flight', 'max loop delay ms'],
        [latencyRow(`idle, ${fixed(idleSeconds, 0)} s just before`, idle, idleDelay), latencyRow(`during the reindex, ${fixed(busySeconds, 0)} s`, busy, busyDelay)],
      );
      console.log(`p50 during / idle: ${fixed(q(busy, 0.5) / q(idle, 0.5), 2)}×; p99 during / idle: ${fixed(q(busy, 0.99) / q(idle, 0.99), 2)}×`);
      console.log(`errors idle: ${errorCodes(idle)}; during the reindex: ${errorCodes(busy)}`);
      if (before !== after) console.log(`checks differ after the reindex: before ${before}; after ${after}`);

      // 4. vectors: a separately timed vector reindex of a smaller dataset on the same server
      if (VECTOR_RECORDS > 0 && !INDEXES.includes('vector')) {
        const vfile = join(work.path, 'vlogs.ndjson');
        await writeRecords(vfile, VECTOR_RECORDS);
        await c.call('POST', '/v1/admin/datasets', { dataset_id: 'vlogs' });
        started = performance.now();
        const vfirst = await ingestThrough(server, who, 'vlogs', vfile, join(work.path, 'cli'));
        const vdone = await vectorsDone(c, vfirst.run.ingest_run_id, started);
        const vre = await reindex(c, 'vlogs', ['vector']);
        const vn = vre.job.source_document_count + vre.job.replay_document_count;
        const vm = count(VECTOR_RECORDS);
        printTable(`Vector reindex alone: ${vm} of the same records in a second dataset (defaults), same server`, ['step', 'value'], [
          ['first ingest to ready (text + SQL)', `${fixed(vfirst.seconds, 1)} s, ${perSecond(VECTOR_RECORDS, vfirst.seconds)}`],
          ['first ingest to vectors done', `${fixed(vdone.seconds, 1)} s, ${perSecond(VECTOR_RECORDS, vdone.seconds)}`],
          ['  embedding alone (ready → vectors done)', `${fixed(vdone.seconds - vfirst.seconds, 1)} s, ${perSecond(VECTOR_RECORDS, vdone.seconds - vfirst.seconds)}`],
          ['reindex [vector], POST → succeeded seen', `${fixed(vre.seconds, 1)} s, ${perSecond(vn, vre.seconds)} (${count(vn)} embedded again)`],
        ]);
      }
    } finally {
      await server.stop();
    }
  } finally {
    work.remove();
  }
}

if (process.argv[1] === import.meta.filename) await reindexBench();
