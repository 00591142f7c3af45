import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../src/api/limits.js';
import type { SearchRequest } from '../src/api/search.js';
import { Invalid, Refused } from '../src/engine/errors.js';
import { Engine, type Caller } from '../src/engine/index.js';
import { tempDir } from './helpers/cli.js';

const LEVELS = ['INFO', 'WARN', 'ERROR'];
const line = (i: number) => JSON.stringify({ id: `r${i}`, message: `request ${i} served by worker${i % 7} in ${i % 500} ms`, level: LEVELS[i % 3], n: i });
const lines = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => line(from + k)).join('\n') + '\n';

function bytesUnder(dir: string): number {
  let n = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) if (entry.isFile()) n += statSync(join(entry.parentPath, entry.name)).size;
  return n;
}

const ids = (res: { records: { id: string }[] }) => res.records.map((r) => r.id);

describe('search work is bounded and writes nothing', () => {
  const dir = tempDir('svc-bounds-');
  let engine: Engine;
  let caller: Caller;
  const RECORDS = LIMITS.rankingDepth + 50;

  const ingest = async (body: string) => {
    const run = await engine.ingest.submit(caller, Readable.from([Buffer.from(body)]), { dataset_id: 'logs', format: 'ndjson' });
    expect((await engine.ingest.wait(caller, run.ingest_run_id)).status).toBe('ready');
  };
  const reopen = async (env: Record<string, string> = {}) => {
    await engine.close();
    Object.assign(process.env, env);
    try {
      engine = await Engine.open(dir.path);
    } finally {
      for (const k of Object.keys(env)) delete process.env[k];
    }
    caller = engine.localCaller();
  };

  beforeAll(async () => {
    engine = await Engine.open(dir.path);
    await engine.init('bounds', 'admin@localhost');
    caller = engine.localCaller();
    await engine.datasets.create(caller, { dataset_id: 'logs' });
    await ingest(lines(0, RECORDS));
  }, 120_000);
  afterAll(async () => {
    await engine?.close();
    dir.remove();
  });

  // about 100 bytes a search at most: a handle or a ranking kept on disk (hundreds of bytes, kilobytes) shows at once
  const SEARCHES = 2_000;
  it(`${SEARCHES} searches that each leave a ranking to page through grow the data dir by less than 100 bytes a search`, async () => {
    await reopen(); // every snapshot of the ingest written
    const before = bytesUnder(dir.path);
    for (let i = 0; i < SEARCHES; i++) {
      const res = await engine.search.run(caller, { text: `worker${i % 7} ${i % 500}`, datasets: ['logs'], limit: 1 });
      expect(res.next_cursor).not.toBeNull();
    }
    await reopen();
    expect(bytesUnder(dir.path) - before).toBeLessThan(SEARCHES * 100);
  }, 300_000);

  it('a cursor outlives its handle: the next process runs the frozen search again, with the records it saw', async () => {
    const req: SearchRequest = { text: 'worker3', datasets: ['logs'], limit: 7, where: [{ field: 'level', op: 'ne', value: 'WARN' }] };
    const all: string[] = [];
    let page = await engine.search.run(caller, { ...req, limit: 21 });
    all.push(...ids(page));
    page = await engine.search.run(caller, req);
    expect(ids(page)).toEqual(all.slice(0, 7));
    await reopen(); // the handle is gone with the process
    await ingest(lines(RECORDS, RECORDS + 30)); // newer records, some of them worker3 ones, are not part of the search
    const second = await engine.search.run(caller, { cursor: page.next_cursor });
    expect(ids(second)).toEqual(all.slice(7, 14));
    expect(second.total).toEqual(page.total);
    const third = await engine.search.run(caller, { cursor: second.next_cursor });
    expect(ids(third)).toEqual(all.slice(14, 21));
  }, 60_000);

  it('a cursor too large to carry its search is refused once its handle is gone, with a clear 422', async () => {
    const values = Array.from({ length: 500 }, (_, i) => `value-${i}`);
    const page = await engine.search.run(caller, { datasets: ['logs'], limit: 5, where: [{ field: 'level', op: 'nin', value: values }] });
    expect(page.next_cursor!.length).toBeLessThanOrEqual(LIMITS.cursor);
    expect(ids(await engine.search.run(caller, { cursor: page.next_cursor }))).toHaveLength(5); // this process still has it
    await reopen();
    const err = await engine.search.run(caller, { cursor: page.next_cursor }).catch((e) => e);
    expect(err).toBeInstanceOf(Invalid);
    expect(err.issues[0]).toMatchObject({ loc: ['body', 'cursor'], msg: expect.stringContaining('run the search again') });
  });

  it('ranks every match but keeps only the first pages of a huge result, and says so', async () => {
    const res = await engine.search.run(caller, { datasets: ['logs'], limit: 1000 });
    expect(res.total).toEqual({ relation: 'eq', value: RECORDS + 30 });
    expect(res.warnings?.[0]).toMatchObject({ code: 'ranking_truncated' });
    let cursor = res.next_cursor;
    let pages = 1;
    while (cursor) {
      const next = await engine.search.run(caller, { cursor });
      cursor = next.next_cursor;
      pages++;
    }
    expect(pages).toBe(LIMITS.rankingDepth / 1000);
    // counts and aggregations still see every match
    const agg = await engine.search.run(caller, { text: 'served', datasets: ['logs'], limit: 1, aggregations: [{ name: 'levels', type: 'terms', field: 'level' }] });
    expect(agg.total.value).toBe(RECORDS + 30);
    const buckets = (agg.aggregations.levels as { buckets: { doc_count: number }[] }).buckets;
    expect(buckets.reduce((n, b) => n + b.doc_count, 0)).toBe(RECORDS + 30);
  }, 60_000);

  it('a sorted search keeps the best rankingDepth records by its sort', async () => {
    const n = (res: { records: { metadata: Record<string, unknown> }[] }) => res.records.map((r) => r.metadata.n as number);
    const asc = await engine.search.run(caller, { datasets: ['logs'], limit: 1000, sort: [{ field: 'n', order: 'asc' }] });
    expect(asc.total.value).toBeGreaterThan(LIMITS.rankingDepth);
    expect(asc.warnings?.[0]).toMatchObject({ code: 'ranking_truncated' });
    const seen = n(asc);
    for (let cursor = asc.next_cursor; cursor; ) {
      const next = await engine.search.run(caller, { cursor });
      seen.push(...n(next));
      cursor = next.next_cursor;
    }
    expect(seen).toEqual(Array.from({ length: LIMITS.rankingDepth }, (_, i) => i));
    // a text search the same way: its matches by the sort, not by score
    const desc = await engine.search.run(caller, { text: 'served', datasets: ['logs'], limit: 5, sort: [{ field: 'n', order: 'desc' }] });
    const top = desc.total.value - 1;
    expect(n(desc)).toEqual([top, top - 1, top - 2, top - 3, top - 4]);
  }, 60_000);

  it('a search past its deadline ends with search_timeout', async () => {
    await reopen({ SVC_SEARCH_TIMEOUT_MS: '1' });
    try {
      const err = await engine.search.run(caller, { datasets: ['logs'], where: [{ field: 'message', op: 'contains', value: 'served' }] }).catch((e) => e);
      expect(err).toBeInstanceOf(Refused);
      expect(err).toMatchObject({ code: 'search_timeout', status: 422 });
      const text = await engine.search.run(caller, { text: 'request served', datasets: ['logs'] }).catch((e) => e);
      expect(text).toMatchObject({ code: 'search_timeout' });
    } finally {
      await reopen();
    }
    expect((await engine.search.run(caller, { text: 'request served', datasets: ['logs'], limit: 1 })).records).toHaveLength(1);
  }, 60_000);

  it('refuses a text with more distinct terms than it may look up, and aggregations with too many buckets', async () => {
    const words = Array.from({ length: LIMITS.queryTerms + 1 }, (_, i) => `word${i}x`).join(' ');
    await expect(engine.search.run(caller, { text: words, datasets: ['logs'] })).rejects.toMatchObject({ issues: [{ loc: ['body', 'text'] }] });
    const histogram = engine.search.run(caller, { datasets: ['logs'], aggregations: [{ name: 'by_n', type: 'histogram', field: 'n', interval: 1 }] });
    await expect(histogram).rejects.toThrow(/more than 10000 buckets/);
  });

  it('an in-list of many values matches exactly what one test per value matches', async () => {
    const values: unknown[] = Array.from({ length: LIMITS.inValues }, (_, i) => (i % 2 ? `r${i * 3}` : i * 3));
    const byId = await engine.search.run(caller, { datasets: ['logs'], limit: 1000, where: [{ field: 'id', op: 'in', value: values }] });
    // ids r0, r3, r6 … : only odd positions are strings that can match an id; numbers never equal "r…"
    const expected = values.filter((v) => typeof v === 'string' && Number((v as string).slice(1)) < RECORDS + 30).length;
    expect(byId.total.value).toBe(expected);
    const byN = await engine.search.run(caller, { datasets: ['logs'], limit: 1, where: [{ field: 'n', op: 'in', value: [5, '7', 'x', 9.0, null] }] });
    expect(byN.total.value).toBe(3);
    const tooMany = engine.search.run(caller, { datasets: ['logs'], where: [{ field: 'n', op: 'in', value: [...values, 1] }] });
    await expect(tooMany).rejects.toMatchObject({ issues: [{ loc: ['body', 'where', 0, 'value'], msg: expect.stringContaining(`at most ${LIMITS.inValues}`) }] });
  });

  it('ends a page of large records early at its byte cap, and its cursor goes on from there', async () => {
    await engine.datasets.create(caller, { dataset_id: 'big' });
    const filler = 'lorem ipsum dolor '.repeat(50_000); // 900,000 characters
    const body = Array.from({ length: 40 }, (_, i) => JSON.stringify({ id: `big${i}`, message: i === 0 ? `${filler} needle` : `needle ${filler}` })).join('\n');
    const run = await engine.ingest.submit(caller, Readable.from([Buffer.from(body)]), { dataset_id: 'big', format: 'ndjson' });
    expect((await engine.ingest.wait(caller, run.ingest_run_id)).status).toBe('ready');
    const perPage = Math.ceil(LIMITS.pageBytes / filler.length);
    let page = await engine.search.run(caller, { datasets: ['big'], limit: 1000 });
    const seen = [...ids(page)];
    let pages = 1;
    while (page.next_cursor) {
      expect(page.records.length).toBeLessThanOrEqual(perPage);
      expect(page.records.length).toBeGreaterThanOrEqual(1);
      page = await engine.search.run(caller, { cursor: page.next_cursor });
      seen.push(...ids(page));
      pages++;
    }
    expect(pages).toBeGreaterThanOrEqual(Math.floor(40 / perPage));
    expect(seen.sort()).toEqual(Array.from({ length: 40 }, (_, i) => `big${i}`).sort());
    // snippets come from the start of a long body
    const found = await engine.search.run(caller, { text: 'needle', datasets: ['big'], where: [{ field: 'id', op: 'in', value: ['big0', 'big1'] }] });
    const byId = new Map(found.records.map((r) => [r.id, r.snippets]));
    expect(byId.get('big1')![0]).toContain('<em>needle</em>');
    expect(byId.get('big0')).toEqual([]);
  }, 60_000);
});
