import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluate, ndcgAt, recallAt } from '../bench/lib/metrics.js';
import { ingestScifact, qrels, queries } from '../bench/lib/scifact.js';
import { Engine } from '../src/engine/index.js';
import { makeTransform } from '../src/engine/ingest/transform.js';

/** The nDCG@10 floor on SciFact test; BM25 as Anserini runs it scores 0.679. */
const NDCG_FLOOR = 0.68;

describe('metrics', () => {
  it('computes nDCG@10 by hand on a small ranking', () => {
    // relevant at ranks 1 and 3 of two relevant: (1 + 1/log2 4) / (1 + 1/log2 3) = 1.5 / 1.6309
    expect(ndcgAt(['a', 'x', 'b', 'y'], new Set(['a', 'b']))).toBeCloseTo(1.5 / (1 + 1 / Math.log2(3)), 12);
    expect(ndcgAt(['a', 'b'], new Set(['a', 'b']))).toBe(1);
    expect(ndcgAt(['x', 'a'], new Set(['a']))).toBeCloseTo(1 / Math.log2(3), 12);
    // rank 11 is past the cut
    expect(ndcgAt([...'xxxxxxxxxx'.split('').map((x, i) => x + i), 'a'], new Set(['a']))).toBe(0);
    expect(ndcgAt([], new Set(['a']))).toBe(0);
  });

  it('computes Recall@k and means over every judged query', () => {
    expect(recallAt(['a', 'x', 'b'], new Set(['a', 'b', 'c']), 2)).toBeCloseTo(1 / 3, 12);
    const judged = new Map([['q1', new Set(['a'])], ['q2', new Set(['b'])]]);
    // q2 has no ranking at all: it counts as 0
    expect(evaluate(new Map([['q1', ['a']]]), judged)).toEqual({ ndcg10: 0.5, recall100: 0.5 });
  });
});

describe('SciFact relevance', () => {
  let dir: string;
  let engine: Engine;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-relevance-'));
    engine = await Engine.open(dir);
    await engine.init('bench', 'admin@localhost');
    const done = await ingestScifact(engine);
    expect(done.status).toBe('ready');
    expect(done.documents.parsed).toBe(5183);
  }, 120_000);

  afterAll(async () => {
    await engine?.close({ drain: false }); // vectors left to embed have no bearing on this test
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads BEIR fields by default: _id as id, title as title, text as body', () => {
    const line = { _id: '4983', title: 'A title', text: 'An abstract.', metadata: {} };
    const rec = makeTransform({}, { source_key: 's', bucket: 'b', etag: 'e', format: 'ndjson' })(line, 1);
    expect(rec).toMatchObject({ id: '4983', title: 'A title', body: 'An abstract.' });
  });

  it('finds a record by its title and abstract words', async () => {
    const r = await engine.search.run(engine.localCaller(), { text: 'cerebral white matter diffusion tensor newborn', datasets: ['scifact'], limit: 1 });
    expect(r.records[0].id).toBe('4983');
    expect(r.records[0].title).toMatch(/^Microstructural development of human newborn cerebral white matter/);
  });

  it(`ranks SciFact test queries at nDCG@10 ≥ ${NDCG_FLOOR}`, async () => {
    const caller = engine.localCaller();
    const rankings = new Map<string, string[]>();
    for (const q of queries('test')) {
      const r = await engine.search.run(caller, { text: q.text, datasets: ['scifact'], limit: 100 });
      rankings.set(q.id, r.records.map((rec) => rec.id));
    }
    const { ndcg10, recall100 } = evaluate(rankings, qrels('test'));
    console.log(`SciFact test (300 queries): nDCG@10 ${ndcg10.toFixed(4)}  Recall@100 ${recall100.toFixed(4)}`);
    expect(ndcg10).toBeGreaterThanOrEqual(NDCG_FLOOR);
  }, 120_000);
});
