/**
 * A search with nothing to score or test ranks every record newest first: it reads the store's keys
 * only as far as its pages go (a poll for the newest record reads one key, not a ranking's worth),
 * and its next pages go on below the last one, stable when records go in between.
 */
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../src/api/limits.js';
import type { SearchEnvelope } from '../src/api/search.js';
import type { Caller } from '../src/engine/auth/caller.js';
import { Engine } from '../src/engine/index.js';
import type { Store } from '../src/engine/store/db.js';
import { tempDir } from './helpers/cli.js';

let dir: ReturnType<typeof tempDir>;
let engine: Engine;
let caller: Caller;

const START = Date.parse('2026-03-01T00:00:00Z');
const rows = (tag: string, from: number, n: number, note = '') =>
  Array.from({ length: n }, (_, i) => ({ id: `${tag}-${from + i}`, time: new Date(START + (from + i) * 1000).toISOString(), msg: `event ${from + i}${note}` }));

async function ingest(d: string, lines: object[]) {
  const body = lines.map((r) => JSON.stringify(r)).join('\n') + '\n';
  const run = await engine.ingest.submit(caller, Readable.from([Buffer.from(body)]), { dataset_id: d, format: 'ndjson', filename: `${d}.ndjson` });
  expect((await engine.ingest.wait(caller, run.ingest_run_id)).status).toBe('ready');
}

/** How many keys of records `fn` read (a read without a limit counts as Infinity), and how many records. */
async function reads<T>(fn: () => Promise<T>): Promise<{ out: T; keys: number; records: number }> {
  const records = (engine as unknown as { store: Store }).store.records;
  const [getKeys, getRange, get] = [records.getKeys, records.getRange, records.get];
  let keys = 0;
  let read = 0;
  records.getKeys = function (this: typeof records, options) {
    keys += options?.limit ?? Infinity;
    return getKeys.call(this, options);
  } as typeof getKeys;
  records.getRange = function (this: typeof records, options) {
    if ((options as { values?: boolean } | undefined)?.values !== false) read += options?.limit ?? Infinity;
    return getRange.call(this, options);
  } as typeof getRange;
  records.get = function (this: typeof records, ...args: Parameters<typeof get>) {
    read++;
    return get.apply(this, args);
  } as typeof get;
  try {
    return { out: await fn(), keys, records: read };
  } finally {
    Object.assign(records, { getKeys, getRange, get });
  }
}

const ids = (page: SearchEnvelope) => page.records.map((r) => r.id);

/** Every page of a search from its first, up to `max` pages. */
async function allPages(first: SearchEnvelope, max = 1000): Promise<string[]> {
  const seen = ids(first);
  let cursor = first.next_cursor;
  for (let n = 1; cursor; n++) {
    expect(n).toBeLessThan(max);
    const next = await engine.search.run(caller, { cursor });
    seen.push(...ids(next));
    cursor = next.next_cursor;
  }
  return seen;
}

const BIG = LIMITS.rankingDepth + 500;

beforeAll(async () => {
  dir = tempDir('svc-newest-');
  engine = await Engine.open(dir.path);
  await engine.init('newest', 'admin@localhost');
  caller = engine.localCaller();
  for (const d of ['big', 'small', 'other']) await engine.datasets.create(caller, { dataset_id: d, semantic: false });
  await ingest('big', rows('b', 0, BIG));
  await ingest('small', rows('s', 0, 30));
  await ingest('other', rows('o', 0, 5));
});

afterAll(async () => {
  await engine.close();
  dir.remove();
});

describe('newest first without text', () => {
  it('reads the keys of its page only, and each next page only its own', async () => {
    const { out: poll, keys, records } = await reads(() => engine.search.run(caller, { datasets: ['big'], limit: 1 }));
    expect(ids(poll)).toEqual([`b-${BIG - 1}`]);
    expect(poll.total).toEqual({ relation: 'eq', value: BIG });
    expect(keys).toBe(1);
    expect(records).toBe(1);

    const first = await engine.search.run(caller, { datasets: ['big'], limit: 50 });
    const { out: second, keys: more } = await reads(() => engine.search.run(caller, { cursor: first.next_cursor! }));
    expect(ids(second)).toEqual(rows('b', BIG - 100, 50).map((r) => r.id).reverse());
    expect(more).toBe(50);
  });

  it('pages through the newest rankingDepth records, then says the ranking stops', async () => {
    const first = await engine.search.run(caller, { datasets: ['big'], limit: 1000 });
    expect(first.warnings?.[0]).toMatchObject({ code: 'ranking_truncated' });
    const all = await allPages(first);
    expect(all).toEqual(rows('b', BIG - LIMITS.rankingDepth, LIMITS.rankingDepth).map((r) => r.id).reverse());
  });

  it('ranks several datasets one after another, in the order the request names them', async () => {
    const first = await engine.search.run(caller, { datasets: ['other', 'small'], limit: 4 });
    expect(first.total.value).toBe(35);
    const expected = [...rows('o', 0, 5).reverse(), ...rows('s', 0, 30).reverse()].map((r) => r.id);
    expect(await allPages(first)).toEqual(expected);
  });

  it('a time range on a dataset in time order is a run of seqs, read the same way', async () => {
    const time = { field: 'time', gte: new Date(START + 100 * 1000).toISOString(), lt: new Date(START + 200 * 1000).toISOString() };
    const { out, keys, records } = await reads(() => engine.search.run(caller, { datasets: ['big'], limit: 10, time }));
    expect(out.total.value).toBe(100);
    expect(ids(out)).toEqual(rows('b', 190, 10).map((r) => r.id).reverse());
    expect(keys).toBeLessThan(200); // the page, and the count of the run
    expect(records).toBeLessThan(50); // the page, and the binary search for the run's ends
    expect(await allPages(out)).toEqual(rows('b', 100, 100).map((r) => r.id).reverse());
  });

  it('sorted newest by time on one dataset in time order, it reads the same way', async () => {
    const { out, keys, records } = await reads(() => engine.search.run(caller, { datasets: ['big'], limit: 10, sort: [{ field: 'time' }] }));
    expect(ids(out)).toEqual(rows('b', BIG - 10, 10).map((r) => r.id).reverse());
    expect(keys).toBe(10);
    expect(records).toBe(10);
  });

  it('goes on below its last page when records go in between, and ends where they do', async () => {
    const first = await engine.search.run(caller, { datasets: ['small'], limit: 10 });
    expect(ids(first)).toEqual(rows('s', 20, 10).map((r) => r.id).reverse());
    // the 15 oldest records replaced: the old ones are gone, the new ones come after the search
    await ingest('small', rows('s', 0, 15, ' again'));
    const rest = await allPages(first);
    expect(rest).toEqual(rows('s', 15, 15).map((r) => r.id).reverse());
    const now = await engine.search.run(caller, { datasets: ['small'], limit: 100 });
    expect(now.total.value).toBe(30);
    expect(ids(now)).toEqual([...rows('s', 0, 15).reverse(), ...rows('s', 15, 15).reverse()].map((r) => r.id));
  });

  it('an export of the search holds what its pages would', async () => {
    const first = await engine.search.run(caller, { datasets: ['other', 'small'], limit: 2 });
    const found: string[] = [];
    for await (const batch of engine.search.all(caller, { searchId: first.search_id }, 1000)) found.push(...batch.map((f) => f.record.id));
    expect(found).toEqual(await allPages(first));
  });
});
