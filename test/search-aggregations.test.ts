import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Invalid } from '../src/engine/errors.js';
import type { StoredRecord } from '../src/engine/records.js';
import { createAggregator, validateAggregations, type AggregationSpec } from '../src/engine/search/aggregations.js';
import { DATA } from './helpers/cli.js';

function rec(body: string, metadata: Record<string, unknown>, time: string | null = null): StoredRecord {
  return {
    id: 'r', seq: 1, title: null, body, time, metadata, created_at: '2024-01-01T00:00:00.000Z',
    source_key: 'src', bucket: 'b', key: 'logs/app.log', etag: 'e', line: 1, transform_version: 1,
  };
}

/** OpenStack_2k rows: Level, Pid and Component from their cells (quoted cells come after them), status/len parsed from the message. */
const openstack: StoredRecord[] = readFileSync(join(DATA, 'loghub/OpenStack/OpenStack_2k.log_structured.csv'), 'utf8')
  .split(/\r?\n/)
  .slice(1)
  .filter((l) => l !== '')
  .map((line) => {
    const [, , day, clock, pid, level, component] = line.split(',');
    const metadata: Record<string, unknown> = { Pid: pid, Level: level, Component: component };
    const m = /status: (\d+) len: (\d+)/.exec(line);
    if (m) Object.assign(metadata, { status: Number(m[1]), len: Number(m[2]) });
    return rec(line, metadata, `${day}T${clock}Z`);
  });

function run(specs: AggregationSpec[], records: StoredRecord[] = openstack) {
  const agg = createAggregator(specs);
  for (const r of records) agg.add(r);
  return agg.result();
}

describe('aggregations over OpenStack_2k', () => {
  it('terms counts values, largest first, with the rest summed', () => {
    const out = run([
      { name: 'levels', type: 'terms', field: 'Level' },
      { name: 'components', type: 'terms', field: 'Component', size: 3 },
      { name: 'status', type: 'terms', field: 'status', size: 2 },
    ]);
    expect(out.levels).toEqual({ buckets: [{ key: 'INFO', doc_count: 1969 }, { key: 'WARNING', doc_count: 31 }], sum_other_doc_count: 0 });
    expect(out.components).toEqual({
      buckets: [
        { key: 'nova.osapi_compute.wsgi.server', doc_count: 809 },
        { key: 'nova.virt.libvirt.imagecache', doc_count: 336 },
        { key: 'nova.compute.manager', doc_count: 262 },
      ],
      sum_other_doc_count: 593,
    });
    expect(out.status).toEqual({ buckets: [{ key: 200, doc_count: 933 }, { key: 404, doc_count: 41 }], sum_other_doc_count: 43 });
  });

  it('date_histogram buckets by fixed and calendar intervals, ascending', () => {
    const out = run([
      { name: 'five', type: 'date_histogram', field: 'time', interval: '5m' },
      { name: 'month', type: 'date_histogram', field: 'time', interval: 'month' },
      { name: 'week', type: 'date_histogram', field: 'time', interval: '1w' },
    ]);
    expect(out.five).toEqual({
      buckets: [
        { key: 1494892800000, key_as_string: '2017-05-16T00:00:00.000Z', doc_count: 659 },
        { key: 1494893100000, key_as_string: '2017-05-16T00:05:00.000Z', doc_count: 694 },
        { key: 1494893400000, key_as_string: '2017-05-16T00:10:00.000Z', doc_count: 647 },
      ],
    });
    expect(out.month).toEqual({ buckets: [{ key: Date.UTC(2017, 4, 1), key_as_string: '2017-05-01T00:00:00.000Z', doc_count: 2000 }] });
    // 2017-05-16 was a Tuesday; its week starts on Monday the 15th
    expect(out.week).toEqual({ buckets: [{ key: Date.UTC(2017, 4, 15), key_as_string: '2017-05-15T00:00:00.000Z', doc_count: 2000 }] });
  });

  it('histogram buckets numbers and leaves out empty buckets', () => {
    expect(run([{ name: 'len', type: 'histogram', field: 'len', interval: 500 }]).len).toEqual({
      buckets: [
        { key: 0, doc_count: 259 },
        { key: 500, doc_count: 58 },
        { key: 1500, doc_count: 698 },
        { key: 23000, doc_count: 2 },
      ],
    });
  });

  it('stats summarises numbers, including numeric strings', () => {
    const out = run([
      { name: 'len', type: 'stats', field: 'len' },
      { name: 'none', type: 'stats', field: 'no_such_field' },
      { name: 'pid', type: 'stats', field: 'Pid' },
    ]);
    expect(out.len).toEqual({ count: 1017, min: 117, max: 23370, avg: 1448970 / 1017, sum: 1448970 });
    expect(out.none).toEqual({ count: 0, min: null, max: null, avg: null, sum: 0 });
    expect(out.pid).toMatchObject({ count: 2000, min: 2931, max: 25998 });
  });

  it('count counts documents, or those holding the field', () => {
    const out = run([
      { name: 'all', type: 'count' },
      { name: 'with_status', type: 'count', field: 'status' },
    ]);
    expect(out).toEqual({ all: { value: 2000 }, with_status: { value: 1017 } });
  });
});

describe('aggregations over arrays and edge values', () => {
  const records = [
    rec('a', { tags: ['db', 'web'], score: [0.31, 0.35], at: '2024-02-29T23:59:59Z' }),
    rec('b', { tags: ['web', 'web'], score: 0.12, at: '2024-03-01 00:00:01' }),
    rec('c', { tags: 'cache', score: '0.9', at: 1709251200000 }),
    rec('d', { tags: null, score: 0.3 }),
  ];

  it('terms counts each distinct array element once per document, ties by key', () => {
    expect(run([{ name: 't', type: 'terms', field: 'tags' }], records).t).toEqual({
      buckets: [
        { key: 'web', doc_count: 2 },
        { key: 'cache', doc_count: 1 },
        { key: 'db', doc_count: 1 },
      ],
      sum_other_doc_count: 0,
    });
  });

  it('histogram keys stay exact for fractional intervals', () => {
    expect(run([{ name: 'h', type: 'histogram', field: 'score', interval: 0.1 }], records).h).toEqual({
      buckets: [
        { key: 0.1, doc_count: 1 },
        { key: 0.3, doc_count: 2 },
        { key: 0.9, doc_count: 1 },
      ],
    });
  });

  it('date_histogram reads zone-less times as UTC and numbers as epoch ms', () => {
    expect(run([{ name: 'd', type: 'date_histogram', field: 'at', interval: '1d' }], records).d).toEqual({
      buckets: [
        { key: Date.UTC(2024, 1, 29), key_as_string: '2024-02-29T00:00:00.000Z', doc_count: 1 },
        { key: Date.UTC(2024, 2, 1), key_as_string: '2024-03-01T00:00:00.000Z', doc_count: 2 },
      ],
    });
  });

  it('stats counts every array element', () => {
    expect(run([{ name: 's', type: 'stats', field: 'score' }], records).s).toMatchObject({ count: 5, min: 0.12, max: 0.9 });
  });
});

describe('validateAggregations', () => {
  function locs(specs: unknown[]) {
    try {
      validateAggregations(specs as AggregationSpec[]);
    } catch (e) {
      expect(e).toBeInstanceOf(Invalid);
      return (e as Invalid).issues.map((i) => i.loc);
    }
    return [];
  }

  it('accepts well-formed specs', () => {
    expect(
      locs([
        { name: 'a', type: 'count' },
        { name: 'b', type: 'date_histogram', field: 'time', interval: '15m' },
        { name: 'c', type: 'histogram', field: 'n', interval: 2.5 },
      ]),
    ).toEqual([]);
  });

  it('locates each problem by index and member', () => {
    expect(
      locs([
        { name: 'x', type: 'terms', field: 'Level' },
        { name: 'x', type: 'stats', field: 'len' },
        { name: 'y', type: 'terms' },
        { name: 'z', type: 'date_histogram', field: 'time' },
        { name: 'w', type: 'date_histogram', field: 'time', interval: '5 minutes' },
        { name: 'v', type: 'histogram', field: 'len', interval: -5 },
        { name: 'u', type: 'median', field: 'len' },
        { name: 't', type: 'terms', field: 'Level', size: 0 },
      ]),
    ).toEqual([
      ['body', 'aggregations', 1, 'name'],
      ['body', 'aggregations', 2, 'field'],
      ['body', 'aggregations', 3, 'interval'],
      ['body', 'aggregations', 4, 'interval'],
      ['body', 'aggregations', 5, 'interval'],
      ['body', 'aggregations', 6, 'type'],
      ['body', 'aggregations', 7, 'size'],
    ]);
  });

  it('createAggregator refuses what validation refuses', () => {
    expect(() => createAggregator([{ name: 'h', type: 'histogram', field: 'n' }])).toThrow(Invalid);
  });
});
