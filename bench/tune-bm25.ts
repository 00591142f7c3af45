/**
 * Grid search of BM25 k, b, d and the title boost for SciFact nDCG@10 on the train queries only;
 * the test split is scored once per reported setting, never searched over.
 * Run: npm run bench -- tune (about 12 minutes on two cores: four grids of ~2,500 settings × 809 queries).
 */
import type { StoredRecord } from '../src/engine/records.js';
import { DEFAULT_SEARCH_CONFIG } from '../src/engine/sources/sources.js';
import { DEFAULT_MAX_EXPANSION_TERMS } from '../src/engine/search/search.js';
import { BM25 } from '../src/engine/text/textIndex.js';
import { FastScorer, type Params, type Prepared, type Variant } from './lib/fastScorer.js';
import { evaluate, type Qrels } from './lib/metrics.js';
import { corpus, qrels, queries, type Query } from './lib/scifact.js';
import { fixed, printTable } from './lib/table.js';

const K = [0.3, 0.45, 0.6, 0.75, 0.9, 1.2, 1.5, 2, 2.5, 3, 4];
const B = [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1];
const D = [0, 0.25, 0.5, 1];
const TITLE = [0.25, 0.35, 0.5, 0.75, 1, 1.5, 2];
/** What TextIndex scores: expansions at their weight, no coordination factor (MiniSearch's, dropped with segments). */
const FULL: Variant = { expansions: true, coordination: false };

interface Split { queries: Query[]; qrels: Qrels; prepared: Prepared[] }

function split(scorer: FastScorer, name: 'train' | 'test'): Split {
  const qs = queries(name);
  return { queries: qs, qrels: qrels(name), prepared: qs.map((q) => scorer.prepare(q.text)) };
}

function score(scorer: FastScorer, s: Split, p: Params, v = FULL, limit = 100) {
  const rankings = new Map<string, string[]>();
  s.queries.forEach((q, i) => rankings.set(q.id, scorer.rank(s.prepared[i], p, limit, v).map((seq) => ids[seq - 1])));
  return evaluate(rankings, s.qrels);
}

/** Best setting on train over the grid; nDCG@10 only needs the first 10 of each ranking. */
function grid(scorer: FastScorer, train: Split, fields: string[], v = FULL): { p: Params; ndcg10: number }[] {
  const out: { p: Params; ndcg10: number }[] = [];
  for (const k of K) for (const b of B) for (const d of D) for (const title of fields.length > 1 ? TITLE : [1]) {
    const p: Params = { k, b, d, boost: fields.length > 1 ? { title, body: 1 } : { [fields[0]]: 1 } };
    out.push({ p, ndcg10: score(scorer, train, p, v, 10).ndcg10 });
  }
  return out.sort((a, b) => b.ndcg10 - a.ndcg10);
}

const label = (p: Params) => `k=${p.k} b=${p.b} d=${p.d}${p.boost.title !== undefined ? ` title=${p.boost.title}` : ''}`;

const started = performance.now();
const docs = corpus();
const ids = docs.map((d) => d._id);
const record = (seq: number, title: string | null, body: string) => ({ seq, id: ids[seq - 1], title, body, metadata: {} }) as unknown as StoredRecord;
const fields = DEFAULT_SEARCH_CONFIG.text_fields.map((f) => f.field);
const scorer = FastScorer.build(docs.map((d, i) => record(i + 1, d.title, d.text)), DEFAULT_SEARCH_CONFIG);
const train = split(scorer, 'train');
const test = split(scorer, 'test');
const current: Params = { ...BM25, boost: Object.fromEntries(DEFAULT_SEARCH_CONFIG.text_fields.map((f) => [f.field, f.boost])) };

// The grid is only worth something if it scores what the engine scores.
const engineRankings = new Map(train.queries.map((q) => [q.id, [...scorer.index.search(q.text, { maxExpansions: DEFAULT_MAX_EXPANSION_TERMS, deadline: Infinity, top: 100 }).seqs].map((seq) => ids[seq - 1])]));
const viaEngine = evaluate(engineRankings, train.qrels);
const viaScorer = score(scorer, train, current);
console.log(`fidelity, train at the current setting: TextIndex.search nDCG@10 ${viaEngine.ndcg10.toFixed(6)}, fast scorer ${viaScorer.ndcg10.toFixed(6)}`);
if (Math.abs(viaEngine.ndcg10 - viaScorer.ndcg10) > 1e-6) throw new Error('the fast scorer no longer matches TextIndex: fix bench/lib/fastScorer.ts first');

const ranked = grid(scorer, train, fields);
const best = ranked[0].p;
printTable(`best 10 of ${ranked.length} settings on train (${train.queries.length} queries)`, ['setting', 'train nDCG@10'], ranked.slice(0, 10).map((r) => [label(r.p), fixed(r.ndcg10, 4)]));

const report = (name: string, sc: FastScorer, tr: Split, te: Split, p: Params, v = FULL) => {
  const a = score(sc, tr, p, v);
  const b = score(sc, te, p, v);
  return [name, label(p), fixed(a.ndcg10, 4), fixed(a.recall100, 4), fixed(b.ndcg10, 4), fixed(b.recall100, 4)];
};
const header = ['variant', 'setting', 'train nDCG@10', 'train R@100', 'test nDCG@10', 'test R@100'];
const rows = [
  report('current constants', scorer, train, test, current),
  report('MiniSearch defaults', scorer, train, test, { k: 1.2, b: 0.7, d: 0.5, boost: { title: 1, body: 1 } }),
  report('Anserini k1/b, d=0', scorer, train, test, { k: 0.9, b: 0.4, d: 0, boost: { title: 1, body: 1 } }),
  report('best on train', scorer, train, test, best),
];

// What a code change (not a constant) would bring, each at its own best setting on train.
const coord: Variant = { expansions: true, coordination: true };
rows.push(report('MiniSearch\'s coordination factor', scorer, train, test, grid(scorer, train, fields, coord)[0].p, coord));
const noExp: Variant = { expansions: false, coordination: false };
rows.push(report('no expansions', scorer, train, test, grid(scorer, train, fields, noExp)[0].p, noExp));
const flat = FastScorer.build(docs.map((d, i) => record(i + 1, null, `${d.title} ${d.text}`)), { text_fields: [{ field: 'body', boost: 1, natural_language: true }] });
const flatTrain = split(flat, 'train');
const flatTest = split(flat, 'test');
rows.push(report('one field: title + body', flat, flatTrain, flatTest, grid(flat, flatTrain, ['body'])[0].p));
rows.push(report('one field, coordination factor', flat, flatTrain, flatTest, grid(flat, flatTrain, ['body'], coord)[0].p, coord));
printTable('SciFact, train (tuned on) and test (reported only)', header, rows);
console.log(`\n${((performance.now() - started) / 1000).toFixed(0)} s`);
