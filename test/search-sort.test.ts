import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../src/api/limits.js';
import { SearchRequest, type SearchEnvelope } from '../src/api/search.js';
import { validate } from '../src/api/validate.js';
import { Invalid } from '../src/engine/errors.js';
import { Engine, type Caller } from '../src/engine/index.js';
import { Embedders } from '../src/engine/vector/embedders/embedders.js';
import { useApp } from './helpers/app.js';
import { DATA, svc, tempDir } from './helpers/cli.js';
import { fakeEmbeddings } from './helpers/fakeEmbeddings.js';
import { csvCells } from './helpers/csv.js';


/** An instant written at a zone offset of `hours`: the same instant, another spelling (lexical order is not instant order). */
function atOffset(ms: number, hours: number): string {
  const local = new Date(ms + hours * 3_600_000).toISOString().slice(0, 23);
  return `${local}${hours < 0 ? '-' : '+'}${String(Math.abs(hours)).padStart(2, '0')}:00`;
}

/**
 * OpenStack_2k as NDJSON records: time from Date+Time; Pid a number; Level and Component strings;
 * status a number and len a numeric string when the message has them (else missing); seen_at the
 * record's time at a varying zone offset, missing on every fourth record.
 */
const [header, ...rows] = readFileSync(join(DATA, 'loghub/OpenStack/OpenStack_2k.log_structured.csv'), 'utf8')
  .split(/\r?\n/)
  .filter((l) => l !== '');
const names = csvCells(header);
const records = rows.map((line, i) => {
  const row = Object.fromEntries(csvCells(line).map((v, k) => [names[k], v]));
  const time = `${row.Date}T${row.Time}Z`;
  const rec: Record<string, unknown> = { id: `os-${row.LineId}`, time, message: row.Content, Level: row.Level, Component: row.Component, Pid: Number(row.Pid) };
  const status = /status: (\d+)/.exec(row.Content);
  if (status) rec.status = Number(status[1]);
  const len = /len: (\d+)/.exec(row.Content);
  if (len) rec.len = len[1];
  if (i % 4 !== 0) rec.seen_at = atOffset(Date.parse(time), (i % 7) - 3);
  return rec;
});
const NDJSON = records.map((r) => JSON.stringify(r)).join('\n') + '\n';

type Rec = (typeof records)[number];
type Key = { field: string; order: 'asc' | 'desc'; value: (r: Rec) => number | string | undefined };
const numeric = (f: string) => (r: Rec) => (r[f] === undefined ? undefined : Number(r[f]));
const instant = (f: string) => (r: Rec) => (r[f] === undefined ? undefined : Date.parse(r[f] as string));
const text = (f: string) => (r: Rec) => (r[f] as string | undefined)?.toLowerCase();

/** The expected order, computed here on its own: key by key, missing last, then newest first (the later line). */
function expected(keys: Key[], of: Rec[] = records): string[] {
  const line = new Map(records.map((r, i) => [r, i]));
  return [...of]
    .sort((a, b) => {
      for (const k of keys) {
        const va = k.value(a);
        const vb = k.value(b);
        if (va === vb) continue;
        if (va === undefined) return 1;
        if (vb === undefined) return -1;
        const c = va < vb ? -1 : 1;
        return k.order === 'asc' ? c : -c;
      }
      return line.get(b)! - line.get(a)!;
    })
    .map((r) => r.id as string);
}

describe('sorted searches over OpenStack_2k', () => {
  const dir = tempDir('svc-sort-');
  let engine: Engine;
  let caller: Caller;

  const search = async (req: SearchRequest) => engine.search.run(caller, validate(SearchRequest, req));
  /** Every record of a search, page by page through its cursors. */
  const everyRecord = async (req: SearchRequest): Promise<SearchEnvelope['records']> => {
    let page: SearchEnvelope = await search(req);
    const out = [...page.records];
    while (page.next_cursor) {
      page = await search({ cursor: page.next_cursor });
      out.push(...page.records);
    }
    return out;
  };
  const every = async (req: SearchRequest): Promise<string[]> => (await everyRecord(req)).map((r) => r.id);
  const sorted = (sort: SearchRequest['sort'], extra: SearchRequest = {}) => every({ datasets: ['os'], limit: 1000, ...extra, sort });

  beforeAll(async () => {
    engine = await Engine.open(dir.path);
    await engine.init('sort', 'admin@localhost');
    caller = engine.localCaller();
    await engine.datasets.create(caller, { dataset_id: 'os' });
    const run = await engine.ingest.submit(caller, Readable.from([Buffer.from(NDJSON)]), { dataset_id: 'os', format: 'ndjson' });
    expect((await engine.ingest.wait(caller, run.ingest_run_id)).status).toBe('ready');
  }, 120_000);
  afterAll(async () => {
    await engine?.close();
    dir.remove();
  });

  it('without a sort the order is unchanged: newest first without text, best first with it', async () => {
    const all = await every({ datasets: ['os'], limit: 1000 });
    expect(all).toEqual(records.map((r) => r.id).reverse());
    const scored = await search({ datasets: ['os'], text: 'instance claim', limit: 1000 });
    const scores = scored.records.map((r) => r.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    // score descending is the default spelled out; score alone without text is no order of its own
    expect((await search({ datasets: ['os'], text: 'instance claim', limit: 1000, sort: [{ field: 'score', order: 'desc' }] })).records.map((r) => r.id)).toEqual(scored.records.map((r) => r.id));
    expect(await sorted([{ field: '_score', order: 'asc' }])).toEqual(all);
  });

  it('time sorts by instant, both ways', async () => {
    expect(await sorted([{ field: 'time', order: 'asc' }])).toEqual(expected([{ field: 'time', order: 'asc', value: instant('time') }]));
    expect(await sorted([{ field: 'time' }])).toEqual(expected([{ field: 'time', order: 'desc', value: instant('time') }]));
  });

  it('a date field sorts as instants whatever its zone offset, records without it last', async () => {
    const asc = await sorted([{ field: 'seen_at', order: 'asc' }]);
    expect(asc).toEqual(expected([{ field: 'seen_at', order: 'asc', value: instant('seen_at') }]));
    expect(await sorted([{ field: 'seen_at', order: 'desc' }])).toEqual(expected([{ field: 'seen_at', order: 'desc', value: instant('seen_at') }]));
    expect(asc.slice(-500).every((id) => records.find((r) => r.id === id)!.seen_at === undefined)).toBe(true);
  });

  it('numbers sort numerically, numeric strings too, records without the field last in either order', async () => {
    for (const order of ['asc', 'desc'] as const) {
      expect(await sorted([{ field: 'Pid', order }])).toEqual(expected([{ field: 'Pid', order, value: numeric('Pid') }]));
      const status = await sorted([{ field: 'status', order }]);
      expect(status).toEqual(expected([{ field: 'status', order, value: numeric('status') }]));
      expect(records.find((r) => r.id === status.at(-1))!.status).toBeUndefined();
      expect(await sorted([{ field: 'metadata.len', order }])).toEqual(expected([{ field: 'len', order, value: numeric('len') }]));
    }
  });

  it('strings sort lexically; id is the record id', async () => {
    for (const order of ['asc', 'desc'] as const) {
      expect(await sorted([{ field: 'Component', order }])).toEqual(expected([{ field: 'Component', order, value: text('Component') }]));
    }
    const byId = await sorted([{ field: 'id' }]);
    expect(byId.slice(0, 4)).toEqual(['os-1', 'os-10', 'os-100', 'os-1000']);
    expect(byId).toEqual(expected([{ field: 'id', order: 'asc', value: (r) => r.id as string }]));
  });

  it('ties break by the next key, then by the default order', async () => {
    const keys: Key[] = [
      { field: 'Level', order: 'desc', value: text('Level') },
      { field: 'status', order: 'asc', value: numeric('status') },
      { field: 'time', order: 'asc', value: instant('time') },
    ];
    expect(await sorted(keys.map(({ field, order }) => ({ field, order })))).toEqual(expected(keys));
    // a text search: its matches by Pid, ties best first (by score)
    const ranked = await everyRecord({ datasets: ['os'], text: 'instance', limit: 1000 });
    const score = new Map(ranked.map((r) => [r.id, r.score]));
    const ids = await every({ datasets: ['os'], text: 'instance', limit: 1000, sort: [{ field: 'Pid', order: 'asc' }] });
    expect(ids.length).toBeGreaterThan(100);
    const pid = (id: string) => records.find((r) => r.id === id)!.Pid as number;
    expect(new Set(ids)).toEqual(new Set(score.keys()));
    for (let i = 1; i < ids.length; i++) {
      const [a, b] = [ids[i - 1], ids[i]];
      expect(pid(a) < pid(b) || (pid(a) === pid(b) && score.get(a)! >= score.get(b)!), `${a} before ${b}`).toBe(true);
    }
    // created_at: the record's own (when it was ingested); its ties newest first
    const line = new Map(records.map((r, i) => [r.id, i]));
    const created = await everyRecord({ datasets: ['os'], limit: 1000, sort: [{ field: 'created_at', order: 'asc' }] });
    expect(created).toHaveLength(2000);
    for (let i = 1; i < created.length; i++) {
      const [a, b] = [created[i - 1], created[i]];
      expect(a.created_at < b.created_at || (a.created_at === b.created_at && line.get(a.id)! > line.get(b.id)!)).toBe(true);
    }
  });

  it('paging through a sorted search with cursors gives the order of one big page, also when the search runs again', async () => {
    const req: SearchRequest = { datasets: ['os'], where: [{ field: 'Level', op: 'ne', value: 'INFO' }, { field: 'Pid', op: 'gt', value: 2000 }], sort: [{ field: 'Component' }, { field: 'time', order: 'desc' }] };
    const big = (await search({ ...req, limit: 1000 })).records.map((r) => r.id);
    expect(big.length).toBeGreaterThan(20);
    expect(await every({ ...req, limit: 7 })).toEqual(big);
    // the next page from a cursor whose handle is gone: the frozen search ranks the same way again
    const first = await search({ ...req, limit: 5 });
    await engine.close();
    engine = await Engine.open(dir.path);
    caller = engine.localCaller();
    const second = await search({ cursor: first.next_cursor });
    expect(second.records.map((r) => r.id)).toEqual(big.slice(5, 10));
  });

  it('a view or export reads a sorted search in its order (Search.all)', async () => {
    const req: SearchRequest = { datasets: ['os'], sort: [{ field: 'status', order: 'desc' }, { field: 'id' }] };
    const out: string[] = [];
    for await (const batch of engine.search.all(caller, engine.search.freeze(caller, req), 10_000)) out.push(...batch.map((f) => f.record.id));
    expect(out).toEqual(expected([{ field: 'status', order: 'desc', value: numeric('status') }, { field: 'id', order: 'asc', value: (r) => r.id as string }]));
    expect(engine.search.ranks(req)).toBe(true);
    expect(engine.search.ranks({ datasets: ['os'], sort: [{ field: 'score' }] })).toBe(false); // no order of its own: it streams
  });

  it('a bad field or order, or too many keys, is a 422 naming it', async () => {
    const refused = async (req: SearchRequest) => {
      const err = await search(req).then(() => null, (e: unknown) => e);
      expect(err, JSON.stringify(req)).toBeInstanceOf(Invalid);
      return (err as Invalid).issues[0].loc;
    };
    expect(await refused({ sort: [{ field: 'time', order: 'up' as 'asc' }] })).toEqual(['body', 'sort', 0, 'order']);
    expect(await refused({ sort: [{ field: '' }] })).toEqual(['body', 'sort', 0, 'field']);
    expect(await refused({ sort: [{ field: 'time' }, { field: 'a..b' }] })).toEqual(['body', 'sort', 1, 'field']);
    expect(await refused({ sort: [{ field: 'metadata' }] })).toEqual(['body', 'sort', 0, 'field']);
    expect(await refused({ sort: [{ field: 'score' }, { field: '_score', order: 'asc' }] })).toEqual(['body', 'sort', 1, 'field']);
    expect(await refused({ sort: [{ field: 'time', direction: 'asc' } as never] })).toEqual(['body', 'sort', 0, 'direction']);
    expect(await refused({ sort: Array.from({ length: LIMITS.sortKeys + 1 }, (_, i) => ({ field: `f${i}` })) })).toEqual(['body', 'sort']);
  });
});

describe('sorted semantic and hybrid searches', () => {
  const dir = tempDir('svc-sort-semantic-');
  let fake: Awaited<ReturnType<typeof fakeEmbeddings>>;
  let engine: Engine;
  let caller: Caller;
  const rows = Array.from({ length: 60 }, (_, i) => ({ id: `e${i}`, body: `${i % 2 ? 'kernel disk' : 'network link'} report ${i} ${'slow '.repeat(i % 5)}`, n: (i * 7) % 13, ...(i % 6 ? {} : { n: undefined }) }));

  beforeAll(async () => {
    fake = await fakeEmbeddings();
    engine = await Engine.open(dir.path, {
      semantic: { embedders: new Embedders({ provider: 'openai', url: fake.url, model: 'fake' }, { batch: 16, documentTimeoutMs: 2000, queryTimeoutMs: 2000, documentAttempts: 2, queryAttempts: 1, backoffMs: 5 }), retryBaseMs: 100 },
    });
    await engine.init('sem', 'admin@localhost');
    caller = engine.localCaller();
    await engine.datasets.create(caller, { dataset_id: 'ev' });
    const body = rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
    const run = await engine.ingest.submit(caller, Readable.from([Buffer.from(body)]), { dataset_id: 'ev', format: 'ndjson' });
    expect((await engine.ingest.wait(caller, run.ingest_run_id)).status).toBe('ready');
  }, 120_000);
  afterAll(async () => {
    await engine?.close();
    await fake?.close();
    dir.remove();
  });

  it('the mode picks the records by relevance, the sort orders them (ties keep their rank)', async () => {
    for (const mode of ['semantic', 'hybrid'] as const) {
      const req: SearchRequest = { datasets: ['ev'], text: 'kernel disk slow', mode, limit: 100 };
      const ranked = await engine.search.run(caller, req);
      expect(ranked.mode).toBe(mode);
      expect(ranked.records.length).toBeGreaterThan(5);
      const rank = new Map(ranked.records.map((r, i) => [r.id, i]));
      const sorted = await engine.search.run(caller, { ...req, sort: [{ field: 'n', order: 'desc' }] });
      expect(sorted.total).toEqual(ranked.total);
      const ids = sorted.records.map((r) => r.id);
      expect(new Set(ids)).toEqual(new Set(rank.keys()));
      const n = (id: string) => rows.find((r) => r.id === id)!.n;
      for (let i = 1; i < ids.length; i++) {
        const [a, b] = [ids[i - 1], ids[i]];
        const ok = n(b) === undefined ? n(a) !== undefined || rank.get(a)! < rank.get(b)! : n(a) !== undefined && (n(a)! > n(b)! || (n(a) === n(b) && rank.get(a)! < rank.get(b)!));
        expect(ok, `${mode}: ${a} before ${b}`).toBe(true);
      }
      // a score ascending sort: the same records, least relevant first
      const worst = await engine.search.run(caller, { ...req, sort: [{ field: 'score', order: 'asc' }] });
      expect(new Set(worst.records.map((r) => r.id))).toEqual(new Set(rank.keys()));
      const scores = worst.records.map((r) => r.score);
      expect(scores).toEqual([...scores].sort((a, b) => a - b));
    }
  });
});

describe('POST /v1/search with a sort', () => {
  const { http } = useApp();

  it('answers 422 naming a bad order, field or too many keys; a good sort is a 200', async () => {
    expect((await http.post('/v1/admin/datasets', { dataset_id: 'empty' })).status).toBe(201);
    const loc = async (sort: unknown) => {
      const res = await http.post('/v1/search', { datasets: ['empty'], sort });
      expect(res.status, JSON.stringify(sort)).toBe(422);
      return res.body.detail[0].loc;
    };
    expect(await loc([{ field: 'time', order: 'newest' }])).toEqual(['body', 'sort', 0, 'order']);
    expect(await loc([{ field: 'time' }, { field: '.level' }])).toEqual(['body', 'sort', 1, 'field']);
    expect(await loc(Array.from({ length: LIMITS.sortKeys + 1 }, (_, i) => ({ field: `f${i}` })))).toEqual(['body', 'sort']);
    const ok = await http.post('/v1/search', { datasets: ['empty'], sort: [{ field: 'status', order: 'desc' }, { field: '_score' }] });
    expect(ok.status).toBe(200);
    expect(ok.body.records).toEqual([]);
  });
});

describe('svc search --sort (local mode)', () => {
  const dir = tempDir('svc-sort-cli-');
  const dataDir = join(dir.path, 'data');
  const run = (args: string[]) => svc(args, { dataDir });
  const ids = (out: string) => out.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l).id);

  beforeAll(() => {
    const file = join(dir.path, 'openstack.ndjson');
    writeFileSync(file, NDJSON);
    expect(run(['init', '--yes']).status).toBe(0);
    expect(run(['datasets', 'create', 'os', '--no-semantic']).status).toBe(0);
    const r = run(['ingest', 'os', file, '--wait']);
    expect(r.status, r.stderr).toBe(0);
  }, 120_000);
  afterAll(() => dir.remove());

  it('takes field:order, repeated or comma-separated, with each field its default order', () => {
    const keys: Key[] = [
      { field: 'status', order: 'desc', value: numeric('status') },
      { field: 'time', order: 'desc', value: instant('time') },
    ];
    const want = expected(keys).slice(0, 50);
    const comma = run(['search', '--dataset', 'os', '--sort', 'status:desc,time', '--limit', '50', '--output', 'ndjson']);
    expect(comma.status, comma.stderr).toBe(0);
    expect(ids(comma.stdout)).toEqual(want);
    const repeated = run(['search', '--dataset', 'os', '--sort', 'status:DESC', '--sort', 'time:desc', '--limit', '50', '--output', 'ndjson']);
    expect(ids(repeated.stdout)).toEqual(want);
    const pid = run(['search', '--dataset', 'os', '--sort', 'Pid', '--all', '--limit', '300', '--output', 'ndjson']);
    expect(ids(pid.stdout)).toEqual(expected([{ field: 'Pid', order: 'asc', value: numeric('Pid') }]));
    const plain = run(['search', '--dataset', 'os', '--limit', '5', '--output', 'ndjson']);
    expect(ids(plain.stdout)).toEqual(records.map((r) => r.id).reverse().slice(0, 5));
  });

  it('refuses a bad order or field with exit 2', () => {
    const order = run(['search', '--dataset', 'os', '--sort', 'time:sideways']);
    expect(order.status).toBe(2);
    expect(order.stderr).toContain("invalid --sort 'time:sideways'");
    const field = run(['search', '--dataset', 'os', '--sort', 'a..b:asc']);
    expect(field.status).toBe(2);
    expect(field.stderr).toContain('empty segment');
  });
});
