import { readFileSync } from 'node:fs';
import { join } from 'node:path';
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
