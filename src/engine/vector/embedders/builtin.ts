import { tokenize } from '../../text/analyzer.js';
import { type Embedder, normalize } from './embedder.js';
import type { WordVectors } from './wordVectors.js';

export interface PoolingOptions {
  /** SIF's `a`: a word of estimated frequency p weighs a / (a + p); smaller favours rare words more */
  a: number;
  /** remove the common component of English text (its first principal direction) */
  removeComponent: boolean;
}

/** Texts embedded between two turns of the event loop: a few milliseconds of work. */
const YIELD_EVERY = 32;

/** Chosen on SciFact's train queries (bench/semantic.ts). */
export const DEFAULT_POOLING: PoolingOptions = { a: 3e-5, removeComponent: true };

/**
 * Document vectors pooled from word vectors with smooth inverse frequency weights (Arora et al.
 * 2017): a word's frequency is estimated from its rank in the source file (Zipf), so a vector does
 * not depend on the rest of the corpus and never changes as a dataset grows.
 */
export class BuiltinEmbedder implements Embedder {
  readonly id: string;
  readonly dims: number;
  private readonly weights: Float32Array;

  constructor(
    private readonly words: WordVectors,
    private readonly pooling: PoolingOptions = DEFAULT_POOLING,
  ) {
    this.dims = words.dims;
    this.id = `builtin:wink-sg-100d:sif-${pooling.a}${pooling.removeComponent ? '-pc1' : ''}`;
    const harmonic = Math.log(words.vocabulary) + 0.5772;
    this.weights = Float32Array.from(words.ranks, (rank) => {
      const p = 1 / ((rank + 1) * harmonic);
      return pooling.a / (pooling.a + p);
    });
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i++) {
      // the work is on the event loop's thread: let requests through every few texts
      if (i > 0 && i % YIELD_EVERY === 0) await new Promise((resolve) => setImmediate(resolve));
      out.push(this.embedOne(texts[i]));
    }
    return out;
  }

  /** A zero vector when no word of the text is known. */
  embedOne(text: string): Float32Array {
    const v = new Float32Array(this.dims);
    for (const token of tokenize(text)) {
      const row = this.words.row(token);
      if (row >= 0) this.words.addTo(v, row, this.weights[row]);
    }
    if (this.pooling.removeComponent) {
      const u = this.words.component;
      let dot = 0;
      for (let j = 0; j < this.dims; j++) dot += v[j] * u[j];
      for (let j = 0; j < this.dims; j++) v[j] -= dot * u[j];
    }
    return normalize(v);
  }
}
