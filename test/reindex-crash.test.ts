/**
 * A server killed with SIGKILL in the middle of a reindex (SVC_CRASH_AT: once the first index's new
 * generation is filled, once the first index replayed, right after the switch is committed) finishes
 * the job when it starts again: one generation serves every index, every record is there once, the
 * changed transform is in every index, and no other generation's files are left. A job killed
 * mid-rebuild can also be cancelled from the command line, leaving the old generation serving.
 */
import { DuckDBInstance } from '@duckdb/node-api';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { layout } from '../src/engine/layout.js';
import { DATA, init, serve, svc, tempDir, type Server } from './helpers/cli.js';
import { client, expectStatus, until, type Json } from './helpers/http.js';

const HDFS = readFileSync(join(DATA, 'loghub/HDFS/HDFS_2k.log_structured.csv'), 'utf8').trim().split('\n').slice(1).map((l) => l.split(','));
/** HDFS lines as records; `tag` is a word no line holds, kept in metadata until a transform makes it the title */
const rows = (n: number, suffix: string) =>
  HDFS.slice(0, n).map(([line, , , , level, component, content]) => ({ id: `hdfs-${line}${suffix}`, body: content, level, component, tag: `zqxtag${Number(line) % 7}` }));
const ndjson = (r: object[]) => r.map((x) => JSON.stringify(x)).join('\n') + '\n';
/** two objects of HDFS lines, the second under other ids; then more while the job resumes (a few hundred show all a crash leaves behind) */
const OBJECTS = [rows(600, ''), rows(200, '-b')];
const LATE = rows(150, '-c');
const tagged = (r: { tag: string }[]) => r.filter((x) => x.tag === 'zqxtag3').length;
const D = 'hdfs';

const ENDED = ['succeeded', 'failed', 'cancelled'];

/** One data dir with its server: a fresh one per case. */
function setup() {
  const dir = tempDir('svc-reindex-crash-');
  const dataDir = join(dir.path, 'data');
  const who = init(dataDir);
  let server: Server | undefined;
  let api = client('');
  return {
    dataDir,
    who,
    api: () => api,
    start: async (env?: Record<string, string>) => {
      server = await serve(dataDir, { env });
      api = client(server.url, { token: who.token, tenant: who.tenant_id });
      return server;
    },
    stop: async () => server?.stop(),
    remove: async () => {
      await server?.stop();
      dir.remove();
    },
  };
}

/** Resolves with the signal that ended the process (null: it exited on its own). */
const died = (s: Server) =>
  s.proc.exitCode !== null || s.proc.signalCode !== null ? Promise.resolve(s.proc.signalCode) : new Promise<NodeJS.Signals | null>((ok) => s.proc.once('exit', (_code, signal) => ok(signal)));

/** A dataset with vectors holding OBJECTS, embedded; then its source's transform makes `tag` the title. */
async function ingestAndRetitle(api: ReturnType<typeof client>): Promise<void> {
  expectStatus(await api.post('/v1/admin/datasets', { dataset_id: D }), 201);
  for (const object of OBJECTS) await ingest(api, object);
  const [source] = expectStatus(await api.get(`/v1/admin/sources?dataset_id=${D}`), 200).sources;
  // a PUT replaces the source: what it keeps (its vectors' config above all) is sent again
  const kept = Object.fromEntries(['dataset_id', 'name', 'source_key', 'source_type', 'enabled', 'parse_config', 'retention_days', 'search_config', 'semantic_config'].map((k) => [k, source[k]]));
  expect(kept.semantic_config).toBeTruthy();
  const put = await api.put(`/v1/admin/hosted-sources/${source.source_id}`, { ...kept, transform_config: { title_field: 'tag' } });
  expectStatus(put, 200);
}

/** Streams records in as one object; resolves once they are embedded too. */
async function ingest(api: ReturnType<typeof client>, records: object[]): Promise<void> {
  const run = expectStatus(await api.call('POST', `/v1/ingest/sources/${D}/stream?format=ndjson`, { body: ndjson(records) }), 202);
  await until(`run ${run.ingest_run_id}`, async () => {
    const r = expectStatus(await api.get(`/v1/ingest/runs/${run.ingest_run_id}`), 200);
    expect(r.status).not.toBe('failed');
    return r.status === 'ready' && r.ready_for.semantic_search ? r : undefined;
  }, 60_000);
}

const ended = (api: ReturnType<typeof client>, jobId: string) =>
  until(`reindex ${jobId} to end`, async () => {
    const job = expectStatus(await api.get(`/v1/admin/reindex/jobs/${jobId}`), 200);
    return ENDED.includes(job.status) ? job : undefined;
  }, 60_000);

/** What the dataset answers: every record once in text search and SQL, and how many the transform titled. */
async function answers(api: ReturnType<typeof client>) {
  const total = async (body: object) => expectStatus(await api.post('/v1/search', { datasets: [D], limit: 1, ...body }), 200).total;
  const sql = expectStatus(await api.post('/v1/sql', { sql: `SELECT count(*) AS n, count(DISTINCT _id) AS ids, count(*) FILTER (WHERE _title = 'zqxtag3') AS titled FROM ${D}` }), 200).records[0].metadata;
  return {
    records: expectStatus(await api.get(`/v1/datasets/${D}`), 200).record_count,
    text: await total({}),
    textTagged: (await total({ text: 'zqxtag3' })).value,
    sql,
  };
}

/** What a dataset holding `records`, each titled by its tag, answers. */
const everyRecordOnce = (records: { tag: string }[]) => ({
  records: records.length,
  text: { value: records.length, relation: 'eq' },
  textTagged: tagged(records),
  sql: { n: records.length, ids: records.length, titled: tagged(records) },
});

/** The generation files of the dataset's text and vector indexes, and its SQL tables (the server stopped). */
async function generations(dataDir: string, t: string): Promise<{ files: string[]; tables: string[] }> {
  const files = readdirSync(layout.datasetIndexes(dataDir, t, D)).filter((f) => /^(text(-\d+)?\.snapshot|vector-\d+\.)/.test(f)).sort();
  const db = await DuckDBInstance.create(layout.sqlFile(dataDir, t), { access_mode: 'READ_ONLY' });
  const conn = await db.connect();
  const found = (await conn.runAndReadAll(`SELECT table_name FROM duckdb_tables() WHERE table_name LIKE '${D}@%' ORDER BY table_name`)).getRowObjectsJS();
  conn.closeSync();
  db.closeSync();
  return { files, tables: found.map((r) => String(r.table_name)) };
}

describe('a server killed mid-reindex', () => {
  let env: ReturnType<typeof setup> | undefined;
  afterEach(async () => {
    await env?.remove();
    env = undefined;
  });

  it.each(['reindex:rebuild', 'reindex:replay', 'reindex:promote'])('at %s finishes the job on restart: one generation, every record once', async (point) => {
    env = setup();
    const killed = await env.start({ SVC_CRASH_AT: point });
    await ingestAndRetitle(env.api());
    const job = expectStatus(await env.api().post('/v1/admin/reindex/jobs', { dataset_id: D }), 202);
    expect(await died(killed)).toBe('SIGKILL');

    await env.start();
    // records that come while the job resumes are in the new generation too, once
    const [done] = await Promise.all([ended(env.api(), job.job_id), ingest(env.api(), LATE)]);
    expect(done).toMatchObject({ status: 'succeeded', phase: 'done', object_count: 2, object_status_counts: { done: 2 }, error_message: null });
    expect(expectStatus(await env.api().get(`/v1/admin/jobs/${job.job_id}`), 200).attempts).toBe(2);
    const g: number = done.target_generation_id;
    expect(g).toBeGreaterThan(Math.max(...done.source_generation_ids));
    expect(await answers(env.api())).toEqual(everyRecordOnce([...OBJECTS.flat(), ...LATE]));
    // vectors serve too, each record once
    const semantic = expectStatus(await env.api().post('/v1/search', { datasets: [D], text: 'block replication', semantic: true, limit: 200 }), 200);
    const ids = semantic.records.map((r: Json) => r.id);
    expect(ids.length).toBeGreaterThan(50);
    expect(new Set(ids).size).toBe(ids.length);

    const t = env.who.tenant_id;
    expect(existsSync(layout.textSnapshot(env.dataDir, t, D, g))).toBe(true);
    await env.stop();
    const { files, tables } = await generations(env.dataDir, t);
    expect(files.filter((f) => !f.startsWith(`vector-${g}.`))).toEqual([`text-${g}.snapshot`]);
    expect(files.filter((f) => f.startsWith('vector-')).length).toBeGreaterThan(0);
    expect(tables).toEqual([`${D}@${g}`]);
  }, 120_000);

  it('killed mid-rebuild, the job can be cancelled with svc jobs cancel: the old generation serves, the partial one is gone', async () => {
    env = setup();
    const killed = await env.start({ SVC_CRASH_AT: 'reindex:rebuild' });
    await ingestAndRetitle(env.api());
    const t = env.who.tenant_id;
    const job = expectStatus(await env.api().post('/v1/admin/reindex/jobs', { dataset_id: D }), 202);
    expect(await died(killed)).toBe('SIGKILL');

    // in local mode: this process takes the job over from the dead one, and the cancel stops it
    const cancel = svc(['jobs', 'cancel', job.job_id, '--output', 'json'], { dataDir: env.dataDir });
    expect(cancel.status, cancel.stderr).toBe(0);
    expect(cancel.json()).toMatchObject({ job_id: job.job_id, type: 'reindex' });
    expect(svc(['jobs', 'get', job.job_id, '--output', 'json'], { dataDir: env.dataDir }).json()).toMatchObject({ status: 'cancelled' });

    await env.start();
    const done: Json = expectStatus(await env.api().get(`/v1/admin/reindex/jobs/${job.job_id}`), 200);
    expect(done.status).toBe('cancelled');
    // the records were parsed again before the kill: the old generation has them, each once
    expect(await answers(env.api())).toEqual(everyRecordOnce(OBJECTS.flat()));
    await env.stop();
    // text 0, SQL 1, vectors 1: the generations a dataset starts with
    expect(done.source_generation_ids).toEqual([0, 1, 1]);
    const { files, tables } = await generations(env.dataDir, t);
    expect(files.filter((f) => !f.startsWith('vector-1.'))).toEqual(['text.snapshot']);
    expect(files.filter((f) => f.startsWith('vector-1.')).length).toBeGreaterThan(0);
    expect(tables).toEqual([`${D}@1`]);
  }, 120_000);

  it('killed after the switch, the job can no longer be cancelled: it finishes, and the old generation goes', async () => {
    env = setup();
    const killed = await env.start({ SVC_CRASH_AT: 'reindex:promote' });
    await ingestAndRetitle(env.api());
    const job = expectStatus(await env.api().post('/v1/admin/reindex/jobs', { dataset_id: D }), 202);
    expect(await died(killed)).toBe('SIGKILL');

    const cancel = svc(['jobs', 'cancel', job.job_id], { dataDir: env.dataDir });
    expect(cancel.status, cancel.stderr).toBe(1);
    expect(cancel.stderr).toMatch(/^svc: [^\n]*switched[^\n]*\n$/);
    expect(svc(['jobs', 'get', job.job_id, '--output', 'json'], { dataDir: env.dataDir }).json()).toMatchObject({ status: 'succeeded' });

    await env.start();
    const done: Json = expectStatus(await env.api().get(`/v1/admin/reindex/jobs/${job.job_id}`), 200);
    expect(done).toMatchObject({ status: 'succeeded', phase: 'done' });
    expect(await answers(env.api())).toEqual(everyRecordOnce(OBJECTS.flat()));
    await env.stop();
    const g = done.target_generation_id;
    const { files, tables } = await generations(env.dataDir, env.who.tenant_id);
    expect(files.filter((f) => !f.startsWith(`vector-${g}.`))).toEqual([`text-${g}.snapshot`]);
    expect(tables).toEqual([`${D}@${g}`]);
  }, 120_000);
});
