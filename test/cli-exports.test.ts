import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATA, init, SVC, svc, tempDir, useHdfsServer } from './helpers/cli.js';

const HDFS_CSV = join(DATA, 'loghub/HDFS/HDFS_2k.log_structured.csv');
const WARN = ['--dataset', 'hdfs', '--q', 'Level:WARN'];
const BY_LINE = 'SELECT _id, _line FROM hdfs ORDER BY _line';

/** Lines of NDJSON or of a CSV (RFC 4180 ends its lines with CRLF). */
const lines = (text: string) => text.split(/\r?\n/).filter((l) => l !== '');
const ids = (ndjson: string) => lines(ndjson).map((l) => JSON.parse(l).id);
const sorted = (a: string[]) => [...a].sort();

describe('svc export on a local data dir', () => {
  const dir = tempDir('svc-exports-');
  const dataDir = join(dir.path, 'data');
  const env = { ...process.env, SVC_DATA_DIR: dataDir, SVC_URL: '', SVC_TOKEN: '', SVC_TENANT: '' };
  const run = (args: string[]) => svc(args, { dataDir });
  const json = (args: string[]) => {
    const r = run([...args, '--output', 'json']);
    expect(r.status, r.stderr).toBe(0);
    return r.json();
  };
  const file = (name: string) => join(dir.path, name);
  /** `svc …` in a shell, from the test's directory (where a download lands by default). */
  const shell = (script: string) => spawnSync('bash', ['-c', `set -o pipefail; ${script}`], { env, cwd: dir.path, encoding: 'utf8', maxBuffer: 64 * 2 ** 20 });
  const exportCount = () => json(['export', 'list', '--limit', '500']).exports.length;
  let warnIds: string[];

  beforeAll(() => {
    init(dataDir);
    json(['datasets', 'create', 'hdfs', '--no-semantic']);
    expect(json(['ingest', 'hdfs', HDFS_CSV, '--wait']).status).toBe('ready');
    warnIds = ids(run(['search', ...WARN, '--all', '--output', 'ndjson']).stdout);
    expect(warnIds.length).toBeGreaterThan(20);
  });
  afterAll(() => dir.remove());

  it('create --wait -o FILE writes every record of a search as NDJSON, and prints the completed export', () => {
    const r = run(['export', 'create', ...WARN, '--name', 'warn', '--wait', '-o', file('warn.ndjson'), '--output', 'json']);
    expect([r.status, r.stderr]).toEqual([0, '']);
    const exp = r.json();
    expect(exp).toMatchObject({ name: 'warn', status: 'completed', format: 'ndjson', gzip: false, row_count: warnIds.length });
    expect(exp.export_id).toMatch(/^exp_/);
    const written = readFileSync(file('warn.ndjson'), 'utf8');
    expect(sorted(ids(written))).toEqual(sorted(warnIds));
    expect(JSON.parse(lines(written)[0]).provenance).toMatchObject({ dataset_id: 'hdfs' });
    expect(readdirSync(dir.path).filter((f) => f.endsWith('.part'))).toEqual([]); // the file beside it went with the rename
  });

  it('writes CSV with the columns asked for, and SQL rows', () => {
    const r = run(['export', 'create', ...WARN, '--format', 'csv', '--field', 'id', '--field', 'provenance.line', '--field', 'body', '-o', file('warn.csv'), '--output', 'json']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ status: 'completed', format: 'csv', row_count: warnIds.length });
    const csv = lines(readFileSync(file('warn.csv'), 'utf8'));
    expect(csv[0]).toBe('id,provenance.line,body');
    expect(csv).toHaveLength(warnIds.length + 1);
    expect(sorted(csv.slice(1).map((l) => l.split(',')[0]))).toEqual(sorted(warnIds));

    const rows = run(['export', 'create', '--sql', BY_LINE, '--format', 'csv', '-o', file('rows.csv'), '--output', 'json']);
    expect(rows.status, rows.stderr).toBe(0);
    const sql = lines(readFileSync(file('rows.csv'), 'utf8'));
    expect(sql[0]).toBe('_id,_line');
    expect(sql.slice(1).map((l) => Number(l.split(',')[1]))).toEqual(Array.from({ length: 2000 }, (_, i) => i + 2));

    // line 1 of the CSV is its header: records are lines 2, 3 and 4
    const param = run(['export', 'create', '--sql', 'SELECT _line FROM hdfs WHERE _line <= $1 ORDER BY _line', '--param', '4', '-o', file('three.ndjson'), '--output', 'json']);
    expect(param.status, param.stderr).toBe(0);
    expect(lines(readFileSync(file('three.ndjson'), 'utf8'))).toHaveLength(3);
  });

  it('exports a view in its order, gzipped when asked', () => {
    const view = json(['view', 'create', 'hdfs-warn', ...WARN]);
    const r = run(['export', 'create', '--view', view.view_id, '--gzip', '-o', file('view.ndjson.gz'), '--output', 'json']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ view_id: view.view_id, gzip: true, row_count: warnIds.length });
    expect(ids(gunzipSync(readFileSync(file('view.ndjson.gz'))).toString('utf8'))).toEqual(ids(run(['view', 'records', view.view_id, '--all', '--output', 'ndjson']).stdout));
  });

  it('-o - streams the file to stdout, and a closed pipe ends quietly', () => {
    const all = shell(`node ${SVC} export create ${WARN.join(' ')} -o - | cat`);
    expect([all.status, all.stderr]).toEqual([0, '']);
    expect(sorted(ids(all.stdout))).toEqual(sorted(warnIds));
    const rows = shell(`node ${SVC} export create --sql '${BY_LINE}' --format csv -o - | wc -l`);
    expect(rows.stdout.trim()).toBe('2001');
    const head = shell(`node ${SVC} export create --sql '${BY_LINE}' -o - | head -1`);
    expect([head.status, head.stderr, lines(head.stdout)]).toEqual([0, '', [expect.stringMatching(/^\{.*"_line":2[,}]/)]]);
  });

  it('lists, gets, downloads and deletes', () => {
    const exp = json(['export', 'create', '--sql', BY_LINE, '--name', 'by-line', '--wait']);
    expect(exp.status).toBe('completed');
    expect(json(['exports', 'list']).exports.map((e: any) => e.export_id)).toContain(exp.export_id);
    expect(json(['export', 'get', exp.export_id])).toMatchObject({ export_id: exp.export_id, status: 'completed', row_count: 2000 });

    const named = run(['export', 'download', exp.export_id, '-o', file('named.ndjson'), '--output', 'json']);
    expect(named.status, named.stderr).toBe(0);
    expect(named.json()).toMatchObject({ export_id: exp.export_id, file: file('named.ndjson') });
    const bytes = readFileSync(file('named.ndjson'));
    expect(lines(bytes.toString('utf8'))).toHaveLength(2000);
    expect(named.json().size_bytes).toBe(bytes.length);

    // by default, the export's own file name in the current directory
    const here = shell(`node ${SVC} export download ${exp.export_id} --output json`);
    expect(here.status, here.stderr).toBe(0);
    const { file: name } = JSON.parse(here.stdout);
    expect(name).not.toMatch(/\//);
    expect(readFileSync(join(dir.path, name))).toEqual(bytes);
    // and never over an existing file unless told
    writeFileSync(join(dir.path, name), 'mine');
    const refused = shell(`node ${SVC} export download ${exp.export_id}`);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toMatch(/exists: overwrite it\? Pass --yes/);
    expect(readFileSync(join(dir.path, name), 'utf8')).toBe('mine');
    expect(shell(`node ${SVC} export download ${exp.export_id} --yes`).status).toBe(0);
    expect(readFileSync(join(dir.path, name))).toEqual(bytes);
    const piped = shell(`node ${SVC} export download ${exp.export_id} -o - | wc -l`);
    expect(piped.stdout.trim()).toBe('2000');

    const unasked = run(['export', 'delete', exp.export_id]);
    expect(unasked.status).toBe(2);
    expect(json(['export', 'delete', exp.export_id, '--yes']).export_id).toBe(exp.export_id);
    expect(run(['export', 'get', exp.export_id]).status).toBe(3);
    expect(run(['export', 'download', exp.export_id, '-o', file('gone.ndjson')]).status).toBe(3);
    expect(existsSync(file('gone.ndjson'))).toBe(false);
  });

  it('refuses bad input with exit 2 before any export is made', () => {
    const before = exportCount();
    writeFileSync(file('taken.ndjson'), 'mine');
    const cases: [string[], RegExp][] = [
      [['export', 'create', '--sql', 'DELETE FROM hdfs'], /^svc: /],
      [['export', 'create'], /nothing to export/],
      [['export', 'create', '--view', 'view_x', '--sql', 'SELECT 1'], /not --view and --sql/],
      [['export', 'create', '--sql', 'SELECT 1', '--dataset', 'hdfs'], /not --sql and a search/],
      [['export', 'create', '--dataset', 'hdfs', '--param', '1'], /--param goes with --sql/],
      [['export', 'create', '--dataset', 'hdfs', '--format', 'xml'], /format/],
      [['export', 'create', '--dataset', 'hdfs', '-o', file('taken.ndjson')], /exists: overwrite it\? Pass --yes/],
      [['export', 'create', '--dataset', 'hdfs', '-o', dir.path], /is a directory/],
    ];
    for (const [args, message] of cases) {
      const r = run(args);
      expect([r.status, lines(r.stderr)], args.join(' ')).toEqual([2, [expect.stringMatching(message)]]);
    }
    expect(readFileSync(file('taken.ndjson'), 'utf8')).toBe('mine');
    expect(exportCount()).toBe(before);
    for (const args of [['export', 'create', '--view', 'view_nosuch'], ['export', 'get', 'exp_nosuch'], ['export', 'delete', 'exp_nosuch', '--yes']]) {
      expect(run(args).status, args.join(' ')).toBe(3);
    }
  });

  it('a --wait that ends in failed exits 5, and -o writes nothing', () => {
    // binds and plans, then fails on the first row it converts
    const failing = ['export', 'create', '--sql', 'SELECT CAST(_body AS INTEGER) AS n FROM hdfs'];
    const waited = run([...failing, '--wait', '--output', 'json']);
    expect(waited.status).toBe(5);
    expect(waited.json().status).toBe('failed');
    expect(lines(waited.stderr)).toEqual([expect.stringMatching(/^svc: export exp_\S+ failed: /)]);
    const out = run([...failing, '-o', file('failed.ndjson'), '--output', 'json']);
    expect([out.status, out.json().status]).toEqual([5, 'failed']);
    expect(existsSync(file('failed.ndjson'))).toBe(false);
    const piped = shell(`node ${SVC} ${failing.map((a) => `'${a}'`).join(' ')} -o - | wc -c`);
    expect(piped.stdout.trim()).toBe('0');
  });
});

describe('svc export against a server', () => {
  const { dir, remote } = useHdfsServer('svc-exports-remote-');

  it('creates without waiting (202), then waits, writes and downloads through the signed URL', () => {
    const accepted = remote(['export', 'create', '--sql', BY_LINE, '--format', 'csv', '--output', 'json']);
    expect(accepted.status, accepted.stderr).toBe(0);
    expect(['pending', 'running', 'completed']).toContain(accepted.json().status);

    const path = join(dir.path, 'rows.csv');
    const done = remote(['export', 'create', '--sql', BY_LINE, '--format', 'csv', '-o', path, '--output', 'json']);
    expect([done.status, done.stderr]).toEqual([0, '']);
    const exp = done.json();
    expect(exp).toMatchObject({ status: 'completed', row_count: 2000 });
    expect(lines(readFileSync(path, 'utf8'))).toHaveLength(2001);
    expect(remote(['export', 'get', exp.export_id, '--output', 'json']).json().download_url).toMatch(/^https?:\/\//);

    const piped = remote(['export', 'download', exp.export_id, '-o', '-']);
    expect(piped.stdout).toBe(readFileSync(path, 'utf8'));
    const search = remote(['export', 'create', ...WARN, '-o', '-']);
    expect(search.status, search.stderr).toBe(0);
    expect(ids(search.stdout).length).toBeGreaterThan(20);
    expect(remote(['export', 'delete', exp.export_id, '--yes', '--output', 'json']).status).toBe(0);
    expect(remote(['export', 'get', exp.export_id]).status).toBe(3);
  });

  it('refuses SQL the guard refuses with exit 2, before any job', () => {
    const jobs = () => remote(['jobs', 'list', '--limit', '500', '--output', 'json']).json().jobs.length;
    const before = jobs();
    const r = remote(['export', 'create', '--sql', 'DROP TABLE hdfs']);
    expect(r.status).toBe(2);
    expect(jobs()).toBe(before);
  });
});
