import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Invalid } from '../src/engine/errors.js';
import type { StoredRecord } from '../src/engine/records.js';
import { compileFilters, type TimeFilter, type WhereItem } from '../src/engine/search/filters.js';
import { DATA } from './helpers/cli.js';
import { csvCells } from './helpers/csv.js';

function rec(body: string, metadata: Record<string, unknown>, time: string | null = null): StoredRecord {
  return {
    id: 'r', seq: 1, title: null, body, time, metadata, created_at: '2024-01-01T00:00:00.000Z',
    source_key: 'src', bucket: 'b', key: 'logs/app.log', etag: 'e', line: 1, transform_version: 1,
  };
}


/** OpenStack_2k as a CSV ingest stores it: cells as strings, Content as body, Date+Time also as time; status parsed out as a number. */
const [header, ...lines] = readFileSync(join(DATA, 'loghub/OpenStack/OpenStack_2k.log_structured.csv'), 'utf8')
  .split(/\r?\n/)
  .filter((l) => l !== '');
const names = csvCells(header);
const openstack: StoredRecord[] = lines.map((line) => {
  const row = Object.fromEntries(csvCells(line).map((v, i) => [names[i], v]));
  const { Content, LineId, ...cells } = row;
  const metadata: Record<string, unknown> = cells;
  const status = /status: (\d+)/.exec(Content);
  if (status) metadata.status = Number(status[1]);
  return { ...rec(Content, metadata, `${row.Date}T${row.Time}Z`), id: `os-${LineId}` };
});

const now = new Date('2017-05-16T00:15:00Z');
const count = (where?: WhereItem[], time?: TimeFilter | null) => {
  const f = compileFilters(where, time, now);
  return f === null ? openstack.length : openstack.filter(f).length;
};

describe('where on OpenStack_2k', () => {
  it('parses all 2000 rows', () => {
    expect(openstack).toHaveLength(2000);
    expect(openstack[0].metadata.Component).toBe('nova.osapi_compute.wsgi.server');
  });

  it('eq and ne ignore case for strings', () => {
    expect(count([{ field: 'Level', op: 'eq', value: 'warning' }])).toBe(31);
    expect(count([{ field: 'Level', op: 'ne', value: 'info' }])).toBe(31);
  });

  it('eq compares a numeric string with a number numerically', () => {
    expect(count([{ field: 'Pid', op: 'eq', value: 2931 }])).toBe(933);
    expect(count([{ field: 'status', op: 'eq', value: '404' }])).toBe(41);
  });

  it('gt, gte, lt and lte order numbers, skipping records without the field', () => {
    expect(count([{ field: 'Pid', op: 'gt', value: 25780 }])).toBe(137);
    expect(count([{ field: 'Pid', op: 'gte', value: '25790' }])).toBe(87);
    expect(count([{ field: 'status', op: 'lt', value: 204 }])).toBe(954);
    expect(count([{ field: 'status', op: 'gte', value: 202 }])).toBe(84);
    expect(count([{ field: 'status', op: 'lte', value: 200 }])).toBe(933);
  });

  it('gt and lt order dates by instant', () => {
    expect(count([{ field: 'time', op: 'gte', value: '2017-05-16T00:05:00Z' }, { field: 'time', op: 'lt', value: '2017-05-16T00:10:00Z' }])).toBe(694);
  });

  it('in and nin take a list; nin also keeps records without the field', () => {
    expect(count([{ field: 'Component', op: 'in', value: ['NOVA.compute.manager', 'nova.compute.claims'] }])).toBe(430);
    expect(count([{ field: 'status', op: 'in', value: [202, 204] }])).toBe(43);
    expect(count([{ field: 'status', op: 'nin', value: [200] }])).toBe(1067);
  });

  it('exists defaults to true and takes false', () => {
    expect(count([{ field: 'status', op: 'exists' }])).toBe(1017);
    expect(count([{ field: 'status', op: 'exists', value: false }])).toBe(983);
    expect(count([{ field: 'metadata.status', op: 'exists', value: true }])).toBe(1017);
  });

  it('prefix and contains ignore case, on metadata and on the body', () => {
    expect(count([{ field: 'Component', op: 'prefix', value: 'NOVA.virt' }])).toBe(443);
    expect(count([{ field: 'Component', op: 'contains', value: 'LibVirt' }])).toBe(443);
    expect(count([{ field: 'body', op: 'contains', value: 'unknown base file' }])).toBe(30);
  });

  it('ANDs every item together', () => {
    expect(count([{ field: 'Level', op: 'eq', value: 'WARNING' }, { field: 'body', op: 'contains', value: 'unknown base file' }])).toBe(30);
  });
});

describe('where on arrays', () => {
  const r = rec('x', { tags: ['Blue', 'green'], sizes: [3, 12], owner: { team: 'ops' } });
  const ok = (where: WhereItem[]) => compileFilters(where, null, now)!(r);

  it('matches when any element does, and ne/nin only when none does', () => {
    expect(ok([{ field: 'tags', op: 'eq', value: 'blue' }])).toBe(true);
    expect(ok([{ field: 'tags', op: 'ne', value: 'blue' }])).toBe(false);
    expect(ok([{ field: 'tags', op: 'ne', value: 'red' }])).toBe(true);
    expect(ok([{ field: 'tags', op: 'in', value: ['red', 'GREEN'] }])).toBe(true);
    expect(ok([{ field: 'tags', op: 'nin', value: ['red', 'GREEN'] }])).toBe(false);
    expect(ok([{ field: 'sizes', op: 'gt', value: 10 }])).toBe(true);
    expect(ok([{ field: 'sizes', op: 'lt', value: 3 }])).toBe(false);
    expect(ok([{ field: 'tags', op: 'prefix', value: 'gr' }])).toBe(true);
    expect(ok([{ field: 'owner.team', op: 'eq', value: 'OPS' }])).toBe(true);
    expect(ok([{ field: 'owner.name', op: 'eq', value: null }])).toBe(true);
    expect(ok([{ field: 'owner.team', op: 'ne', value: null }])).toBe(true);
  });
});

describe('time', () => {
  it('last counts back from now', () => {
    expect(count(undefined, { last: '5m' })).toBe(647);
    expect(count(undefined, { last: '300s' })).toBe(647);
    expect(count(undefined, { last: '90s' })).toBe(179);
    expect(count(undefined, { last: '1h' })).toBe(2000);
    expect(count(undefined, { last: '2w' })).toBe(2000);
    expect(compileFilters(undefined, { last: '7d' }, new Date('2017-05-30T00:00:00Z'))!(openstack[0])).toBe(false);
  });

  it('gte and lt bound a window, combined with where', () => {
    expect(count(undefined, { gte: '2017-05-16T00:05:00Z', lt: '2017-05-16T00:10:00Z' })).toBe(694);
    expect(count([{ field: 'Level', op: 'eq', value: 'WARNING' }], { last: '5m' })).toBe(11);
  });

  it('reads another field when told to', () => {
    expect(count(undefined, { field: 'Date', gte: '2017-05-16' })).toBe(2000);
    expect(count(undefined, { field: 'Date', lt: '2017-05-16' })).toBe(0);
  });

  it('never matches a record without a time', () => {
    expect(compileFilters(undefined, { last: '24h' }, now)!(rec('x', {}, null))).toBe(false);
  });
});

describe('compileFilters', () => {
  it('returns null when nothing filters', () => {
    expect(compileFilters(undefined, null, now)).toBeNull();
    expect(compileFilters([], {}, now)).toBeNull();
  });

  function issues(where: unknown[] | undefined, time?: unknown) {
    try {
      compileFilters(where as WhereItem[], time as TimeFilter, now);
    } catch (e) {
      expect(e).toBeInstanceOf(Invalid);
      return (e as Invalid).issues.map((i) => i.loc);
    }
    throw new Error('expected Invalid');
  }

  it('locates each bad item and member', () => {
    expect(issues([{ field: 'a', op: 'in', value: 'x' }])).toEqual([['body', 'where', 0, 'value']]);
    expect(issues([{ field: 'a', op: 'gt', value: 'soon' }])).toEqual([['body', 'where', 0, 'value']]);
    expect(issues([{ field: 'a', op: 'exists', value: 'yes' }])).toEqual([['body', 'where', 0, 'value']]);
    expect(issues([{ field: 'a', op: 'eq' }])).toEqual([['body', 'where', 0, 'value']]);
    expect(issues([{ field: 'a', op: 'prefix', value: ['x'] }])).toEqual([['body', 'where', 0, 'value']]);
    expect(
      issues([
        { field: 'a', op: 'eq', value: 1 },
        { field: '', op: 'eq', value: 1 },
        { field: 'a', op: 'like', value: 1 },
      ]),
    ).toEqual([
      ['body', 'where', 1, 'field'],
      ['body', 'where', 2, 'op'],
    ]);
  });

  it('locates bad time members', () => {
    expect(issues(undefined, { last: '15 minutes' })).toEqual([['body', 'time', 'last']]);
    expect(issues(undefined, { last: '3y' })).toEqual([['body', 'time', 'last']]);
    expect(issues(undefined, { gte: 'yesterday', lt: '2017-13-45' })).toEqual([
      ['body', 'time', 'gte'],
      ['body', 'time', 'lt'],
    ]);
  });
});
