/**
 * Documents per second through the onnx embedder: SciFact title + abstract, in calls of 256 as the
 * embedding job makes them, tokenised and run in the worker thread. The model is the one the tests
 * build (one Gather over a 384-d table) with a vocabulary of the corpus' 30,000 commonest words, as
 * large as BERT's: this measures what svc adds around a model — tokenisation, batching, the worker
 * round trip, pooling — not a real encoder's inference, which costs far more per token.
 */
import { join } from 'node:path';
import { OnnxEmbedder } from '../../src/engine/vector/embedders/onnx/onnxEmbedder.js';
import { writeTinyModel } from '../../test/helpers/onnxModel.js';
import { corpus } from './scifact.js';
import { tempDir } from './svc.js';

const DOCUMENTS = 2000;
const WORDS = 30_000;
/** records per embed call, as src/engine/vector/embedJob.ts batches them */
const CALL = 256;

export async function onnxThroughput(): Promise<{ docsPerSecond: number; documents: number; seconds: number }> {
  const dir = tempDir('svc-bench-onnx-');
  const all = corpus().map((d) => `${d.title}\n${d.text}`);
  const embedder = new OnnxEmbedder({ model: writeTinyModel(join(dir.path, 'model'), { dims: 384, words: vocabulary(all) }).dir });
  try {
    const docs = all.slice(0, DOCUMENTS);
    await embedder.embed(['warm up: the worker starts and loads the model'], 'document'); // start-up is not throughput
    const started = performance.now();
    for (let i = 0; i < docs.length; i += CALL) await embedder.embed(docs.slice(i, i + CALL), 'document');
    const seconds = (performance.now() - started) / 1000;
    return { docsPerSecond: docs.length / seconds, documents: docs.length, seconds };
  } finally {
    await embedder.close();
    dir.remove();
  }
}

/** The commonest words of the texts, then single characters and their ## continuations, as a WordPiece vocabulary has them. */
function vocabulary(texts: string[]): string[] {
  const counts = new Map<string, number>();
  for (const t of texts) for (const w of t.toLowerCase().match(/\p{L}+|\p{N}+/gu) ?? []) counts.set(w, (counts.get(w) ?? 0) + 1);
  const chars = [...'abcdefghijklmnopqrstuvwxyz0123456789'];
  const words = [...counts].sort((a, b) => b[1] - a[1]).slice(0, WORDS).map(([w]) => w);
  return [...chars, ...chars.map((c) => `##${c}`), ...words];
}
