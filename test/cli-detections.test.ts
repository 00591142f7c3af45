/** `svc detections` on a local data dir (the OpenSSH log) and against a server (the HDFS structured log). */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATA, init, svc, tempDir, useHdfsServer } from './helpers/cli.js';

const SSH_LINES = readFileSync(join(DATA, 'loghub/OpenSSH/OpenSSH_2k.log'), 'utf8').split('\n');

const localDir = tempDir('svc-cli-detections-local-');
const dataDir = join(localDir.path, 'data');
const local = (args: string[], input?: string) => svc(args, { dataDir, input });
/** Writes lines [from, to) of the OpenSSH log to a file of the temp dir and ingests it into `ssh`. */
function ingestSsh(from: number, to: number): void {
  const file = join(localDir.path, `ssh-${from}-${to}.log`);
  writeFileSync(file, SSH_LINES.slice(from, to).join('\n') + '\n');
  const r = local(['ingest', 'ssh', file, '--format', 'text', '--wait', '--output', 'json']);
  expect(r.status, r.stderr).toBe(0);
}
const oneLine = (stderr: string) => expect(stderr.trim().split('\n')).toHaveLength(1);

beforeAll(() => {
  init(dataDir);
  expect(local(['datasets', 'create', 'ssh', '--no-semantic']).status).toBe(0);
  ingestSsh(0, 300);
});
afterAll(() => localDir.remove());

const BRUTE_FORCE = ['--name', 'ssh-brute-force', '--severity', 'high', '--dataset', 'ssh', '--q', '"Failed password"', '--on-ingest', '--threshold', '5', '--window', '10m', '--group-pattern', 'from (\\S+)'];

describe('svc detections, local mode', () => {
  let bruteId = '';

  it('creates a whole rule from flags alone', () => {
    const r = local(['detections', 'create', ...BRUTE_FORCE, '--output', 'json']);
    expect(r.status, r.stderr).toBe(0);
    const det = r.json();
    expect(det.detection_id).toMatch(/^det_/);
    expect(det).toMatchObject({ name: 'ssh-brute-force', severity: 'high', enabled: true, datasets: ['ssh'], trigger: { on_ingest: true }, threshold: { count_gte: 5, window: '10m', group_pattern: 'from (\\S+)' }, actions: [] });
    expect(det.query.search_request.q).toBe('"Failed password"');
    bruteId = det.detection_id;
  });

  it('creates from a file, with flags over it, and from stdin', () => {
    const file = join(localDir.path, 'invalid-user.json');
    writeFileSync(file, JSON.stringify({ name: 'invalid-user', severity: 'info', datasets: ['ssh'], query: { search_request: { q: '"Invalid user"' } }, trigger: { on_ingest: false, cron: '*/5 * * * *' } }));
    let r = local(['detections', 'create', '--from-file', file, '--severity', 'medium', '--timezone', 'Europe/Paris', '--output', 'json']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ name: 'invalid-user', severity: 'medium', trigger: { on_ingest: false, cron: '*/5 * * * *', timezone: 'Europe/Paris' } });
    expect(r.json().next_run_at).not.toBeNull();
    r = local(['detections', 'create', '--from-file', '-', '--name', 'from-stdin', '--disabled', '--output', 'json'], readFileSync(file, 'utf8'));
    expect(r.status, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ name: 'from-stdin', severity: 'info', enabled: false });
  });

  it('lists and gets', () => {
    let r = local(['detections', 'list', '--output', 'json']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.json().detections.map((d: any) => d.name).sort()).toEqual(['from-stdin', 'invalid-user', 'ssh-brute-force']);
    r = local(['detections', 'list', '--output', 'table']);
    expect(r.stdout).toMatch(/^DETECTION_ID\s+NAME\s+SEVERITY/);
    expect(r.stdout).toContain('ssh-brute-force');
    r = local(['detections', 'get', bruteId, '--output', 'json']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.json().name).toBe('ssh-brute-force');
    r = local(['detections', 'get', 'det_nope']);
    expect(r.status).toBe(3);
    oneLine(r.stderr);
  });

  it('tests a rule over the records already ingested', () => {
    const r = local(['detections', 'test', bruteId, '--output', 'json']);
    expect(r.status, r.stderr).toBe(0);
    const result = r.json();
    expect(result.records_evaluated).toBe(300);
    expect(result.records_matched).toBeGreaterThan(0);
    expect(result.hits.length).toBeGreaterThan(0);
    for (const hit of result.hits) {
      expect(hit.count).toBeGreaterThanOrEqual(5);
      expect(hit.records.every((rec: any) => rec.body.includes(`Failed password`) && rec.body.includes(`from ${hit.group_value} `))).toBe(true);
    }
    // a dry run stores nothing
    expect(local(['detections', 'hits', bruteId, '--output', 'json']).json().hits).toEqual([]);
  });

  it('records hits when new matching lines are ingested after an on-ingest rule', () => {
    ingestSsh(300, 600);
    let r = local(['detections', 'hits', bruteId, '--output', 'ndjson']);
    expect(r.status, r.stderr).toBe(0);
    const hits = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(hits.length).toBeGreaterThan(0);
    for (const hit of hits) expect(hit).toMatchObject({ detection_id: bruteId, severity: 'high', count: 5 });
    // each match counts toward one hit at most
    const ids = hits.flatMap((h) => h.records.map((x: any) => x.id));
    expect(new Set(ids).size).toBe(ids.length);
    // --all, a page of one hit at a time, gives them all in one JSON array
    r = local(['detections', 'hits', bruteId, '--all', '--limit', '1', '--output', 'json']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.json().map((h: any) => h.hit_id)).toEqual(hits.map((h) => h.hit_id));
    // one page of one says there is more
    r = local(['detections', 'hits', bruteId, '--limit', '1', '--output', 'ndjson']);
    if (hits.length > 1) expect(r.stderr).toMatch(/--cursor \S+/);
    r = local(['detections', 'hits', bruteId, '--since', '2999-01-01T00:00:00Z', '--output', 'json']);
    expect(r.json().hits).toEqual([]);
  });

  it('updates over the current definition, and wants webhook secrets again', () => {
    let r = local(['detections', 'update', bruteId, '--threshold', '3', '--webhook', 'http://127.0.0.1:9/hook', '--webhook-secret', 's3cret', '--output', 'json']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ name: 'ssh-brute-force', threshold: { count_gte: 3, window: '10m', group_pattern: 'from (\\S+)' }, actions: [{ type: 'webhook', url: 'http://127.0.0.1:9/hook', secret_set: true }] });
    expect(r.json().query.search_request.q).toBe('"Failed password"');
    r = local(['detections', 'update', bruteId, '--severity', 'critical']);
    expect(r.status).toBe(2);
    oneLine(r.stderr);
    expect(r.stderr).toMatch(/--webhook-secret/);
    r = local(['detections', 'update', bruteId, '--severity', 'critical', '--webhook-secret', 's3cret', '--group-by', 'metadata.host', '--output', 'json']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ severity: 'critical', threshold: { count_gte: 3, group_by: 'metadata.host' }, actions: [{ secret_set: true }] });
    expect(r.json().threshold.group_pattern ?? null).toBeNull();
    r = local(['detections', 'update', bruteId, '--no-webhook', '--no-threshold', '--disabled', '--output', 'json']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ enabled: false, threshold: null, actions: [] });
  });

  it('refuses an invalid rule with the validation exit code and one line', () => {
    let r = local(['detections', 'create', '--name', 'bad', '--severity', 'low', '--dataset', 'ssh', '--sql', 'SELECT count(*) FROM ssh', '--on-ingest']);
    expect(r.status).toBe(2);
    oneLine(r.stderr);
    expect(r.stderr).toMatch(/on_ingest/);
    r = local(['detections', 'create', '--name', 'bad', '--dataset', 'ssh']);
    expect(r.status).toBe(2);
    oneLine(r.stderr);
    expect(r.stderr).toMatch(/--severity/);
    r = local(['detections', 'create', ...BRUTE_FORCE.slice(0, -6), '--threshold', '5']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--window/);
    r = local(['detections', 'create', '--name', 'x', '--severity', 'low', '--dataset', 'nope', '--q', 'a', '--on-ingest']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/dataset 'nope' not found/);
    expect(local(['detections', 'list', '--output', 'json']).json().detections).toHaveLength(3);
  });

  it('deletes', () => {
    expect(local(['detections', 'delete', bruteId]).status).toBe(2); // no terminal to confirm on
    const r = local(['detections', 'delete', bruteId, '--yes', '--output', 'json']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.json().detection_id).toBe(bruteId);
    expect(local(['detections', 'get', bruteId]).status).toBe(3);
    expect(local(['detections', 'hits', bruteId]).status).toBe(3);
  });
});

describe('svc detections, remote mode', () => {
  const { dir, remote } = useHdfsServer('svc-cli-detections-');

  it('creates, tests, records hits, updates and deletes through the server', () => {
    let r = remote(['detections', 'create', '--name', 'hdfs-warn', '--severity', 'low', '--dataset', 'hdfs', '--q', 'Level:WARN', '--on-ingest', '--threshold', '2', '--window', '1h', '--output', 'json']);
    expect(r.status, r.stderr).toBe(0);
    const id = r.json().detection_id;
    expect(remote(['detections', 'list', '--output', 'json']).json().detections.map((d: any) => d.detection_id)).toEqual([id]);
    r = remote(['detections', 'test', id, '--output', 'json']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.json().records_matched).toBeGreaterThan(0);
    expect(r.json().hits.length).toBeGreaterThan(0);

    const csv = readFileSync(join(DATA, 'loghub/HDFS/HDFS_2k.log_structured.csv'), 'utf8').split('\n');
    const file = join(dir.path, 'more.csv');
    writeFileSync(file, [csv[0], ...csv.slice(1).filter((l) => l.includes(',WARN,')).slice(0, 4)].join('\n') + '\n');
    r = remote(['ingest', 'hdfs', file, '--wait', '--output', 'json']);
    expect(r.status, r.stderr).toBe(0);
    r = remote(['detections', 'hits', id, '--all', '--output', 'ndjson']);
    expect(r.status, r.stderr).toBe(0);
    const hits = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(hits.length).toBeGreaterThan(0);
    expect(hits[0]).toMatchObject({ detection_id: id, severity: 'low' });
    expect(hits[0].records.every((rec: any) => rec.metadata.Level === 'WARN')).toBe(true);

    r = remote(['detections', 'update', id, '--severity', 'medium', '--output', 'json']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ severity: 'medium', threshold: { count_gte: 2, window: '1h' } });
    r = remote(['detections', 'create', '--name', 'bad', '--severity', 'low', '--dataset', 'hdfs', '--sql', 'SELECT 1', '--on-ingest']);
    expect(r.status).toBe(2);
    oneLine(r.stderr);
    r = remote(['detections', 'test', id, '--since', 'yesterday']);
    expect(r.status).toBe(2);
    oneLine(r.stderr);
    expect(remote(['detections', 'delete', id, '--yes']).status).toBe(0);
    expect(remote(['detections', 'get', id]).status).toBe(3);
  });
});
