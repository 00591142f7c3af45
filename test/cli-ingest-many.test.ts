/**
 * `svc ingest DATASET PATH…` with several files, directories and globs (expanded by svc, so quoted
 * patterns work), plain and gzip mixed: each file its own object and run, one summary at the end,
 * exit 5 when a run failed, and a missing path refused before anything is sent. Local mode and
 * remote mode, on the Loghub samples.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATA, init, serve, svc, tempDir, type Server } from './helpers/cli.js';

/** The first 300 lines of a Loghub sample: each file's run and count show the same with 300 lines as with 2,000. */
const sample = (name: string) => {
  const bytes = readFileSync(join(DATA, `loghub/${name}/${name}_2k.log`));
  let end = -1;
  for (let i = 0; i < 300; i++) end = bytes.indexOf(0x0a, end + 1);
  return bytes.subarray(0, end + 1);
};
const lineCount = (bytes: Buffer) => bytes.toString('utf8').split('\n').filter((l) => l.trim() !== '').length;
const lines = (...names: string[]) => names.reduce((n, name) => n + lineCount(sample(name)), 0);

const dir = tempDir('svc-ingest-many-');
const dataDir = join(dir.path, 'data');
const logs = join(dir.path, 'logs');
const more = join(dir.path, 'more');
const run = (args: string[]) => svc(args, { dataDir });
const count = (dataset: string) => run(['datasets', 'get', dataset, '--output', 'json']).json().record_count;

beforeAll(() => {
  init(dataDir);
  // logs/: a directory, walked recursively; its hidden file and folder are left out
  mkdirSync(join(logs, 'nested'), { recursive: true });
  mkdirSync(join(logs, '.cache'), { recursive: true });
  writeFileSync(join(logs, 'Apache_2k.log'), sample('Apache'));
  writeFileSync(join(logs, 'nested', 'HDFS_2k.log.gz'), gzipSync(sample('HDFS')));
  writeFileSync(join(logs, '.hidden.log'), 'never ingested\n');
  writeFileSync(join(logs, '.cache', 'Linux_2k.log'), sample('Linux'));
  // more/: a glob picks .log and .log.gz, not the .csv nor the hidden one
  mkdirSync(more);
  writeFileSync(join(more, 'Linux_2k.log.gz'), gzipSync(sample('Linux')));
  writeFileSync(join(more, 'OpenSSH_2k.log'), sample('OpenSSH'));
  writeFileSync(join(more, '.BGL_2k.log'), sample('BGL'));
  writeFileSync(join(more, 'notes.csv'), 'a,b\n1,2\n');
  for (const d of ['many', 'broken', 'missing']) expect(run(['datasets', 'create', d, '--no-semantic']).status).toBe(0);
});
afterAll(() => dir.remove());

describe('svc ingest of several paths in local mode', () => {
  it('ingests a directory and a quoted glob of mixed .log and .log.gz files, each its own run, and sums them up', () => {
    const r = run(['ingest', 'many', logs, join(more, '*.log*'), '--output', 'json']);
    expect(r.status, r.stderr).toBe(0);
    const summary = r.json();
    const expected = lines('Apache', 'HDFS', 'Linux', 'OpenSSH');
    expect(summary).toMatchObject({ files: 4, runs: 4, records: expected, failures: 0 });
    expect(summary.results.map((f: any) => f.path)).toEqual([
      join(logs, 'Apache_2k.log'), join(logs, 'nested', 'HDFS_2k.log.gz'), join(more, 'Linux_2k.log.gz'), join(more, 'OpenSSH_2k.log'),
    ]);
    for (const f of summary.results) expect(f).toMatchObject({ status: 'ready', error_code: null, ingest_run_id: expect.stringMatching(/^run_/) });
    expect(new Set(summary.results.map((f: any) => f.ingest_run_id)).size).toBe(4);
    expect(count('many')).toBe(expected);
    const runs = run(['runs', 'list', '--dataset', 'many', '--output', 'json']).json();
    expect((runs.runs ?? runs).every((x: any) => x.format === 'text')).toBe(true);
  });

  it('prints a table and a summary line when asked for a table', () => {
    const r = run(['ingest', 'many', join(more, 'OpenSSH_2k.log'), join(more, 'Linux_2k.log.gz'), '--output', 'table']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('OpenSSH_2k.log');
    expect(r.stderr).toContain(`2 files, 2 runs, ${lines('OpenSSH', 'Linux')} records, 0 failed`);
  });

  it('goes on past a file whose run fails, counts it, and exits 5', () => {
    const bad = join(dir.path, 'bad');
    mkdirSync(bad);
    writeFileSync(join(bad, 'a_ok.log.gz'), gzipSync(sample('OpenSSH')));
    writeFileSync(join(bad, 'b_corrupt.log.gz'), gzipSync(sample('HDFS')).subarray(0, 500));
    writeFileSync(join(bad, 'c_ok.log'), sample('Apache'));
    const r = run(['ingest', 'broken', bad, '--output', 'json']);
    expect(r.status).toBe(5);
    expect(r.stderr).toContain('1 of 3 files failed to ingest');
    const summary = r.json();
    expect(summary).toMatchObject({ files: 3, runs: 3, failures: 1 });
    expect(summary.results[1]).toMatchObject({ status: 'failed', error_code: 'corrupt_gzip' });
    expect(summary.results[0].status).toBe('ready');
    expect(summary.results[2].status).toBe('ready');
    expect(count('broken')).toBe(summary.records);
  });

  it('refuses a missing path in one line before ingesting anything', () => {
    const r = run(['ingest', 'missing', logs, join(dir.path, 'nope.log')]);
    expect(r.status).toBe(3);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('nope.log');
    const glob = run(['ingest', 'missing', logs, join(dir.path, 'nothing-*.log')]);
    expect(glob.status).toBe(3);
    expect(glob.stderr).toContain("no files match");
    expect(count('missing')).toBe(0);
    const stdin = run(['ingest', 'missing', '-', logs]);
    expect(stdin.status).toBe(2);
  });
});

describe('svc ingest of several paths in remote mode', () => {
  let server: Server;
  let token = '';
  const remote = (args: string[]) => svc(args, { dataDir: join(dir.path, 'none'), env: { SVC_URL: server.url, SVC_TOKEN: token } });

  beforeAll(async () => {
    const remoteData = join(dir.path, 'remote-data');
    token = init(remoteData).token;
    server = await serve(remoteData);
    expect(remote(['datasets', 'create', 'rmany', '--no-semantic']).status).toBe(0);
  });
  afterAll(async () => server?.stop());

  it('uploads each file, waits for every run and sums them up', () => {
    const r = remote(['ingest', 'rmany', logs, join(more, '*.gz'), '--output', 'json']);
    expect(r.status, r.stderr).toBe(0);
    const expected = lines('Apache', 'HDFS', 'Linux');
    expect(r.json()).toMatchObject({ files: 3, runs: 3, records: expected, failures: 0 });
    expect(remote(['datasets', 'get', 'rmany', '--output', 'json']).json().record_count).toBe(expected);
  });
});
