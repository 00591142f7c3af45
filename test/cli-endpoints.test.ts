/** `svc endpoints` on a local data dir and against a server: the HDFS structured log. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATA, init, svc, tempDir, useHdfsServer } from './helpers/cli.js';

const { dir, remote } = useHdfsServer('svc-cli-endpoints-');
const localDir = tempDir('svc-cli-endpoints-local-');
const local = (args: string[]) => svc(args, { dataDir: localDir.path });
beforeAll(() => {
  init(localDir.path);
  expect(local(['datasets', 'create', 'hdfs', '--no-semantic']).status).toBe(0);
  const r = local(['ingest', 'hdfs', join(DATA, 'loghub/HDFS/HDFS_2k.log_structured.csv'), '--wait']);
  expect(r.status, r.stderr).toBe(0);
});
afterAll(() => localDir.remove());

describe('svc endpoints', () => {
  it('creates, lists, gets, runs and deletes, in local mode and in remote mode', () => {
    const file = join(dir.path, 'by-level.json');
    writeFileSync(file, JSON.stringify({ search_request: { datasets: ['hdfs'], q: 'Level:{{level}}', limit: 5 }, params: [{ name: 'level', type: 'string', required: true, enum: ['INFO', 'WARN'] }] }));
    for (const [mode, run] of [['remote', remote], ['local', local]] as const) {
      const name = `by-level-${mode}`;
      let r = run(['endpoints', 'create', name, '--from-file', file, '--output', 'json']);
      expect(r.status, r.stderr).toBe(0);
      expect(r.json().name).toBe(name);
      r = run(['endpoints', 'create', `${name}-sql`, '--sql', 'SELECT count(*) AS n FROM hdfs WHERE Level = $level', '--from-file', file, '--output', 'json']);
      expect(r.status).toBe(2); // both sql and search_request: 422 is a usage error
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      r = run(['endpoints', 'list', '--output', 'json']);
      expect(r.json().query_endpoints.map((e: any) => e.name)).toContain(name);
      expect(run(['endpoints', 'get', name, '--output', 'json']).json().params[0].name).toBe('level');
      r = run(['endpoints', 'run', name, '--param', 'level=WARN', '--output', 'json']);
      expect(r.status, r.stderr).toBe(0);
      expect(r.json().records.length).toBeGreaterThan(0);
      expect(r.json().records.every((x: any) => x.metadata.Level === 'WARN')).toBe(true);
      r = run(['endpoints', 'run', name, '--param', 'level=NOPE']);
      expect(r.status).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(run(['endpoints', 'run', 'no-such', '--param', 'level=WARN']).status).toBe(3);
      const params = join(dir.path, 'params.json');
      writeFileSync(params, JSON.stringify({ params: [{ name: 'level', type: 'string', required: true }] }));
      r = run(['endpoints', 'create', `${name}-sql`, '--sql', 'SELECT Level, count(*) AS n FROM hdfs WHERE Level = $level GROUP BY Level', '--from-file', params, '--output', 'json']);
      expect(r.status, r.stderr).toBe(0);
      r = run(['endpoints', 'run', `${name}-sql`, '--param', 'level=WARN', '--output', 'json']);
      expect(r.status, r.stderr).toBe(0);
      expect(r.json().mode).toBe('sql');
      expect(r.json().records.map((x: any) => x.metadata.Level)).toEqual(['WARN']);
      r = run(['endpoints', 'run', `${name}-sql`, '--param', 'level=WARN']);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/Level/);
      // a repeated --param fills a string[] parameter
      const levels = join(dir.path, 'levels.json');
      writeFileSync(levels, JSON.stringify({ search_request: { datasets: ['hdfs'], where: [{ field: 'Level', op: 'in', value: '{{levels}}' }], limit: 1000 }, params: [{ name: 'levels', type: 'string[]', required: true }] }));
      expect(run(['endpoints', 'create', `${name}-in`, '--from-file', levels]).status).toBe(0);
      const total = (...values: string[]) => {
        const res = run(['endpoints', 'run', `${name}-in`, ...values.flatMap((v) => ['--param', `levels=${v}`]), '--output', 'json']);
        expect(res.status, res.stderr).toBe(0);
        return res.json().total.value as number;
      };
      const [warn, info] = [total('WARN'), total('INFO')];
      expect(warn).toBeGreaterThan(0);
      expect(info).toBeGreaterThan(0);
      expect(total('WARN', 'INFO')).toBe(warn + info);
      expect(run(['endpoints', 'delete', name, '--yes']).status).toBe(0);
      expect(run(['endpoints', 'get', name]).status).toBe(3);
    }
  });
});
