import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DATA } from './helpers/cli.js';
import { observeFields, physicalField, recordFields, recordFieldsBuffer, valueType, type FieldVariants } from '../src/engine/fields/discover.js';

const nginx = readFileSync(join(DATA, 'ingest/nginxplus_status.ndjson'), 'utf8')
  .split(/\r?\n/)
  .filter((l) => l !== '')
  .map((l) => JSON.parse(l) as Record<string, unknown>);

const doc = (metadata: Record<string, unknown>, title: string | null = null, time: string | null = null) => ({ title, body: '', time, metadata });

function typesOf(out: Map<string, FieldVariants>, path: string) {
  return Object.fromEntries([...(out.get(path) ?? new Map())].map(([t, v]) => [t, v.count]));
}

describe('valueType', () => {
  it.each([
    [42, 'i64'],
    [-7, 'i64'],
    [0.25, 'f64'],
    [true, 'bool'],
    ['web-01', 'str'],
    ['2015-05-17', 'str'],
    ['10:05:03', 'str'],
    ['2015-05-17T10:05:03Z', 'datetime'],
    ['2015-05-17 10:05:03', 'datetime'],
    ['2015-05-17T10:05:03.123456+02:00', 'datetime'],
    ['2015-05-17T10:05:03,5', 'datetime'],
    ['2015-05-17T10:05:03Z and more', 'str'],
    [{ a: 1 }, 'object'],
    [[1, 2], 'array'],
    [null, null],
    [undefined, null],
  ])('%j is %s', (v, t) => {
    expect(valueType(v)).toBe(t);
  });
});

describe('observeFields on nginx status documents', () => {
  it('flattens the first document to dotted leaves, records objects once and arrays whole', () => {
    const out = new Map<string, FieldVariants>();
    observeFields(doc(nginx[0]), out);
    expect(typesOf(out, 'connections')).toEqual({ object: 1 });
    expect(out.get('connections.accepted')!.get('i64')).toEqual({ count: 1, sample: 8995031 });
    expect(out.get('nginx_version')!.get('str')).toEqual({ count: 1, sample: '1.9.4' });
    expect(typesOf(out, 'server_zones.hg.nginx.org.responses.4xx')).toEqual({ i64: 1 });
    expect(typesOf(out, 'caches.http_cache.cold')).toEqual({ bool: 1 });
    expect(typesOf(out, 'upstreams.trac-backend.peers')).toEqual({ array: 1 });
    expect([...out.keys()].filter((p) => p.startsWith('upstreams.trac-backend.peers.'))).toEqual([]);
    expect(typesOf(out, 'body')).toEqual({ str: 1 });
    expect(out.has('title')).toBe(false);
    expect(out.has('time')).toBe(false);
  });

  it('counts every path across all 500 documents', () => {
    const out = new Map<string, FieldVariants>();
    for (const m of nginx) observeFields(doc(m), out);
    // 116 metadata paths, each of one type, plus body
    expect(out.size).toBe(117);
    expect(typesOf(out, 'connections.accepted')).toEqual({ i64: 500 });
    expect(typesOf(out, 'timestamp')).toEqual({ i64: 500 });
    expect(typesOf(out, 'upstreams.hg-backend.peers')).toEqual({ array: 500 });
    expect(typesOf(out, 'body')).toEqual({ str: 500 });
    expect(out.get('connections.accepted')!.get('i64')!.sample).toBe(8995031);
  });
});

describe('variants', () => {
  it('keeps each type a path is seen with, counted, with its first sample', () => {
    const out = new Map<string, FieldVariants>();
    observeFields(doc({ status: 200, nested: { code: 1 } }, 'first', '2015-05-17T10:05:03.000Z'), out);
    observeFields(doc({ status: '200', nested: { code: 'x' } }), out);
    observeFields(doc({ status: 'OK', nested: null }), out);
    observeFields(doc({ status: 2.5, nested: 'flat' }), out);
    expect(typesOf(out, 'status')).toEqual({ i64: 1, str: 2, f64: 1 });
    expect(out.get('status')!.get('str')!.sample).toBe('200');
    expect(typesOf(out, 'nested')).toEqual({ object: 2, str: 1 });
    expect(typesOf(out, 'nested.code')).toEqual({ i64: 1, str: 1 });
    expect(typesOf(out, 'title')).toEqual({ str: 1 });
    expect(typesOf(out, 'time')).toEqual({ datetime: 1 });
    expect(typesOf(out, 'body')).toEqual({ str: 4 });
  });

  it('names physical fields by type only when a path has several', () => {
    expect(physicalField('status', 'i64', 1)).toBe('status');
    expect(physicalField('status', 'i64', 3)).toBe('status__i64');
    expect(physicalField('status', 'str', 3)).toBe('status__str');
    expect(physicalField('connections.accepted', 'i64', 1)).toBe('connections.accepted');
  });
});

describe('recordFields', () => {
  it('walks metadata nested far deeper than any call stack allows, one path per level', () => {
    // built here rather than parsed: ingestion refuses such a record, but nothing that walks one may overflow
    const levels = 50_000;
    const metadata: Record<string, unknown> = {};
    let at = metadata;
    for (let i = 1; i < levels; i++) at = (at.a = {}) as Record<string, unknown>;
    at.a = 'leaf';
    const fields = recordFields(doc(metadata), recordFieldsBuffer());
    expect(fields.paths).toHaveLength(levels + 1); // body, then a, a.a, …
    expect(fields.types.filter((t) => t === 'object')).toHaveLength(levels - 1);
    expect(fields.types.at(-1)).toBe('str');
    expect(fields.paths.at(-1)!.length).toBe(2 * levels - 1);
  });

  it('lists the same paths and types observeFields counts, and empties its buffer between records', () => {
    const buffer = recordFieldsBuffer();
    recordFields(doc(nginx[1]), buffer);
    const fields = recordFields(doc(nginx[0], 'a title'), buffer);
    const out = new Map<string, FieldVariants>();
    observeFields(doc(nginx[0], 'a title'), out);
    expect(new Set(fields.paths)).toEqual(new Set(out.keys()));
    expect(fields.paths).toHaveLength(out.size);
    fields.paths.forEach((path, i) => expect(out.get(path)!.has(fields.types[i])).toBe(true));
  });
});
