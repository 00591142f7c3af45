/**
 * Semantic search figures, each against its baseline in the same run:
 *   - builtin embedding throughput (documents/s) and ingest with vectors on versus off, same data;
 *   - HNSW recall@10 against exact search (USearch exactSearch) over SciFact's vectors, i8 / f16 / f32;
 *   - nDCG@10 on SciFact test for text, semantic and hybrid; fusion and expansion tuned on train.
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
import { evaluate } from './lib/metrics.js';
import { corpus, ingestScifact, qrels, queries, type Query } from './lib/scifact.js';
import { tempDir } from './lib/svc.js';
import { fixed, printTable } from './lib/table.js';

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
    if (tune) await tuneOnTrain(engine, caller);
    await relevance(engine, caller);
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

async function rankings(engine: Engine, caller: Caller, qs: Query[], req: Partial<SearchRequest>): Promise<{ ids: Map<string, string[]>; hits: Map<string, { ds: number; seq: number; score: number; id: string }[]>; qps: number }> {
  const ids = new Map<string, string[]>();
  const hits = new Map<string, { ds: number; seq: number; score: number; id: string }[]>();
  const started = performance.now();
  for (const q of qs) {
    const r = await engine.search.run(caller, { text: q.text, datasets: ['scifact'], limit: 100, ...req });
    ids.set(q.id, r.records.map((rec) => rec.id));
    hits.set(q.id, r.records.map((rec) => ({ ds: 0, seq: Number(rec.id), score: rec.score, id: rec.id })));
  }
  return { ids, hits, qps: qs.length / secs(started) };
}

async function relevance(engine: Engine, caller: Caller): Promise<void> {
  const table: (string | number)[][] = [];
  for (const split of ['train', 'test'] as const) {
    const qs = queries(split);
    const judged = qrels(split);
    const saved = EXPANSION.weight;
    for (const [name, mode, expansion] of [['text', 'text', 0], ['semantic', 'semantic', 0], ['hybrid', 'hybrid', 0], ['hybrid + vocabulary expansion', 'hybrid', saved || 0.3]] as const) {
      EXPANSION.weight = expansion;
      const r = await rankings(engine, caller, qs, { mode });
      const { ndcg10, recall100 } = evaluate(r.ids, judged);
      table.push([split, name, fixed(ndcg10, 4), fixed(recall100, 4), Math.round(r.qps)]);
    }
    EXPANSION.weight = saved;
  }
  printTable(`SciFact nDCG@10 (fusion ${FUSION.name}, vector weight ${FUSION.weight})`, ['split', 'mode', 'nDCG@10', 'Recall@100', 'queries/s'], table);
}

/** Fusion weights and expansion settings, on train queries only. */
async function tuneOnTrain(engine: Engine, caller: Caller): Promise<void> {
  const qs = queries('train');
  const judged = qrels('train');
  const table: (string | number)[][] = [];
  const saved = { ...EXPANSION };
  // the text side alone (vectors cut by an impossible score), with and without expansion: slow, so on request
  const grid = process.argv.includes('--tune-expansion') ? [[0, 1, 1], [0.1, 1, 0.8], [0.2, 1, 0.7], [0.2, 2, 0.8], [0.4, 1, 0.8]] : [];
  for (const [weight, perWord, minSimilarity] of grid) {
    Object.assign(EXPANSION, { weight, perWord, minSimilarity });
    const text = await rankings(engine, caller, qs, { mode: 'hybrid', semantic_min_score: 2 });
    table.push([`expansion w${weight} n${perWord} sim${minSimilarity}`, fixed(evaluate(text.ids, judged).ndcg10, 4)]);
  }
  Object.assign(EXPANSION, saved);
  const text = await rankings(engine, caller, qs, { mode: 'text' });
  const vec = await rankings(engine, caller, qs, { mode: 'semantic' });
  const fused = (f: (a: { id: string; score: number; ds: number; seq: number }[], b: { id: string; score: number; ds: number; seq: number }[]) => { id: string; score: number }[]) =>
    new Map(qs.map((q) => [q.id, f(text.hits.get(q.id) ?? [], vec.hits.get(q.id) ?? []).sort((a, b) => b.score - a.score).map((h) => h.id)]));
  table.push(['text alone', fixed(evaluate(text.ids, judged).ndcg10, 4)]);
  for (const w of [0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4]) table.push([`zscore w${w}`, fixed(evaluate(fused((a, b) => fuseZ(a, b, w)), judged).ndcg10, 4)]);
  for (const k of [10, 60]) for (const w of [0.1, 0.3, 1]) table.push([`rrf k${k} w${w}`, fixed(evaluate(fused((a, b) => fuseRRF(a, b, w, k)), judged).ndcg10, 4)]);
  printTable('Tuning on SciFact train (nDCG@10)', ['setting', 'nDCG@10'], table);
}

if (import.meta.url === `file://${process.argv[1]}`) await semanticBench();
