import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const MAGIC = 'SVCWV001';
/** The package root, found upwards from here (the code runs from src/, dist/ or a benchmark's copy). */
function findRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) return from;
  }
}
const ROOT = findRoot(dirname(fileURLToPath(import.meta.url)));
const SCRIPT = join(ROOT, 'scripts', 'build-embeddings.mjs');
/** Where `prepare` writes the binary; SVC_EMBEDDINGS_FILE (config.ts) points elsewhere. */
export const DEFAULT_EMBEDDINGS_FILE = join(ROOT, 'build', 'embeddings', 'wink-sg-100d.bin');

/**
 * Word vectors from the compact binary that scripts/build-embeddings.mjs makes: int8 rows with a
 * per-row scale, in the source file's frequency order. Loading is a read and a map of the words.
 */
export class WordVectors {
  readonly dims: number;
  readonly count: number;
  /** how many words the source file ranks (the Zipf estimate of a word's frequency needs it) */
  readonly vocabulary: number;
  readonly component: Float32Array;
  readonly ranks: Uint32Array;
  readonly scales: Float32Array;
  readonly rows: Int8Array;
  readonly words: string[];
  private readonly index = new Map<string, number>();

  constructor(buf: Buffer) {
    if (buf.toString('latin1', 0, 8) !== MAGIC) throw new Error('not a word-vector file of this version');
    // typed arrays need aligned offsets: a copy into a fresh ArrayBuffer guarantees them
    const bytes = buf.byteOffset % 4 === 0 ? buf : Buffer.from(buf);
    const ab = bytes.buffer;
    const base = bytes.byteOffset;
    this.dims = bytes.readUInt32LE(8);
    this.count = bytes.readUInt32LE(12);
    this.vocabulary = bytes.readUInt32LE(16);
    const wordBytes = bytes.readUInt32LE(20);
    let at = base + 32;
    this.component = new Float32Array(ab, at, this.dims);
    at += 4 * this.dims;
    this.ranks = new Uint32Array(ab, at, this.count);
    at += 4 * this.count;
    this.scales = new Float32Array(ab, at, this.count);
    at += 4 * this.count;
    this.rows = new Int8Array(ab, at, this.count * this.dims);
    at += this.count * this.dims;
    this.words = Buffer.from(ab, at, wordBytes).toString('utf8').split('\n');
  }

  /** Reads the file and maps its words, a slice at a time: a server's other requests go on meanwhile. */
  static async read(path: string): Promise<WordVectors> {
    const vectors = new WordVectors(await readFile(path));
    for (let i = 0; i < vectors.words.length; i++) {
      vectors.index.set(vectors.words[i], i);
      if (i % 20_000 === 19_999) await nextTurn();
    }
    return vectors;
  }

  /** The row of a lower-cased word, or -1. */
  row(word: string): number {
    return this.index.get(word) ?? -1;
  }

  /** Adds `weight` × the word's vector to `into`. */
  addTo(into: Float32Array, row: number, weight: number): void {
    const w = weight * this.scales[row];
    const off = row * this.dims;
    for (let j = 0; j < this.dims; j++) into[j] += w * this.rows[off + j];
  }

  /** Cosine of two rows. */
  cosine(a: number, b: number): number {
    let dot = 0;
    let na = 0;
    let nb = 0;
    const oa = a * this.dims;
    const ob = b * this.dims;
    for (let j = 0; j < this.dims; j++) {
      const x = this.rows[oa + j];
      const y = this.rows[ob + j];
      dot += x * y;
      na += x * x;
      nb += y * y;
    }
    return na > 0 && nb > 0 ? dot / Math.sqrt(na * nb) : 0;
  }
}

let loaded: Promise<WordVectors> | null = null;
let carried: (() => string) | undefined;

/** Where the default file really is when something carries its own copy (the single executable unpacks it on first read). */
export function setDefaultEmbeddingsFile(find: () => string): void {
  carried = find;
}

/**
 * The word vectors, read once per process. When the binary is missing (an install that skipped
 * `prepare`) it is made here from the npm package, once, before the first embedding.
 */
export function wordVectors(file = DEFAULT_EMBEDDINGS_FILE): Promise<WordVectors> {
  loaded ??= (async () => {
    let path = file === DEFAULT_EMBEDDINGS_FILE && carried ? carried() : file;
    if (!existsSync(path)) path = await buildNow(path);
    return WordVectors.read(path);
  })();
  loaded.catch(() => (loaded = null));
  return loaded;
}

async function buildNow(path: string): Promise<string> {
  const { buildEmbeddings } = await import(pathToFileURL(SCRIPT).href);
  try {
    return buildEmbeddings(path).out;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EACCES' && (err as NodeJS.ErrnoException).code !== 'EROFS') throw err;
    const fallback = join(tmpdir(), 'svc-embeddings', 'wink-sg-100d.bin');
    return existsSync(fallback) ? fallback : buildEmbeddings(fallback).out;
  }
}
