/**
 * A dataset whose records arrive in time order (each record's time at or after the one before it)
 * answers "newest first by time" from the store's own order: it reads only as many records as the
 * ranking holds, not every record. One record out of order, or without a time, and the dataset goes
 * the long way for good. Either way the answer is the same list: time descending, ties newest first.
 */
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../src/api/limits.js';
import type { Caller } from '../src/engine/auth/caller.js';
import { Engine } from '../src/engine/index.js';
import { newestMatches } from '../src/engine/search/timeOrder.js';
import type { Store } from '../src/engine/store/db.js';
import { tempDir } from './helpers/cli.js';

let dir: ReturnType<typeof tempDir>;
let engine: Engine;
let caller: Caller;

const START = Date.parse('2026-03-01T00:00:00Z');
/** Two records a second, so that times tie in pairs. */
const events = (from: number, n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ id: `${tag}-${from + i}`, time: new Date(START + Math.floor((from + i) / 2) * 1000).toISOString(), msg: `event ${from + i}` }));

async function ingest(d: string, rows: object[]) {
  const body = rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
  const run = await engine.ingest.submit(caller, Readable.from([Buffer.from(body)]), { dataset_id: d, format: 'ndjson', filename: `${d}.ndjson` });
  expect((await engine.ingest.wait(caller, run.ingest_run_id)).status).toBe('ready');
}

/** What a sort by time newest first must answer: by time descending, then dataset order, then newest committed first. */
function expected(datasets: { id: string; rows: { id: string; time: string | null }[] }[]): string[] {
  const all = datasets.flatMap((d, ds) => d.rows.map((r, seq) => ({ ...r, ds, seq })));
  const live = new Map(all.map((r) => [`${r.ds}/${r.id}`, r])); // a later record with the same id replaced the earlier one
  return [...live.values()]
    .sort((a, b) => Date.parse(b.time!) - Date.parse(a.time!) || a.ds - b.ds || b.seq - a.seq)
    .map((r) => r.id);
}

/**
 * How records were read while `fn` ran: the `limit` of every range read of records (undefined: no
 * limit, a scan), the lowest seq each scan could reach, and how many were read one by one.
 */
async function rangeLimits<T>(fn: () => Promise<T>): Promise<{ out: T; limits: (number | undefined)[]; scanLows: number[]; gets: number }> {
  const records = (engine as unknown as { store: Store }).store.records;
  const [getRange, get] = [records.getRange, records.get];
  const limits: (number | undefined)[] = [];
  const scanLows: number[] = [];
  let gets = 0;
  records.getRange = function (this: typeof records, options) {
    // keys alone (getKeys, counts) read no record
    if ((options as { values?: boolean } | undefined)?.values !== false) {
      limits.push(options?.limit);
      const low = (options?.reverse ? options.end : options?.start) as (string | number)[] | undefined;
      if (options?.limit === undefined) scanLows.push(Number(low?.[2] ?? 0));
    }
    return getRange.call(this, options);
  } as typeof getRange;
  records.get = function (this: typeof records, ...args: Parameters<typeof get>) {
    gets++;
    return get.apply(this, args);
  } as typeof get;
  try {
    return { out: await fn(), limits, scanLows, gets };
  } finally {
    Object.assign(records, { getRange, get });
  }
}

const byTime = (datasets: string[], limit: number) => engine.search.run(caller, { datasets, limit, sort: [{ field: 'time' }] });

const inOrder = events(0, 6000, 'a');
// more matches than a ranking holds, in time order; every third pair of records says "event" twice (a higher score)
const long = events(0, LIMITS.rankingDepth + 2000, 'c').map((r, i) => (Math.floor(i / 2) % 3 === 0 ? { ...r, msg: `${r.msg} event` } : r));
// more records than a ranking holds, one of the first of them a day ahead: newest by time, and oldest by seq
const outOfOrder = [...events(0, 100, 'b'), { id: 'b-ahead', time: new Date(START + 86_400_000).toISOString(), msg: 'a day ahead' }, ...events(100, LIMITS.rankingDepth + 2000, 'b')];

beforeAll(async () => {
  dir = tempDir('svc-sort-time-');
  engine = await Engine.open(dir.path);
  await engine.init('sorted', 'admin@localhost');
  caller = engine.localCaller();
  for (const d of ['ordered', 'shuffled', 'long']) await engine.datasets.create(caller, { dataset_id: d, semantic: false });
  await ingest('ordered', inOrder.slice(0, 4000)); // two runs: the order holds across them
  await ingest('ordered', inOrder.slice(4000));
  await ingest('shuffled', outOfOrder);
  await ingest('long', long);
});

afterAll(async () => {
  await engine.close();
  dir.remove();
});

describe('sort by time, newest first', () => {
  it('knows which datasets have their records in time order', () => {
    const t = caller.tenant_id;
    expect(engine.datasets.state(t, 'ordered')).toMatchObject({ time_ordered: true, last_time: Date.parse(inOrder.at(-1)!.time) });
    expect(engine.datasets.state(t, 'shuffled').time_ordered).toBe(false);
  });

  it('reads only the records of its page on a dataset in time order, and answers as the long way does', async () => {
    const { out, limits, gets } = await rangeLimits(() => byTime(['ordered'], 25));
    expect(limits).toEqual([]);
    expect(gets).toBe(25);
    expect(out.records.map((r) => r.id)).toEqual(expected([{ id: 'ordered', rows: inOrder }]).slice(0, 25));
    expect(out.total).toEqual({ relation: 'eq', value: 6000 });
    const { out: next, gets: more } = await rangeLimits(() => engine.search.run(caller, { cursor: out.next_cursor!, limit: 25 }));
    expect(next.records.map((r) => r.id)).toEqual(expected([{ id: 'ordered', rows: inOrder }]).slice(25, 50));
    expect(more).toBe(25);
  });

  it('reads every record of a dataset out of order, with the same kind of answer', async () => {
    const { out, limits } = await rangeLimits(() => byTime(['shuffled'], 25));
    expect(limits).toContain(undefined);
    expect(out.records[0].id).toBe('b-ahead');
    expect(out.records.map((r) => r.id)).toEqual(expected([{ id: 'shuffled', rows: outOfOrder }]).slice(0, 25));
  });

  it('orders several datasets by time together', async () => {
    const both = await byTime(['ordered', 'shuffled'], 40);
    expect(both.records.map((r) => r.id)).toEqual(expected([{ id: 'ordered', rows: inOrder }, { id: 'shuffled', rows: outOfOrder }]).slice(0, 40));
    expect(both.total.value).toBe(inOrder.length + outOfOrder.length);
  });

  it('ranks a text search by time from the newest matches of a dataset in time order, reading only theirs', async () => {
    const { out, gets, limits } = await rangeLimits(() => engine.search.run(caller, { datasets: ['long'], text: 'event', limit: 25, sort: [{ field: 'time' }] }));
    expect(out.total).toEqual({ relation: 'eq', value: long.length });
    // times tie only within a pair, and a pair's records score alike: newest by time is newest by seq
    expect(out.records.map((r) => r.id)).toEqual(long.slice(-25).reverse().map((r) => r.id));
    expect(limits.every((limit) => limit === 1)).toBe(true); // no scan: a binary search's probes only
    expect(gets).toBeGreaterThanOrEqual(LIMITS.rankingDepth);
    expect(gets).toBeLessThanOrEqual(LIMITS.rankingDepth + 1 + 25 + 40); // the newest, the one tie below them, the page, the tie's binary search
    const next = await engine.search.run(caller, { cursor: out.next_cursor!, limit: 25 });
    expect(next.records.map((r) => r.id)).toEqual(long.slice(-50, -25).reverse().map((r) => r.id));
    // with the other dataset, in one order by time
    const both = await engine.search.run(caller, { datasets: ['ordered', 'long'], text: 'event', limit: 40, sort: [{ field: 'time' }] });
    expect(both.total.value).toBe(inOrder.length + long.length);
    const byTimeThenSeq = [...inOrder.map((r, seq) => ({ ...r, ds: 0, seq })), ...long.map((r, seq) => ({ ...r, ds: 1, seq }))]
      .sort((a, b) => Date.parse(b.time) - Date.parse(a.time) || a.ds - b.ds || b.seq - a.seq);
    expect(both.records.map((r) => r.id)).toEqual(byTimeThenSeq.slice(0, 40).map((r) => r.id));
  });

  it('takes the newest matches and every match tied in time with the oldest of them', async () => {
    const store = (engine as unknown as { store: Store }).store;
    const seqs = Float64Array.from({ length: 20 }, (_, i) => 20 - i); // the first 20 records: times tie in pairs (1 and 2, 3 and 4, …)
    const found = { seqs, scores: seqs.map((s) => s / 100) };
    const turns = { due: () => false, pause: async () => {} };
    const state = engine.datasets.state(caller.tenant_id, 'ordered');
    const take = async (run: { from: number; to: number }, depth: number) => {
      const got = await newestMatches(store, caller.tenant_id, 'ordered', found, run, state.seq, depth, turns);
      return { seqs: got.matches.map((m) => m.seq).sort((a, b) => b - a), count: got.count, scored: got.matches.every((m) => m.score === m.seq / 100 && m.rec.seq === m.seq) };
    };
    expect(await take({ from: 0, to: 21 }, 5)).toEqual({ seqs: [20, 19, 18, 17, 16, 15], count: 20, scored: true }); // 15 shares 16's time
    expect(await take({ from: 0, to: 21 }, 4)).toEqual({ seqs: [20, 19, 18, 17], count: 20, scored: true }); // 17's tie is 18, already in
    expect(await take({ from: 8, to: 15 }, 2)).toEqual({ seqs: [14, 13], count: 7, scored: true });
    expect(await take({ from: 8, to: 15 }, 3)).toEqual({ seqs: [14, 13, 12, 11], count: 7, scored: true });
    expect(await take({ from: 12, to: 15 }, 3)).toEqual({ seqs: [14, 13, 12], count: 3, scored: true }); // everything: no tie to look for
  });

  it('answers a time range on a dataset in time order from a run of seqs, deleted records left out', async () => {
    const t = caller.tenant_id;
    for (const id of ['a-1001', 'a-1500', 'a-2998']) await engine.jobs.settled(t, (await engine.deletion.record(caller, 'ordered', id)).job_id);
    const live = inOrder.filter((r) => !['a-1001', 'a-1500', 'a-2998'].includes(r.id));
    const within = (gte: number, lt: number) => live.filter((r) => Date.parse(r.time) >= gte && Date.parse(r.time) < lt);
    const [gte, lt] = [START + 500_000, START + 1_500_000]; // events 1000 … 2999
    for (const sort of [undefined, [{ field: 'time' }]]) {
      const { out, limits } = await rangeLimits(() => engine.search.run(caller, { datasets: ['ordered'], limit: 30, time: { gte: new Date(gte).toISOString(), lt: new Date(lt).toISOString() }, sort }));
      for (const limit of limits) expect(limit).toBeLessThanOrEqual(LIMITS.rankingDepth);
      expect(out.total).toEqual({ relation: 'eq', value: within(gte, lt).length });
      expect(out.records.map((r) => r.id)).toEqual(within(gte, lt).reverse().slice(0, 30).map((r) => r.id));
    }
    expect(engine.datasets.state(t, 'ordered').time_ordered).toBe(true); // deletions keep the order
    // bounds before, between and after the records; `last` from now, which is after all of them
    for (const time of [{ lt: new Date(START).toISOString() }, { gte: new Date(START + 10_000_000).toISOString() }, { gte: new Date(START + 1_200).toISOString(), lt: new Date(START + 1_800).toISOString() }]) {
      expect((await engine.search.run(caller, { datasets: ['ordered'], time })).total.value).toBe(0);
    }
    // with other tests too, only the run of seqs is read: a scan (aggregations, where) starts inside it, a text search reads only matches in it
    const range = { gte: new Date(gte).toISOString(), lt: new Date(lt).toISOString() };
    const agg = await rangeLimits(() => engine.search.run(caller, { datasets: ['ordered'], limit: 30, time: range, where: [{ field: 'msg', op: 'contains', value: 'event' }], aggregations: [{ name: 'n', type: 'count' }] }));
    expect(agg.scanLows.length).toBeGreaterThan(0);
    for (const low of agg.scanLows) expect(low).toBeGreaterThanOrEqual(1000); // the range starts at seq 1001
    expect(agg.out.total.value).toBe(within(gte, lt).length);
    expect(agg.out.records.map((r) => r.id)).toEqual(within(gte, lt).reverse().slice(0, 30).map((r) => r.id));
    const text = await rangeLimits(() => engine.search.run(caller, { datasets: ['ordered'], text: 'event', limit: 30, time: range }));
    expect(text.out.total.value).toBe(within(gte, lt).length);
    expect(text.gets).toBeGreaterThan(0);
    expect(text.gets).toBeLessThanOrEqual(within(gte, lt).length + 30); // each match in the range, then the page: not all 6,000
    const everything = await engine.search.run(caller, { datasets: ['ordered'], limit: 5, time: { last: '5000d' } });
    expect(everything.total.value).toBe(live.length);
    expect(everything.records.map((r) => r.id)).toEqual(live.slice(-5).reverse().map((r) => r.id));
    // the same range on the dataset out of order reads every record, and agrees with a test of each
    const { out, limits } = await rangeLimits(() => engine.search.run(caller, { datasets: ['shuffled'], limit: 30, time: { gte: new Date(gte).toISOString(), lt: new Date(lt).toISOString() } }));
    expect(limits).toContain(undefined);
    const expectedShuffled = outOfOrder.filter((r) => Date.parse(r.time) >= gte && Date.parse(r.time) < lt);
    expect(out.total.value).toBe(expectedShuffled.length);
    expect(out.records.map((r) => r.id)).toEqual(expectedShuffled.reverse().slice(0, 30).map((r) => r.id));
  });

  it('stops taking the short way once a record arrives out of order (a replaced id, here)', async () => {
    const early = { id: 'a-5999', time: new Date(START - 1000).toISOString(), msg: 'corrected, and early' };
    await ingest('ordered', [early]);
    expect(engine.datasets.state(caller.tenant_id, 'ordered').time_ordered).toBe(false);
    const { out, limits } = await rangeLimits(() => byTime(['ordered'], 10));
    expect(limits).toContain(undefined);
    const kept = inOrder.filter((r) => !['a-1001', 'a-1500', 'a-2998'].includes(r.id));
    expect(out.records.map((r) => r.id)).toEqual(expected([{ id: 'ordered', rows: [...kept, early] }]).slice(0, 10));
  });
});
