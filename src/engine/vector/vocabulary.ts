import type { StoredRecord } from '../records.js';
import { fieldValue } from '../search/fieldValue.js';
import { tokenize } from '../text/analyzer.js';
import type { WordVectors } from './embedders/wordVectors.js';
import type { VectorIndex } from './vectorIndex.js';

/** Shortest word worth expanding or offering as an expansion. */
const MIN_WORD = 3;

/** Adds the words of a record's vocabulary fields to the index's vocabulary. */
export function addVocabulary(index: VectorIndex, rec: StoredRecord, fields: string[] | undefined): void {
  for (const field of fields ?? []) {
    const v = fieldValue(rec, field);
    if (v === undefined || v === null) continue;
    for (const word of tokenize(typeof v === 'string' ? v : JSON.stringify(v))) if (word.length >= MIN_WORD && !/^\d+$/.test(word)) index.vocabulary.add(word);
  }
}

export interface ExpansionOptions {
  /** neighbours kept per query word */
  perWord: number;
  /** least cosine between a query word and an expansion */
  minSimilarity: number;
  /** weight of an expansion in hybrid's text list, against 1 for a query word */
  weight: number;
}

/** Chosen on SciFact's train queries (bench/semantic.ts). */
export const EXPANSION: ExpansionOptions = { perWord: 2, minSimilarity: 0.75, weight: 0.3 };

/** The vocabulary as unit vectors in one matrix (rebuilt when it has grown): one tight loop per query word. */
const matrices = new WeakMap<VectorIndex, { size: number; rows: Int32Array; matrix: Float32Array }>();

function vocabularyMatrix(index: VectorIndex, words: WordVectors): { rows: Int32Array; matrix: Float32Array } {
  const held = matrices.get(index);
  if (held && held.size === index.vocabulary.size) return held;
  const rows = Int32Array.from([...index.vocabulary].map((w) => words.row(w)).filter((r) => r >= 0));
  const matrix = new Float32Array(rows.length * words.dims);
  rows.forEach((r, i) => matrix.set(unit(words, r), i * words.dims));
  const made = { size: index.vocabulary.size, rows, matrix };
  matrices.set(index, made);
  return made;
}

function unit(words: WordVectors, row: number): Float32Array {
  const v = new Float32Array(words.dims);
  words.addTo(v, row, 1);
  const n = Math.hypot(...v) || 1;
  return v.map((x) => x / n);
}

/**
 * Query expansion from the dataset's own vocabulary: each query word brings its nearest
 * vocabulary words by word-vector cosine (at most `perWord` each, at least `minSimilarity`),
 * `max` in all, nearest first.
 */
export function expandQuery(text: string, index: VectorIndex, words: WordVectors, max: number, o: ExpansionOptions = EXPANSION): string[] {
  if (max <= 0 || index.vocabulary.size === 0) return [];
  const query = [...new Set(tokenize(text))].filter((w) => w.length >= MIN_WORD);
  const own = new Set(query);
  const { rows, matrix } = vocabularyMatrix(index, words);
  const dims = words.dims;
  const found: [string, number][] = [];
  for (const word of query) {
    const row = words.row(word);
    if (row < 0) continue;
    const q = unit(words, row);
    const best: [number, number][] = [];
    for (let i = 0; i < rows.length; i++) {
      let sim = 0;
      for (let j = 0, off = i * dims; j < dims; j++) sim += q[j] * matrix[off + j];
      if (sim < o.minSimilarity || rows[i] === row) continue;
      best.push([rows[i], sim]);
      if (best.length > o.perWord * 4) best.sort((a, b) => b[1] - a[1]).splice(o.perWord);
    }
    best.sort((a, b) => b[1] - a[1]);
    for (const [r, sim] of best.slice(0, o.perWord)) if (!own.has(words.words[r])) found.push([words.words[r], sim]);
  }
  return [...new Set(found.sort((a, b) => b[1] - a[1]).map(([w]) => w))].slice(0, max);
}
