import { createReadStream, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DatasetCreate } from '../../src/api/datasets.js';
import type { IngestRun } from '../../src/api/ingest.js';
import type { Engine } from '../../src/engine/index.js';
import { DATA } from './paths.js';
import type { Qrels } from './metrics.js';

export const SCIFACT = join(DATA, 'scifact');
export const CORPUS = join(SCIFACT, 'corpus.jsonl');

export interface Doc { _id: string; title: string; text: string }
export interface Query { id: string; text: string }

const jsonl = (path: string) =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l));

export function corpus(): Doc[] {
  return jsonl(CORPUS).map((d) => ({ _id: d._id, title: d.title, text: d.text }));
}

// Query metadata carries the gold evidence: only the text is kept.
export function queries(split: 'test' | 'train'): Query[] {
  return jsonl(join(SCIFACT, split === 'test' ? 'queries.jsonl' : 'queries-train.jsonl')).map((q) => ({ id: q._id, text: q.text }));
}

export function qrels(split: 'test' | 'train'): Qrels {
  const out: Qrels = new Map();
  const lines = readFileSync(join(SCIFACT, `qrels-${split}.tsv`), 'utf8').split('\n').slice(1);
  for (const line of lines) {
    const [qid, docId, score] = line.split('\t');
    if (!qid || Number(score) <= 0) continue;
    if (!out.has(qid)) out.set(qid, new Set());
    out.get(qid)!.add(docId);
  }
  return out;
}

/** Creates a dataset in the engine's first tenant and ingests SciFact's corpus into it; resolves with the ended run. */
export async function ingestScifact(engine: Engine, dataset: DatasetCreate = { dataset_id: 'scifact' }): Promise<IngestRun> {
  const caller = engine.localCaller();
  await engine.datasets.create(caller, dataset);
  const run = await engine.ingest.submit(caller, createReadStream(CORPUS), { dataset_id: dataset.dataset_id, format: 'ndjson', filename: 'corpus.jsonl', id_field: '_id', body_field: 'text' });
  return engine.ingest.wait(caller, run.ingest_run_id);
}
