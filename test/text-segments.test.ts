import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluate } from '../bench/lib/metrics.js';
import { ingestScifact, qrels, queries } from '../bench/lib/scifact.js';
import { Engine } from '../src/engine/index.js';
import { openStore, type Store } from '../src/engine/store/db.js';
import { keys } from '../src/engine/store/keys.js';
import { TextIndex } from '../src/engine/text/textIndex.js';
import type { SearchConfig } from '../src/api/sources.js';

const TOP = 100;
/** 5,183 records in segments of 520: nine sealed segments and the in-memory one */
const SEGMENT = 520;

describe('text index segments (SciFact)', () => {
  let dir: string;
  let engine: Engine;
  let store: Store;
  let tenant: string;
  let config: SearchConfig;
  const indexes: TextIndex[] = [];

  const open = (name: string, segmentRecords = Infinity) => {
    const index = new TextIndex(store, tenant, 'scifact', join(dir, 'indexes-under-test', `${name}.snapshot`), config, segmentRecords).open();
    indexes.push(index);
    return index;
  };
  const search = (index: TextIndex, text: string, top: number | undefined = TOP) => index.search(text, { maxExpansions: 3, deadline: Infinity, top });
  const mergeAll = (index: TextIndex) => {
    while (index.mergeStep(Date.now() + 50));
  };
  const sameRanking = (a: TextIndex, b: TextIndex, texts: string[], top?: number) => {
    for (const text of texts) {
      const x = search(a, text, top);
      const y = search(b, text, top);
      expect([...y.seqs], text).toEqual([...x.seqs]);
      y.scores.forEach((score, i) => expect(Math.abs(score - x.scores[i]), text).toBeLessThan(1e-9));
      expect(y.total).toBe(x.total);
    }
  };
  const ndcg = (index: TextIndex) => {
    const idOf = new Map<number, string>();
    store.env.resetReadTxn();
    for (const { key, value } of store.records.getRange({ start: [tenant, 'scifact', 0], end: [tenant, 'scifact', Number.MAX_SAFE_INTEGER] })) idOf.set((key as unknown[])[2] as number, value.id!);
    const rankings = new Map(queries('test').map((q) => [q.id, [...search(index, q.text).seqs].map((seq) => idOf.get(seq)!)]));
    return evaluate(rankings, qrels('test')).ndcg10;
  };
  const testQueries = () => queries('test').map((q) => q.text);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-segments-'));
    engine = await Engine.open(join(dir, 'data'));
    await engine.init('bench', 'admin@localhost');
    expect((await ingestScifact(engine, { dataset_id: 'scifact', semantic: false })).documents.parsed).toBe(5183);
    tenant = engine.localCaller().tenant_id;
    config = engine.sources.searchConfig(tenant, 'scifact');
    store = openStore(join(dir, 'data'));
  }, 120_000);

  afterAll(async () => {
    for (const index of indexes) index.close();
    await engine?.close({ drain: false });
    rmSync(dir, { recursive: true, force: true });
  });

  it('ranks the same in ten segments as in one: equal order, scores within 1e-9, nDCG@10 unchanged', () => {
    const one = open('one');
    const ten = open('ten', SEGMENT);
    expect(one.segments).toBe(0);
    expect(ten.segments).toBe(9);
    sameRanking(one, ten, testQueries());
    // every match, in seq order, for a few queries; and typos, whose expansions come from every segment
    sameRanking(one, ten, testQueries().slice(0, 20), undefined);
    sameRanking(one, ten, ['microstructral developmnt newborn', 'vitamn d defficiency', 'cancr', 'brain']);
    expect(search(ten, 'microstructral').terms.length).toBeGreaterThan(1);
    expect(ndcg(ten)).toBe(ndcg(one));
  });

  it('merges segments of one size in the background and still ranks the same', () => {
    const one = open('one-b');
    const ten = open('merged', SEGMENT);
    mergeAll(ten);
    expect(ten.segments).toBeLessThan(9);
    const files = readdirSync(join(dir, 'indexes-under-test')).filter((f) => f.startsWith('merged.snapshot.seg-'));
    expect(files).toHaveLength(ten.segments); // the merged-away files are gone
    sameRanking(one, ten, testQueries());
  });

  it('applies removals in sealed segments at search time, drops them at merge, and keeps their tombstones until then', async () => {
    const one = open('one-c');
    const ten = open('removals', 1200); // four sealed segments, which one merge takes whole
    expect(ten.segments).toBe(4);
    const gone = [...search(one, 'vitamin d deficiency', 20).seqs];
    for (const seq of gone) store.meta.put(keys.textTomb(tenant, 'scifact', seq), 1);
    await store.meta.flushed;
    try {
      one.remove(gone);
      ten.remove(gone);
      sameRanking(one, ten, ['vitamin d deficiency', ...testQueries().slice(0, 50)]);
      expect([...search(ten, 'vitamin d deficiency').seqs].some((seq) => gone.includes(seq))).toBe(false);
      // sealed files still hold most of them: those tombstones stay
      expect(ten.snapshot(true).length).toBeLessThan(gone.length);
      mergeAll(ten);
      expect(ten.segments).toBe(1);
      sameRanking(one, ten, ['vitamin d deficiency', ...testQueries().slice(0, 50)]);
      expect(ten.snapshot(true).sort()).toEqual([...gone].sort());
    } finally {
      for (const seq of gone) store.meta.remove(keys.textTomb(tenant, 'scifact', seq));
      await store.meta.flushed;
    }
  });

  it('reopens from its manifest and snapshot; a crash mid-merge leaves the old segments serving', () => {
    const one = open('one-d');
    const ten = open('reopen', SEGMENT);
    ten.snapshot(true);
    // a merge that has written part of its file when the process dies
    expect(ten.mergeStep(Date.now() - 1)).toBe(true);
    const folder = join(dir, 'indexes-under-test');
    expect(readdirSync(folder).some((f) => f.startsWith('reopen.snapshot.seg-') && f.endsWith('.tmp'))).toBe(true);
    const again = open('reopen', SEGMENT);
    expect(again.segments).toBe(9);
    expect(readdirSync(folder).some((f) => f.startsWith('reopen.snapshot.seg-') && f.endsWith('.tmp'))).toBe(false);
    sameRanking(one, again, testQueries());
    mergeAll(again);
    again.snapshot(true);
    const third = open('reopen', SEGMENT);
    expect(third.segments).toBe(again.segments);
    sameRanking(one, third, testQueries());
  });

  it('rebuilds from the store when a segment file is damaged', () => {
    const one = open('one-e');
    const ten = open('damaged', SEGMENT);
    ten.snapshot(true);
    ten.close();
    const folder = join(dir, 'indexes-under-test');
    const file = readdirSync(folder).find((f) => f.startsWith('damaged.snapshot.seg-'))!;
    rmSync(join(folder, file));
    const rebuilt = open('damaged', SEGMENT);
    expect(rebuilt.segments).toBe(9);
    expect(existsSync(join(folder, file))).toBe(true); // sealed anew from the records
    sameRanking(one, rebuilt, testQueries().slice(0, 50));
  });
});
