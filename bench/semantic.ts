/**
 * Semantic search figures, each against its baseline in the same run:
 *   - builtin embedding throughput (documents/s) and ingest with vectors on versus off, same data;
 *   - HNSW recall@10 against exact search (USearch exactSearch) over SciFact's vectors, i8 / f16 / f32;
 *   - nDCG@10 on SciFact train and test for text, semantic and every hybrid fusion tried (on the same
 *     lists, and with deliberately bad vector lists); fusion and expansion tuned on train (--tune).
 * Run: npm run build && npx tsc -p bench/tsconfig.json && node .bench/bench/semantic.js [--tune] [--tune-expansion]
 */
import { join } from 'node:path';
import { exactSearch, Index, MetricKind, ScalarKind } from 'usearch';
import type { SearchRequest } from '../src/api/search.js';
import type { Caller } from '../src/engine/auth/caller.js';
import { Engine } from '../src/engine/index.js';
import { BuiltinEmbedder } from '../src/engine/vector/embedders/builtin.js';
import { wordVectors } from '../src/engine/vector/embedders/wordVectors.js';
import { FUSION, fuseRRF, fuseZ } from '../src/engine/vector/fusion.js';
import { HNSW } from '../src/engine/vector/vectorIndex.js';
import { EXPANSION } from '../src/engine/vector/vocabulary.js';
import { fusedRankings, winsLosses, type Lists } from './lib/fusionEval.js';
import { adaptive, VARIANTS, type Fuse } from './lib/fusionVariants.js';
import { evaluate } from './lib/metrics.js';
import { corpus, ingestScifact, qrels, queries, type Query } from './lib/scifact.js';
import { tempDir } from './lib/svc.js';
import type { Ranked } from './lib/stress.js';
import { fixed, printTable } from './lib/table.js';
import { onnxThroughput } from './lib/onnxThroughput.js';

const secs = (since: number) => (performance.now() - since) / 1000;

export async function semanticBench(tune = process.argv.includes('--tune')): Promise<void> {
  await embeddingThroughput();
  const dir = tempDir('svc-bench-semantic-');
  const engine = await Engine.open(join(dir.path, 'data'), { background: true }); // embeds as svc serve does
  try {
    await engine.init('bench', 'admin@localhost');
    const caller = engine.localCaller();
    await ingestOnOff(engine, caller);
    // vocabulary feeds hybrid's query expansion
    const source = engine.sources.byKey(caller.tenant_id, 'scifact');
    await engine.sources.put(caller, source.source_id, {
      dataset_id: 'scifact', name: source.name, source_key: source.source_key, source_type: source.source_type, search_config: source.search_config,
      semantic_config: { ...source.semantic_config, vocabulary: { fields: [{ field: 'title' }, { field: 'body' }] } },
    });
    await gatherVocabulary(engine, caller);
    await recall(engine, caller);
    const lists = await fetchLists(engine, caller);
    if (tune) await tuneOnTrain(engine, caller, lists.train);
    await relevance(engine, caller, lists);
  } finally {
    await engine.close();
    dir.remove();
  }
}

async function embeddingThroughput(): Promise<void> {
  const docs = corpus().map((d) => `${d.title}\n${d.text}`);
  let started = performance.now();
  const words = await wordVectors();
  const load = secs(started);
  const embedder = new BuiltinEmbedder(words);
  started = performance.now();
  await embedder.embed(docs);
  const took = secs(started);
  printTable('Builtin embedder (SciFact title + abstract, one thread)', ['what', 'value'], [
    ['word vectors', `${words.count} words × ${words.dims}-d`],
    ['load binary (s)', fixed(load, 3)],
    ['documents/s', Math.round(docs.length / took)],
    ['MB/s of text', fixed(docs.reduce((n, d) => n + d.length, 0) / 2 ** 20 / took, 1)],
  ]);
  const onnx = await onnxThroughput();
  printTable('onnx embedder on a model built for the bench (tokeniser, worker, pooling: what svc adds around a real encoder)', ['what', 'value'], [
    ['SciFact documents', onnx.documents],
    ['seconds', fixed(onnx.seconds, 2)],
    ['documents/s', Math.round(onnx.docsPerSecond)],
  ]);
}

/** The same corpus into a dataset without vectors and one with them, in this one run. */
async function ingestOnOff(engine: Engine, caller: Caller): Promise<void> {
  const rows: (string | number)[][] = [];
  for (const [id, semantic] of [['scifact-text', false], ['scifact', true]] as const) {
    const started = performance.now();
    const ready = await ingestScifact(engine, { dataset_id: id, semantic });
    const readyAt = secs(started);
    await engine.jobs.drain();
    const all = secs(started);
    const n = ready.documents.parsed;
    rows.push([semantic ? 'vectors on' : 'vectors off', n, fixed(readyAt, 2), Math.round(n / readyAt), fixed(all, 2), Math.round(n / all)]);
  }
  printTable('Ingest of SciFact (5,183 records), same run', ['dataset', 'records', 'to ready (s)', 'records/s', 'to vectors done (s)', 'records/s'], rows);
}

/** Gathers the vocabulary of records already embedded: a backfill job, no embedding. */
async function gatherVocabulary(engine: Engine, caller: Caller): Promise<void> {
  const job = await engine.semantic.backfill.start(caller, { dataset_id: 'scifact' });
  await engine.jobs.settled(caller.tenant_id, job.job_id);
}

async function recall(engine: Engine, caller: Caller): Promise<void> {
  const space = engine.semantic.indexes.space(caller.tenant_id, 'scifact')!;
  const rows = engine.semantic.indexes.get(caller.tenant_id, 'scifact', space).vectors();
  const dims = rows[0].vector.length;
  const data = new Float32Array(rows.length * dims);
  rows.forEach((r, i) => data.set(r.vector, i * dims));
  const qs = await space.embedder.embed(queries('test').map((q) => q.text), 'query');
  const exact = qs.map((q) => new Set(exactSearch(data, q, dims, 10, MetricKind.Cos).keys));
  const table: (string | number)[][] = [];
  for (const [name, scalar] of [['i8', ScalarKind.I8], ['f16', ScalarKind.F16], ['f32', ScalarKind.F32]] as const) {
    for (const expansion of [64, HNSW.expansion_search]) {
      const index = new Index({ dimensions: dims, metric: MetricKind.Cos, quantization: scalar, ...HNSW, expansion_search: expansion, multi: false });
      let started = performance.now();
      index.add(BigUint64Array.from(rows, (_, i) => BigInt(i)), data);
      const build = secs(started);
      started = performance.now();
      let found = 0;
      for (let rep = 0; rep < 3; rep++) {
        qs.forEach((q, i) => {
          for (const key of index.search(q, 10, 0).keys) if (rep === 0 && exact[i].has(key)) found++;
        });
      }
      const qps = (3 * qs.length) / secs(started);
      table.push([name, expansion, rows.length, fixed(build, 2), fixed(found / (qs.length * 10), 4), Math.round(qps)]);
    }
  }
  printTable('HNSW recall@10 against exact search (SciFact vectors, 300 test queries)', ['scalar', 'ef_search', 'vectors', 'build (s)', 'recall@10', 'queries/s'], table);
}

async function rankings(engine: Engine, caller: Caller, qs: Query[], req: Partial<SearchRequest>): Promise<{ ids: Map<string, string[]>; hits: Map<string, Ranked[]>; qps: number }> {
  const ids = new Map<string, string[]>();
  const hits = new Map<string, Ranked[]>();
  const started = performance.now();
  for (const q of qs) {
    const r = await engine.search.run(caller, { text: q.text, datasets: ['scifact'], limit: 100, ...req });
    ids.set(q.id, r.records.map((rec) => rec.id));
    hits.set(q.id, r.records.map((rec) => ({ ds: 0, seq: Number(rec.id), score: rec.score, id: rec.id })));
  }
  return { ids, hits, qps: qs.length / secs(started) };
}

const SPLITS = ['train', 'test'] as const;
type Split = (typeof SPLITS)[number];

/** Each split's text list (its top 300, enough for any fusion's top 100) and vector list, fetched once. */
async function fetchLists(engine: Engine, caller: Caller): Promise<Record<Split, Lists & { textIds: Map<string, string[]> }>> {
  const out = {} as Record<Split, Lists & { textIds: Map<string, string[]> }>;
  for (const split of SPLITS) {
    const qs = queries(split);
    const text = await rankings(engine, caller, qs, { mode: 'text', limit: 300 });
    const vector = await rankings(engine, caller, qs, { mode: 'semantic' });
    out[split] = { text: text.hits, vector: vector.hits, qrels: qrels(split), textIds: new Map([...text.ids].map(([q, ids]) => [q, ids.slice(0, 100)])) };
  }
  return out;
}

const delta = (x: number, base: number) => `${x >= base ? '+' : ''}${(x - base).toFixed(4)}`;

/**
 * Every fusion on the same lists: nDCG@10 on train and test, Recall@100 on test, and test nDCG@10
 * with two bad vector lists (a fusion that cannot hurt keeps text's figure), then the engine's
 * own hybrid search end to end, without and with vocabulary expansion.
 */
async function relevance(engine: Engine, caller: Caller, lists: Record<Split, Lists & { textIds: Map<string, string[]> }>): Promise<void> {
  const text = { train: evaluate(lists.train.textIds, lists.train.qrels), test: evaluate(lists.test.textIds, lists.test.qrels) };
  const header = ['mode', 'train nDCG@10', 'test nDCG@10', 'test R@100', 'Δ mean vs text', 'test, shuffled docs', 'test, text in random order', 'test better/worse'];
  const row = (name: string, ids: Record<Split, Map<string, string[]>>, stress: (string | number)[]) => {
    const train = evaluate(ids.train, lists.train.qrels);
    const test = evaluate(ids.test, lists.test.qrels);
    const wl = winsLosses(ids.test, lists.test.textIds, lists.test.qrels);
    return [name, fixed(train.ndcg10, 4), fixed(test.ndcg10, 4), fixed(test.recall100, 4), delta((train.ndcg10 + test.ndcg10) / 2, (text.train.ndcg10 + text.test.ndcg10) / 2), ...stress, `${wl.wins}/${wl.losses}`];
  };
  const vectorIds = (l: Lists) => new Map([...l.vector].map(([q, hits]) => [q, hits.map((h) => h.id)]));
  const table: (string | number)[][] = [
    row('text', { train: lists.train.textIds, test: lists.test.textIds }, ['—', '—']),
    row('semantic', { train: vectorIds(lists.train), test: vectorIds(lists.test) }, ['—', '—']),
  ];
  for (const v of VARIANTS) {
    const ids = { train: fusedRankings(lists.train, v.fuse), test: fusedRankings(lists.test, v.fuse) };
    const stress = (['shuffled documents', 'text in random order'] as const).map((s) => fixed(evaluate(fusedRankings(lists.test, v.fuse, s), lists.test.qrels).ndcg10, 4));
    table.push(row(`hybrid, ${v.name}`, ids, stress));
  }
  const saved = EXPANSION.weight;
  for (const [name, expansion] of [['hybrid search (engine, shipped fusion)', 0], ['hybrid search + vocabulary expansion (engine)', saved || 0.3]] as const) {
    EXPANSION.weight = expansion;
    const ids = { train: (await rankings(engine, caller, queries('train'), { mode: 'hybrid' })).ids, test: (await rankings(engine, caller, queries('test'), { mode: 'hybrid' })).ids };
    table.push(row(name, ids, ['—', '—']));
  }
  EXPANSION.weight = saved;
  printTable(`SciFact nDCG@10, fusions on the same text and vector lists (hybrid score kind ${FUSION.name}); stress columns: test nDCG@10 with a bad vector list (text alone: ${fixed(text.test.ndcg10, 4)})`, header, table);
}

/** Fusion weights and expansion settings, on train queries only. */
async function tuneOnTrain(engine: Engine, caller: Caller, lists: Lists): Promise<void> {
  const qs = queries('train');
  const judged = qrels('train');
  const table: (string | number)[][] = [];
  const saved = { ...EXPANSION };
  // the text side alone (vectors cut by an impossible score), with and without expansion: slow, so on request
  const grid = process.argv.includes('--tune-expansion') ? [[0, 1, 1], [0.1, 1, 0.8], [0.2, 1, 0.7], [0.2, 2, 0.8], [0.4, 1, 0.8]] : [];
  for (const [weight, perWord, minSimilarity] of grid) {
    Object.assign(EXPANSION, { weight, perWord, minSimilarity });
    const text = await rankings(engine, caller, qs, { mode: 'hybrid', semantic_min_score: 2 });
    table.push([`expansion w${weight} n${perWord} sim${minSimilarity}`, fixed(evaluate(text.ids, judged).ndcg10, 4), '—']);
  }
  Object.assign(EXPANSION, saved);
  const measure = (name: string, fuse: Fuse) =>
    table.push([name, fixed(evaluate(fusedRankings(lists, fuse), judged).ndcg10, 4), fixed(evaluate(fusedRankings(lists, fuse, 'text in random order'), judged).ndcg10, 4)]);
  measure('text alone', (t) => t);
  for (const w of [0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4]) measure(`zscore w${w}`, (t, v) => fuseZ(t, v, w));
  for (const k of [10, 60]) for (const w of [0.1, 0.3, 1]) measure(`rrf k${k} w${w}`, (t, v) => fuseRRF(t, v, w, k));
  for (const k of [5, 10, 20]) for (const w of [0.1, 0.15, 0.2, 0.3, 0.4, 0.5]) measure(`adaptive overlap@${k} max weight ${w}`, adaptive(w, k));
  printTable('Tuning on SciFact train (nDCG@10; the stress column has a vector list ranking text\'s top 100 at random)', ['setting', 'nDCG@10', 'stressed nDCG@10'], table);
}

if (import.meta.url === `file://${process.argv[1]}`) await semanticBench();
