/**
 * `svc reindex` in local and remote mode: a changed transform reaches old records, --index and
 * --source narrow the job, --wait prints the job as it ended and exits 5 when it was cancelled,
 * `svc jobs` sees and cancels reindex jobs, and bad input fails with one line and its exit code.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATA, init, svc, svcAsync, tempDir, useHdfsServer } from './helpers/cli.js';
import { client, expectStatus, until } from './helpers/http.js';

const HDFS = readFileSync(join(DATA, 'loghub/HDFS/HDFS_2k.log_structured.csv'), 'utf8').trim().split('\n').slice(1).map((l) => l.split(','));
/** HDFS lines as records; `tag` is a word no line holds, kept in metadata until a transform makes it the title */
const rows = (from: number, n: number, suffix = '') =>
  HDFS.slice(from, from + n).map(([line, , , , level, component, content]) => ({ id: `hdfs-${line}${suffix}`, body: content, level, component, tag: `zqxtag${Number(line) % 7}` }));
const ndjson = (r: object[]) => r.map((x) => JSON.stringify(x)).join('\n') + '\n';
const tagged = (n: number, tag: string) => rows(0, n).filter((r) => r.tag === tag).length;

/** A failure as a script sees it: its exit code, nothing on stdout, one line on stderr. */
function expectOneLine(r: { status: number; stdout: string; stderr: string }, code: number, message: RegExp): void {
  expect(r.status, r.stderr).toBe(code);
  expect(r.stdout).toBe('');
  expect(r.stderr).toMatch(/^svc: [^\n]+\n$/);
  expect(r.stderr).toMatch(message);
}

describe('svc reindex on a local data dir', () => {
  const dir = tempDir('svc-reindex-');
  const dataDir = join(dir.path, 'data');
  const run = (args: string[], input?: string) => svc(args, { dataDir, input });
  const json = (args: string[], input?: string) => {
    const r = run([...args, '--output', 'json'], input);
    expect(r.status, r.stderr).toBe(0);
    return r.json();
  };
  const hits = (q: string) => json(['search', q, '--dataset', 'tx', '--limit', '1']).total.value;
  let first: any;

  beforeAll(() => {
    init(dataDir);
    json(['datasets', 'create', 'tx', '--no-semantic']);
    expect(json(['ingest', 'tx', '-', '--format', 'ndjson', '--wait'], ndjson(rows(0, 300))).status).toBe('ready');
    expect(json(['ingest', 'tx', '-', '--format', 'ndjson', '--wait'], ndjson(rows(300, 200))).status).toBe('ready');
  });
  afterAll(() => dir.remove());

  it('takes a changed transform into the records already ingested: --wait prints the job as it ended', () => {
    expect(hits('zqxtag3')).toBe(0); // the tag is metadata: text search does not see it
    const source = json(['sources', 'get', 'tx']);
    json(['sources', 'create', String(source.source_id), '--dataset', 'tx', '--key', 'tx', '--title-field', 'tag']);

    first = json(['reindex', 'tx', '--wait']);
    expect(first).toMatchObject({
      status: 'succeeded', phase: 'done', dataset_id: 'tx', source_id: null, indexes: ['text', 'vector', 'sql'],
      object_count: 2, object_status_counts: { done: 2 }, source_document_count: 500, error_message: null,
    });
    expect(first.job_id).toMatch(/^job_/);
    expect(first.source_generation_ids).toHaveLength(2); // text and SQL: the dataset has no vectors
    expect(first.target_generation_id).toBeGreaterThan(Math.max(...first.source_generation_ids));

    expect(hits('zqxtag3')).toBe(tagged(500, 'zqxtag3'));
    const [counts] = json(['sql', "SELECT count(*) AS n, count(DISTINCT _id) AS ids, count(*) FILTER (WHERE _title = 'zqxtag3') AS t3 FROM tx"]).records;
    expect(counts.metadata).toEqual({ n: 500, ids: 500, t3: tagged(500, 'zqxtag3') });
  });

  it('--index and --source (an id or a key) narrow the job; without --wait a local command still runs it to its end', () => {
    const job = json(['reindex', 'tx', '--index', 'text', '--index', 'sql', '--index', 'text', '--source', 'tx']);
    expect(job).toMatchObject({ status: 'succeeded', indexes: ['text', 'sql'], source_id: first.source_id ?? expect.any(Number), object_status_counts: { done: 2 } });
    // nothing changed since the last reindex: nothing is parsed again, and the new generation follows the last one
    expect(job.source_generation_ids).toEqual([first.target_generation_id, first.target_generation_id]);
    expect(hits('zqxtag3')).toBe(tagged(500, 'zqxtag3'));

    const table = run(['reindex', 'tx', '--index', 'sql', '--output', 'table']);
    expect(table.status, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/^status: succeeded$/m);
    expect(table.stdout).toMatch(/^indexes: \["sql"\]$/m);
  });

  it('svc jobs shows a reindex job; cancelling one that ended is refused', () => {
    expect(json(['jobs', 'get', first.job_id])).toMatchObject({ job_id: first.job_id, type: 'reindex', status: 'succeeded' });
    expect(json(['jobs', 'list', '--type', 'reindex']).jobs.map((j: any) => j.job_id)).toContain(first.job_id);
    expectOneLine(run(['jobs', 'cancel', first.job_id]), 1, /already ended \(succeeded\)/);
  });

  it('refuses a bad index name (exit 2), an unknown dataset or source (exit 3), each in one line', () => {
    expectOneLine(run(['reindex', 'tx', '--index', 'bm25']), 2, /'bm25' is invalid.*text, vector or sql/);
    expectOneLine(run(['reindex', 'nope']), 3, /dataset 'nope' not found/);
    expectOneLine(run(['reindex', 'tx', '--source', '99']), 3, /source '99' not found/);
    expectOneLine(run(['reindex']), 2, /missing required argument 'dataset_id'/);
    expect(run(['reindex', '--help']).stdout).toMatch(/Examples:\n {2}svc reindex logs --wait/);
  });
});

describe('svc reindex against a server', () => {
  const { at, remote } = useHdfsServer('svc-reindex-remote-');
  const opts = (input?: string) => ({ dataDir: '/nonexistent', input, env: { SVC_URL: at.url, SVC_TOKEN: at.token } });
  const json = (args: string[], input?: string) => {
    const r = svc([...args, '--output', 'json'], opts(input));
    expect(r.status, r.stderr).toBe(0);
    return r.json();
  };
  const count = (d: string) => json(['sql', `SELECT count(*) AS n, count(DISTINCT _id) AS ids FROM ${d}`]).records[0].metadata;
  let http: ReturnType<typeof client>;
  let last: any;

  beforeAll(() => {
    const tenant = json(['whoami']).tenants[0].tenant_id;
    http = client(at.url, { token: at.token, tenant });
  });

  it('--wait polls the job until it ends and prints it; every record is still there once', () => {
    const before = json(['search', 'PacketResponder', '--dataset', 'hdfs', '--limit', '1']).total.value;
    last = json(['reindex', 'hdfs', '--wait']);
    expect(last).toMatchObject({ status: 'succeeded', phase: 'done', dataset_id: 'hdfs', object_count: 1, source_document_count: 2000, error_message: null });
    expect(last.target_index_id).toBe(`hdfs@${last.target_generation_id}`);
    expect(json(['search', 'PacketResponder', '--dataset', 'hdfs', '--limit', '1']).total.value).toBe(before);
    expect(count('hdfs')).toEqual({ n: 2000, ids: 2000 });
  });

  it('without --wait prints the job as accepted; svc jobs wait and get follow it', async () => {
    const job = json(['reindex', 'hdfs', '--index', 'sql']);
    expect(['pending', 'running']).toContain(job.status);
    expect(job).toMatchObject({ indexes: ['sql'], completed_at: null });
    expect(json(['jobs', 'wait', job.job_id])).toMatchObject({ job_id: job.job_id, type: 'reindex', status: 'succeeded' });
    expect(json(['jobs', 'get', job.job_id])).toMatchObject({ type: 'reindex', status: 'succeeded' });
    const ended = expectStatus(await http.get(`/v1/admin/reindex/jobs/${job.job_id}`), 200);
    expect(ended).toMatchObject({ status: 'succeeded', phase: 'done', source_generation_ids: [last.target_generation_id] });
  });

  it('refuses a bad index name (exit 2), an unknown dataset or a source of another dataset (exit 3)', () => {
    expectOneLine(remote(['reindex', 'hdfs', '--index', 'vectors']), 2, /'vectors' is invalid/);
    expectOneLine(remote(['reindex', 'nope']), 3, /dataset 'nope' not found/);
    json(['datasets', 'create', 'other', '--no-semantic']);
    expectOneLine(remote(['reindex', 'hdfs', '--source', 'other']), 3, /does not feed dataset 'hdfs'/);
  });

  it('a job cancelled while --wait waits ends cancelled: exit 5, and the generation serving before still serves', async () => {
    // enough records that the rebuild is still under way when the cancel comes
    json(['datasets', 'create', 'big', '--no-semantic']);
    json(['ingest', 'big', '-', '--format', 'ndjson', '--wait'], ndjson([0, 1, 2].flatMap((i) => rows(0, 2000, `-${i}`))));
    const waiting = svcAsync(['reindex', 'big', '--index', 'text', '--wait', '--output', 'json'], opts());
    const job = await until('a reindex of big under way', async () => {
      const jobs = expectStatus(await http.get('/v1/admin/jobs?type=reindex&limit=5'), 200).jobs;
      return jobs.find((j: any) => j.payload.dataset_id === 'big');
    }, 30_000, 5);
    // the route `svc jobs cancel` calls (which a crashed job's test in reindex-crash.test.ts runs)
    // a job still pending is cancelled at once; a running one is asked to stop
    expect(['cancelled', 'running']).toContain(expectStatus(await http.post(`/v1/admin/jobs/${job.job_id}/cancel`), 200).status);
    const done = await waiting;
    expect(done.status, done.stderr).toBe(5);
    expect(done.json()).toMatchObject({ job_id: job.job_id, status: 'cancelled', dataset_id: 'big' });
    expect(done.stderr).toBe(`svc: reindex job ${job.job_id} was cancelled\n`);

    const next = json(['reindex', 'big', '--index', 'text', '--wait']);
    expect(next.source_generation_ids).toEqual([0]); // the generation the dataset was created with
    expect(count('big')).toEqual({ n: 6000, ids: 6000 });
    expect(json(['search', 'PacketResponder', '--dataset', 'big', '--limit', '1']).total.value).toBe(3 * json(['search', 'PacketResponder', '--dataset', 'hdfs', '--limit', '1']).total.value);
  }, 60_000);
});
