import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATA, init, SVC, svc, tempDir, useHdfsServer } from './helpers/cli.js';

const HDFS_CSV = join(DATA, 'loghub/HDFS/HDFS_2k.log_structured.csv');
const WARN = ['--dataset', 'hdfs', '--q', 'Level:WARN'];

const lines = (text: string) => text.split('\n').filter((l) => l !== '');
const ids = (ndjson: string) => lines(ndjson).map((l) => JSON.parse(l).id);

describe('svc view on a local data dir', () => {
  const dir = tempDir('svc-views-');
  const dataDir = join(dir.path, 'data');
  const run = (args: string[], input?: string) => svc(args, { dataDir, input });
  const json = (args: string[]) => {
    const r = run([...args, '--output', 'json']);
    expect(r.status, r.stderr).toBe(0);
    return r.json();
  };
  let warnIds: string[];
  let view: any;

  beforeAll(() => {
    init(dataDir);
    json(['datasets', 'create', 'hdfs', '--no-semantic']);
    expect(json(['ingest', 'hdfs', HDFS_CSV, '--wait']).status).toBe('ready');
    warnIds = ids(run(['search', ...WARN, '--all', '--output', 'ndjson']).stdout);
    expect(warnIds.length).toBeGreaterThan(20);
    view = json(['view', 'create', 'hdfs-warn', ...WARN]);
  });
  afterAll(() => dir.remove());

  it('creates a materialized view from search flags, with every record of the search', () => {
    expect(view).toMatchObject({ name: 'hdfs-warn', kind: 'materialized', from_search_id: null, record_count: warnIds.length, deleted_count: 0 });
    expect(view.view_id).toMatch(/^view_/);
    expect(view.search_request).toMatchObject({ q: 'Level:WARN', datasets: ['hdfs'] });
  });

  it('lists and gets it (alias views)', () => {
    expect(json(['views', 'list']).views.map((v: any) => v.view_id)).toContain(view.view_id);
    expect(json(['view', 'get', view.view_id])).toEqual(view);
    const table = run(['view', 'list', '--output', 'table']);
    expect(lines(table.stdout)[0]).toMatch(/^VIEW_ID\s+NAME\s+KIND\s+RECORD_COUNT/);
  });

  it('prints records like search results: a page with a notice on stderr, or every one with --all', () => {
    const page = run(['view', 'records', view.view_id, '--limit', '5', '--output', 'ndjson']);
    expect(page.status, page.stderr).toBe(0);
    expect(ids(page.stdout)).toEqual(warnIds.slice(0, 5));
    expect(JSON.parse(lines(page.stdout)[0]).provenance).toMatchObject({ dataset_id: 'hdfs' });
    const notice = new RegExp(`^svc: 5 of ${warnIds.length} records printed; add --all for every one, or --cursor (\\S+) for the next page\\n$`).exec(page.stderr);
    expect(notice, page.stderr).not.toBeNull();
    expect(ids(run(['view', 'records', view.view_id, '--limit', '5', '--cursor', notice![1], '--output', 'ndjson']).stdout)).toEqual(warnIds.slice(5, 10));

    const all = run(['view', 'records', view.view_id, '--all', '--limit', '7', '--output', 'ndjson']);
    expect([all.status, all.stderr]).toEqual([0, '']);
    expect(ids(all.stdout)).toEqual(warnIds);
    const csv = lines(run(['view', 'records', view.view_id, '--all', '--limit', '7', '--output', 'csv']).stdout);
    expect(csv).toHaveLength(warnIds.length + 1);
    expect(csv[0]).toBe('score,provenance.dataset_id,provenance.line,body');
    expect(json(['view', 'records', view.view_id, '--all']).map((r: any) => r.id)).toEqual(warnIds);
    const table = lines(run(['view', 'records', view.view_id, '--limit', '3', '--output', 'table']).stdout);
    expect(table.slice(-2)).toEqual([`3 of ${warnIds.length} records`, expect.stringMatching(/^next page: --cursor \S+$/)]);
  });

  it('a live view runs its search again on each read; a materialized one keeps what it held', () => {
    const live = json(['view', 'create', 'hdfs-warn-live', ...WARN, '--live']);
    expect(live).toMatchObject({ kind: 'live', record_count: warnIds.length });
    const added = JSON.stringify({ id: 'late-warn', Level: 'WARN', Content: 'a late warning' });
    expect(run(['ingest', 'hdfs', '-', '--format', 'ndjson', '--wait', '--output', 'json'], added).status).toBe(0);
    const liveIds = ids(run(['view', 'records', live.view_id, '--all', '--output', 'ndjson']).stdout);
    expect(liveIds).toHaveLength(warnIds.length + 1);
    expect(liveIds).toContain('late-warn');
    expect(ids(run(['view', 'records', view.view_id, '--all', '--output', 'ndjson']).stdout)).toEqual(warnIds);
  });

  it('takes the search text after NAME or with --text', () => {
    const positional = json(['view', 'create', 'blocks', 'blk_-1608999687919862906', '--dataset', 'hdfs']);
    const flag = json(['view', 'create', 'blocks-too', '--text', 'blk_-1608999687919862906', '--dataset', 'hdfs']);
    expect(positional.record_count).toBeGreaterThan(0);
    expect(flag.record_count).toBe(positional.record_count);
    expect(flag.search_request.text).toBe('blk_-1608999687919862906');
    // a list cut short says so where a pipe would not show it
    const first = run(['view', 'list', '--limit', '1', '--output', 'ndjson']);
    expect(lines(first.stdout).map((l) => JSON.parse(l).view_id)).toEqual([flag.view_id]);
    const more = /^svc: more views: --cursor (\S+) for the next page\n$/.exec(first.stderr);
    expect(more, first.stderr).not.toBeNull();
    expect(json(['view', 'list', '--limit', '1', '--cursor', more![1]]).views[0].view_id).toBe(positional.view_id);
  });

  it('a search id from an earlier command is gone in local mode: exit 3, saying why', () => {
    const { search_id } = json(['search', ...WARN, '--limit', '5']);
    expect(search_id).toMatch(/^srch_/);
    const r = run(['view', 'create', 'from-search', '--from-search', search_id]);
    expect(r.status).toBe(3);
    expect(lines(r.stderr)).toEqual([expect.stringMatching(new RegExp(`^svc: search '${search_id}' not found: in local mode a search lasts only as long as the command that ran it`))]);
  });

  it('refuses bad input with exit 2, creating nothing', () => {
    const before = json(['view', 'list']).views.length;
    const cases: [string[], RegExp][] = [
      [['view', 'create', 'both', 'WARN', '--from-search', 'srch_01abc'], /--from-search or a search/],
      [['view', 'create', 'both', '--dataset', 'hdfs', '--from-search', 'srch_01abc'], /--from-search or a search/],
      [['view', 'create', 'neither'], /nothing to keep/],
      [['view', 'create', 'twice', 'a', '--text', 'b', '--dataset', 'hdfs'], /search text once/],
      [['view', 'create', 'past', ...WARN, '--expires-at', '2001-01-01T00:00:00Z'], /expires_at is in the past/],
      [['view', 'create', 'when', ...WARN, '--expires-at', 'tomorrow'], /^svc: --expires-at: /],
      [['view', 'create', 'bad-where', '--dataset', 'hdfs', '--where', 'Level'], /invalid --where/],
      [['view', 'records', view.view_id, '--limit', '0'], /limit/],
      [['view', 'list', '--limit', '501'], /limit/],
    ];
    for (const [args, message] of cases) {
      const r = run(args);
      expect([r.status, lines(r.stderr)], args.join(' ')).toEqual([2, [expect.stringMatching(message)]]);
    }
    expect(json(['view', 'list']).views).toHaveLength(before);
  });

  it('answers exit 3 for an unknown view', () => {
    for (const args of [['view', 'get', 'view_nosuch'], ['view', 'records', 'view_nosuch'], ['view', 'delete', 'view_nosuch', '--yes']]) {
      const r = run(args);
      expect([r.status, r.stderr], args.join(' ')).toEqual([3, "svc: view 'view_nosuch' not found\n"]);
    }
  });

  it('deletes only when confirmed: --yes, since no terminal can answer here', () => {
    const unasked = run(['view', 'delete', view.view_id]);
    expect(unasked.status).toBe(2);
    expect(unasked.stderr).toMatch(/Pass --yes/);
    expect(json(['view', 'get', view.view_id]).view_id).toBe(view.view_id);
    expect(json(['view', 'delete', view.view_id, '--yes'])).toMatchObject({ view_id: view.view_id });
    expect(run(['view', 'get', view.view_id]).status).toBe(3);
    // the records stay in their dataset
    expect(ids(run(['search', ...WARN, '--all', '--output', 'ndjson']).stdout)).toHaveLength(warnIds.length + 1);
  });

  it('ends quietly with exit 0 when the reader closes the pipe', () => {
    const live = json(['view', 'list']).views.find((v: any) => v.kind === 'live');
    const env = { ...process.env, SVC_DATA_DIR: dataDir, SVC_URL: '', SVC_TOKEN: '', SVC_TENANT: '' };
    const r = spawnSync('bash', ['-c', `set -o pipefail; node ${SVC} view records ${live.view_id} --all --limit 1 --output ndjson | head -1 >/dev/null`], { env, encoding: 'utf8' });
    expect([r.status, r.stderr]).toEqual([0, '']);
  });
});

describe('svc view against a server', () => {
  const hdfs = useHdfsServer('svc-views-remote-');
  const remote = (args: string[], as?: string) => hdfs.remote([...args, '--output', 'json'], as);

  it('makes a view from the search id of an earlier command: exactly what that search answered', () => {
    const search = remote(['search', 'exception', ...WARN, '--limit', '1000']).json();
    expect(search.records.length).toBeGreaterThan(0);
    const made = remote(['view', 'create', 'incident', '--from-search', search.search_id]);
    expect(made.status, made.stderr).toBe(0);
    const view = made.json();
    expect(view).toMatchObject({ kind: 'materialized', from_search_id: search.search_id, record_count: search.records.length });
    const records = hdfs.remote(['view', 'records', view.view_id, '--all', '--limit', '9', '--output', 'ndjson']);
    expect([records.status, records.stderr]).toEqual([0, '']);
    expect(ids(records.stdout)).toEqual(search.records.map((r: any) => r.id));
    expect(remote(['view', 'delete', view.view_id, '--yes']).status).toBe(0);
    expect(remote(['view', 'get', view.view_id]).status).toBe(3);
  });

  it('creates, lists and reads a view from search flags as in local mode; an unknown search id is exit 3', () => {
    const view = remote(['view', 'create', 'warn', ...WARN, '--live']).json();
    expect(view.kind).toBe('live');
    expect(remote(['views', 'list', '--limit', '1']).json().views).toHaveLength(1);
    const page = hdfs.remote(['view', 'records', view.view_id, '--limit', '2', '--output', 'ndjson']);
    expect(lines(page.stdout)).toHaveLength(2);
    expect(page.stderr).toMatch(/^svc: 2 of \d+ records printed;/);
    const gone = remote(['view', 'create', 'gone', '--from-search', 'srch_01jd000000000000000000000']);
    expect(gone.status).toBe(3);
    expect(gone.stderr).toMatch(/not found/);
  });

  it('a member reads views but cannot create one: exit 4', () => {
    const key = remote(['keys', 'create', '--name', 'reader', '--role', 'member']).json().token;
    const denied = remote(['view', 'create', 'mine', ...WARN], key);
    expect(denied.status).toBe(4);
    expect(lines(denied.stderr)).toHaveLength(1);
    expect(remote(['view', 'list'], key).status).toBe(0);
  });
});
