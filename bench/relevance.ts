/** Relevance on SciFact test: svc's engine, plain MiniSearch, and MiniSearch with the engine's analyzer. */
import { join } from 'node:path';
import { Engine } from '../src/engine/index.js';
import { evaluate } from './lib/metrics.js';
import { miniScifact } from './lib/mini.js';
import { corpus, ingestScifact, qrels, queries } from './lib/scifact.js';
import { tempDir } from './lib/svc.js';
import { fixed, printTable } from './lib/table.js';

export async function relevanceBench(): Promise<void> {
  const qs = queries('test');
  const judged = qrels('test');
  const rows: (string | number)[][] = [];
  const row = (name: string, rankings: Map<string, string[]>) => {
    const { ndcg10, recall100 } = evaluate(rankings, judged);
    rows.push([name, fixed(ndcg10, 4), fixed(recall100, 4)]);
  };

  const dir = tempDir('svc-bench-relevance-');
  const engine = await Engine.open(join(dir.path, 'data'));
  try {
    await engine.init('bench', 'admin@localhost');
    const caller = engine.localCaller();
    await ingestScifact(engine);
    const rankings = new Map<string, string[]>();
    for (const q of qs) rankings.set(q.id, (await engine.search.run(caller, { text: q.text, datasets: ['scifact'], limit: 100 })).records.map((r) => r.id));
    row('svc engine', rankings);
  } finally {
    await engine.close({ drain: false }); // background work (vectors) has no bearing on text ranking
    dir.remove();
  }

  const docs = corpus();
  for (const analyzer of [false, true]) {
    const mini = miniScifact(docs, analyzer);
    const rankings = new Map(qs.map((q) => [q.id, mini.search(q.text).slice(0, 100).map((r) => String(r.id))]));
    row(`MiniSearch, ${analyzer ? 'Porter + stop words' : 'default options'}`, rankings);
  }
  rows.push(['Anserini BM25 flat (published)', '0.6789', '0.9253']);
  printTable(`c. relevance: SciFact test, ${qs.length} queries`, ['system', 'nDCG@10', 'Recall@100'], rows);
}
