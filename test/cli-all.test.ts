import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATA, init, serve, svc, svcCommand, tempDir } from './helpers/cli.js';

const HDFS = join(DATA, 'loghub/HDFS/HDFS_2k.log');
const BY_LINE = 'SELECT _id, _line FROM hdfs ORDER BY _line';

const lines = (text: string) => text.split('\n').filter((l) => l !== '');
const ids = (ndjson: string) => lines(ndjson).map((l) => JSON.parse(l).id);

describe('svc search and sql: every result, and nothing dropped unsaid', () => {
  const dir = tempDir('svc-all-');
  const dataDir = join(dir.path, 'data');
  const run = (args: string[], env?: Record<string, string>) => svc(args, { dataDir, env });
  const env = { ...process.env, SVC_DATA_DIR: dataDir, SVC_URL: '', SVC_TOKEN: '', SVC_TENANT: '' };

  /** `svc … | head -1` under pipefail: svc's own exit code and stderr. */
  const headOne = (args: string) => spawnSync('bash', ['-c', `set -o pipefail; ${svcCommand([]).flat().join(' ')} ${args} | head -1 >/dev/null`], { env, encoding: 'utf8' });

  beforeAll(() => {
    init(dataDir);
    expect(run(['datasets', 'create', 'hdfs']).status).toBe(0);
    const ingested = run(['ingest', 'hdfs', HDFS, '--format', 'text', '--wait']);
    expect(ingested.status, ingested.stderr).toBe(0);
  });
  afterAll(() => dir.remove());

  it('search --all streams every record once over many pages, in ndjson, json, csv and a table', () => {
    const nd = run(['search', '--dataset', 'hdfs', '--all', '--limit', '37', '--output', 'ndjson']);
    expect(nd.status, nd.stderr).toBe(0);
    expect(nd.stderr).toBe('');
    const all = ids(nd.stdout);
    expect(all).toHaveLength(2000);
    expect(new Set(all).size).toBe(2000);

    const json = run(['search', '--dataset', 'hdfs', '--all', '--limit', '300', '--output', 'json']);
    expect(json.json().map((r: any) => r.id)).toEqual(all);
    const empty = run(['search', 'nosuchwordanywhere', '--dataset', 'hdfs', '--all', '--output', 'json']);
    expect(empty.stdout).toBe('[]\n');

    const csv = lines(run(['search', '--dataset', 'hdfs', '--all', '--limit', '150', '--output', 'csv']).stdout);
    expect(csv).toHaveLength(2001);
    expect(csv.filter((l) => l === 'score,provenance.dataset_id,provenance.line,body')).toHaveLength(1);

    const table = lines(run(['search', '--dataset', 'hdfs', '--all', '--limit', '500', '--output', 'table']).stdout);
    expect(table.filter((l) => /^SCORE\s/.test(l))).toHaveLength(1);
    expect(table).toHaveLength(2002);
    expect(table.at(-1)).toBe('2000 of 2000 records');
  });

  it('search --all continues from --cursor', () => {
    const first = run(['search', '--dataset', 'hdfs', '--limit', '500', '--output', 'json']).json();
    const rest = run(['search', '--dataset', 'hdfs', '--all', '--limit', '300', '--cursor', first.next_cursor, '--output', 'ndjson']);
    expect(rest.status, rest.stderr).toBe(0);
    const both = [...first.records.map((r: any) => r.id), ...ids(rest.stdout)];
    expect(both).toHaveLength(2000);
    expect(new Set(both).size).toBe(2000);
  });

  it('sql --all streams every row once, the csv header once', () => {
    const nd = run(['sql', BY_LINE, '--all', '--limit', '45', '--output', 'ndjson']);
    expect(nd.status, nd.stderr).toBe(0);
    expect(nd.stderr).toBe('');
    const rows = lines(nd.stdout).map((l) => JSON.parse(l));
    expect(rows.map((r) => r._line)).toEqual(Array.from({ length: 2000 }, (_, i) => i + 1));
    expect(new Set(rows.map((r) => r._id)).size).toBe(2000);
    const csv = lines(run(['sql', BY_LINE, '--all', '--limit', '45', '--output', 'csv']).stdout);
    expect(csv).toHaveLength(2001);
    expect(csv.filter((l) => l === '_id,_line')).toHaveLength(1);
    expect(run(['sql', BY_LINE, '--all', '--limit', '450', '--output', 'json']).json()).toEqual(rows);
  });

  it('sql says on stderr when the rows stop at the cap', () => {
    const capped = run(['sql', BY_LINE, '--all', '--limit', '70', '--output', 'ndjson'], { SVC_SQL_MAX_RESULT_ROWS: '300' });
    expect(capped.status, capped.stderr).toBe(0);
    expect(lines(capped.stdout)).toHaveLength(300);
    expect(lines(capped.stderr)).toEqual([expect.stringMatching(/^svc: warning: rows stop at the cap of 300: /)]);
  });

  it('without --all, says on stderr how many were printed of how many, and how to get the rest', () => {
    const page = run(['search', '--dataset', 'hdfs', '--limit', '5', '--output', 'ndjson']);
    expect(lines(page.stdout)).toHaveLength(5);
    const notice = /^svc: 5 of 2,000 records printed; add --all for every one, or --cursor (\S+) for the next page\n$/.exec(page.stderr);
    expect(notice, page.stderr).not.toBeNull();
    const next = run(['search', '--dataset', 'hdfs', '--limit', '5', '--cursor', notice![1], '--output', 'ndjson']);
    expect(new Set([...ids(page.stdout), ...ids(next.stdout)]).size).toBe(10);
    expect(run(['search', '--dataset', 'hdfs', '--limit', '5', '--output', 'csv']).stderr).toMatch(/^svc: 5 of 2,000 records printed;/);
    expect(run(['search', '--dataset', 'hdfs', '--limit', '5', '--output', 'json']).stderr).toMatch(/^svc: 5 of 2,000 records printed;/);
    // a table says it in its footer, and an answer that fits says nothing
    expect(run(['search', '--dataset', 'hdfs', '--limit', '5', '--output', 'table']).stderr).toBe('');
    const fits = run(['search', '--dataset', 'hdfs', '--where', 'level eq WARN', '--limit', '1000', '--output', 'ndjson']);
    expect(lines(fits.stdout).length).toBeGreaterThan(0);
    expect(fits.stderr).toBe('');

    const sql = run(['sql', BY_LINE, '--limit', '7', '--output', 'csv']);
    expect(lines(sql.stdout)).toHaveLength(8);
    expect(sql.stderr).toMatch(/^svc: 7 of 2,000 rows printed; add --all for every one, or --cursor \S+ for the next page\n$/);
    const table = lines(run(['sql', BY_LINE, '--limit', '7', '--output', 'table']).stdout);
    expect(table.slice(-2)).toEqual(['7 of 2000 rows', expect.stringMatching(/^next page: --cursor \S+$/)]);
  });

  it('ends quietly with exit 0 when the reader closes the pipe', () => {
    for (const args of [
      `search --dataset hdfs --all --limit 1 --output ndjson`,
      `search --dataset hdfs --all --limit 1 --output csv`,
      `sql '${BY_LINE}' --all --limit 1 --output ndjson`,
      `search --dataset hdfs --limit 1000 --output ndjson`,
      `sql '${BY_LINE}' --output json`,
      `datasets list --output csv`,
      `search --help`,
    ]) {
      const r = headOne(args);
      expect([r.status, r.stderr], args).toEqual([0, '']);
    }
  });

  it('stops fetching pages once stdout has closed', async () => {
    const proc = spawn(...svcCommand(['search', '--dataset', 'hdfs', '--all', '--limit', '1', '--output', 'ndjson']), { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    proc.stderr.on('data', (d) => (stderr += d));
    proc.stdout.once('data', () => proc.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => proc.on('exit', resolve));
    expect([code, stderr]).toEqual([0, '']);

    // through a server, whose log counts the pages asked for: a few, not the 2,000 there are
    const server = await serve(dataDir);
    try {
      const r = headOne('search --dataset hdfs --all --limit 1 --output ndjson');
      expect([r.status, r.stderr]).toEqual([0, '']);
      await new Promise((resolve) => setTimeout(resolve, 200));
      const searches = lines(server.logs()).filter((l) => l.includes('"url":"/v1/search"'));
      expect(searches.length).toBeGreaterThan(0);
      expect(searches.length).toBeLessThan(100);
    } finally {
      await server.stop();
    }
  });

  it('prints a search warning once on stderr: pages stop after the first 10,000 ranked records', () => {
    expect(run(['datasets', 'create', 'web']).status).toBe(0);
    expect(run(['ingest', 'web', join(DATA, 'ingest/apache_access_combined.log'), '--format', 'text', '--wait']).status).toBe(0);
    const r = run(['search', '--all', '--output', 'ndjson']);
    expect(r.status, r.stderr).toBe(0);
    expect(lines(r.stdout)).toHaveLength(10_000);
    expect(lines(r.stderr)).toEqual(['svc: warning: pages stop after the first 10000 of 12000 records: narrow the search to page through the rest, or export it (POST /v1/export, svc export create) to get every one']);
  });
});
