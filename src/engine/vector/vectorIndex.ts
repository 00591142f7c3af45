import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { Index, MetricKind, ScalarKind } from 'usearch';
import { asDiskFull } from '../diskErrors.js';
import { Rows } from './rows.js';
import type { Stamps } from './stamps.js';

const FORMAT = 1;
/**
 * HNSW settings and scalar type, chosen by recall@10 against exact search on SciFact's vectors
 * (bench/semantic.ts): f16 reaches 0.99 at half of f32's memory; i8 stays near 0.93 whatever
 * the search breadth, as quantizing 100-d unit vectors to 8 bits blurs close neighbours.
 */
export const HNSW = { connectivity: 16, expansion_add: 128, expansion_search: 128 };
export const SCALAR: ScalarKind = ScalarKind.F16;
/** A filtered subset this small is searched exactly rather than through the graph. */
const EXACT_MAX = 20_000;
/** Rewrite rows and graph without the dead rows once they are this share of all rows. */
const COMPACT_SHARE = 0.25;

export interface VectorHit { seq: number; score: number }

interface Meta {
  format: number;
  config: string;
  version: number;
  seq: number;
  failed: number[];
  stamped: string[] | null;
  stamps: [number, Stamps][];
  vocabulary: string[];
}

/**
 * The vectors of one dataset generation. Like the text index it holds exactly the records up to
 * `seq` (those with text to embed): records are embedded in sequence order, so a snapshot plus
 * embedding the records after its `seq` is always exact. Snapshot files carry a version so that a
 * crash between writing them never pairs a graph with the wrong rows.
 */
export class VectorIndex {
  seq = 0;
  /** records the provider refused for good: they are counted, not retried */
  readonly failed = new Set<number>();
  /** filter values stamped on each record's vectors */
  readonly stamps = new Map<number, Stamps>();
  /** filter fields every vector carries a stamp for (null: no vector yet, so every field) */
  stamped: Set<string> | null = null;
  readonly vocabulary = new Set<string>();
  private rows: Rows | null = null;
  private graph: Index | null = null;
  private mapped = false;
  private dirty = false;
  private version = 0;

  constructor(
    private readonly base: string,
    readonly config: string,
    private readonly scalar: ScalarKind = SCALAR,
  ) {}

  get size(): number {
    return this.rows?.liveCount ?? 0;
  }

  get dims(): number {
    return this.rows?.dims ?? 0;
  }

  has(seq: number): boolean {
    return Boolean(this.rows?.rowsOf(seq));
  }

  /** Reads the snapshot when it was made under this configuration; the graph is memory-mapped until it changes. */
  open(): this {
    const metaPath = `${this.base}.json`;
    if (!existsSync(metaPath)) return this;
    const meta: Meta = JSON.parse(readFileSync(metaPath, 'utf8'));
    if (meta.format !== FORMAT || meta.config !== this.config) return this;
    this.seq = meta.seq;
    this.version = meta.version;
    for (const seq of meta.failed) this.failed.add(seq);
    this.stamped = meta.stamped ? new Set(meta.stamped) : null;
    for (const [seq, s] of meta.stamps) this.stamps.set(seq, s);
    for (const w of meta.vocabulary) this.vocabulary.add(w);
    const rowsPath = this.file('rows');
    if (existsSync(rowsPath)) {
      this.rows = Rows.fromBuffer(readFileSync(rowsPath));
      this.graph = this.newGraph(this.rows.dims);
      this.graph.view(this.file('usearch'));
      this.mapped = true;
    }
    return this;
  }

  /** Adds the vectors (one per chunk) of a record past `seq`. */
  add(seq: number, vectors: Float32Array[], stamps: Stamps | null): void {
    if (vectors.length > 0) {
      this.writable(vectors[0].length);
      const keys = new BigUint64Array(vectors.length);
      const matrix = new Float32Array(vectors.length * this.rows!.dims);
      vectors.forEach((v, i) => {
        keys[i] = BigInt(this.rows!.push(seq, v));
        matrix.set(v, i * this.rows!.dims);
      });
      this.graph!.add(keys, matrix);
      if (stamps) this.stamps.set(seq, stamps);
    }
    this.seq = Math.max(this.seq, seq);
    this.dirty = true;
  }

  /** Moves `seq` on past records that have nothing to embed or failed for good. */
  skip(seq: number, failed = false): void {
    if (failed) this.failed.add(seq);
    this.seq = Math.max(this.seq, seq);
    this.dirty = true;
  }

  remove(seqs: Iterable<number>): void {
    for (const seq of seqs) {
      this.failed.delete(seq);
      this.stamps.delete(seq);
      if (!this.rows?.rowsOf(seq)) continue;
      this.writable(this.rows.dims);
      for (const row of this.rows.kill(seq)) this.graph!.remove(BigInt(row));
      this.dirty = true;
    }
  }

  /** Replaces the stamps of records already embedded (filter backfill): no vector changes. */
  restamp(seq: number, stamps: Stamps | null): void {
    if (!this.has(seq)) return;
    if (stamps) this.stamps.set(seq, stamps);
    else this.stamps.delete(seq);
    this.dirty = true;
  }

  markDirty(): void {
    this.dirty = true;
  }

  /**
   * The `k` records nearest to a unit query vector that `keep` accepts, best first. With a
   * candidate list (records picked by their stamps) small enough, the search is exact over it;
   * otherwise the graph is asked for more and more neighbours until `k` are kept, and past a
   * quarter of the index the search becomes exact over every row.
   */
  search(q: Float32Array, k: number, keep?: (seq: number) => boolean, candidates?: number[]): VectorHit[] {
    const rows = this.rows;
    if (!rows || rows.liveCount === 0 || k <= 0) return [];
    if (candidates && candidates.length <= EXACT_MAX) return this.exact(q, k, candidates.flatMap((s) => rows.rowsOf(s) ?? []), keep);
    let want = Math.min(rows.liveCount, Math.max(k * 2, 32));
    for (;;) {
      const found = this.graph!.search(q, want, 0);
      const best = new Map<number, number>();
      const verdict = new Map<number, boolean>();
      for (let i = 0; i < found.keys.length; i++) {
        const seq = rows.seqOf[Number(found.keys[i])];
        if (best.has(seq)) continue;
        let ok = verdict.get(seq);
        if (ok === undefined) verdict.set(seq, (ok = !keep || keep(seq)));
        if (ok) best.set(seq, 1 - found.distances[i]);
      }
      if (best.size >= k || want >= rows.liveCount) return [...best].slice(0, k).map(([seq, score]) => ({ seq, score }));
      if (want * 4 >= rows.liveCount) return this.exact(q, k, undefined, keep);
      want *= 4;
    }
  }

  /** Exact cosine over the given rows (default: every live row). */
  exact(q: Float32Array, k: number, over?: number[], keep?: (seq: number) => boolean): VectorHit[] {
    const rows = this.rows;
    if (!rows) return [];
    const best = new Map<number, number>();
    const visit = (row: number) => {
      if (!rows.alive[row]) return;
      const seq = rows.seqOf[row];
      const score = rows.score(q, row);
      const prev = best.get(seq);
      if (prev === undefined || score > prev) best.set(seq, score);
    };
    if (over) for (const row of over) visit(row);
    else for (let row = 0; row < rows.count; row++) visit(row);
    const sorted = [...best].sort((a, b) => b[1] - a[1]);
    const out: VectorHit[] = [];
    for (const [seq, score] of sorted) {
      if (keep && !keep(seq)) continue;
      out.push({ seq, score });
      if (out.length >= k) break;
    }
    return out;
  }

  /** Records that hold vectors. */
  seqs(): Iterable<number> {
    return this.rows?.seqs() ?? [];
  }

  /** Every live row's vector and record, for benchmarks and exact comparisons. */
  vectors(): { seq: number; vector: Float32Array }[] {
    const rows = this.rows;
    if (!rows) return [];
    const out = [];
    for (let row = 0; row < rows.count; row++) if (rows.alive[row]) out.push({ seq: rows.seqOf[row], vector: rows.vector(row) });
    return out;
  }

  /** Writes rows, graph and meta under a new version (temp file, fsync, rename), then drops the old version. */
  snapshot(): void {
    if (!this.dirty) return;
    // USearch cannot search a reloaded graph whose every entry was removed: keep no graph instead
    if (this.rows?.liveCount === 0) Object.assign(this, { rows: null, graph: null, mapped: false });
    if (this.rows && this.rows.count > 1000 && this.rows.dead > this.rows.count * COMPACT_SHARE) this.compact();
    const previous = this.version;
    this.version++;
    try {
      mkdirSync(dirname(this.base), { recursive: true });
      if (this.rows) {
        writeAtomic(this.file('rows'), this.rows.toBuffer());
        const tmp = `${this.file('usearch')}.tmp`;
        this.graph!.save(tmp);
        renameSync(tmp, this.file('usearch'));
      }
      const meta: Meta = {
        format: FORMAT, config: this.config, version: this.version, seq: this.seq, failed: [...this.failed],
        stamped: this.stamped ? [...this.stamped] : null, stamps: [...this.stamps], vocabulary: [...this.vocabulary],
      };
      writeAtomic(`${this.base}.json`, Buffer.from(JSON.stringify(meta)));
    } catch (err) {
      // the files of the last good version stay what the index opens from; this one's go
      for (const file of [this.file('rows'), `${this.file('rows')}.tmp`, this.file('usearch'), `${this.file('usearch')}.tmp`, `${this.base}.json.tmp`]) rmSync(file, { force: true });
      this.version = previous;
      throw asDiskFull(err, 'a vector index');
    }
    for (const ext of ['rows', 'usearch']) rmSync(this.file(ext, previous), { force: true });
    this.dirty = false;
  }

  /** Removes the files of every version. */
  destroy(): void {
    const name = basename(this.base);
    if (!existsSync(dirname(this.base))) return;
    for (const file of readdirSync(dirname(this.base))) if (file.startsWith(`${name}.`)) rmSync(join(dirname(this.base), file), { force: true });
  }

  private file(ext: string, version = this.version): string {
    return `${this.base}.${version}.${ext}`;
  }

  private newGraph(dims: number): Index {
    return new Index({ dimensions: dims, metric: MetricKind.Cos, quantization: this.scalar, ...HNSW, multi: false });
  }

  /** A graph that can change: created on the first vector, or copied into memory from its mapped file. */
  private writable(dims: number): void {
    if (!this.rows) {
      this.rows = new Rows(dims);
      this.graph = this.newGraph(dims);
      return;
    }
    if (dims !== this.rows.dims) throw new Error(`vector of ${dims} dimensions for an index of ${this.rows.dims}`);
    if (this.mapped) {
      const graph = this.newGraph(dims);
      graph.load(this.file('usearch'));
      this.graph = graph;
      this.mapped = false;
    }
  }

  /** Rebuilds rows and graph from the live rows: no embedding, only graph inserts. */
  private compact(): void {
    const rows = this.rows!.compacted();
    const graph = this.newGraph(rows.dims);
    if (rows.count > 0) {
      const keys = BigUint64Array.from({ length: rows.count }, (_, i) => BigInt(i));
      const matrix = Float32Array.from(rows.vecs.subarray(0, rows.count * rows.dims), (x) => x / 127);
      graph.add(keys, matrix);
    }
    this.rows = rows;
    this.graph = graph;
    this.mapped = false;
  }
}

function writeAtomic(path: string, data: Buffer): void {
  const tmp = `${path}.tmp`;
  const fd = openSync(tmp, 'w');
  try {
    writeSync(fd, data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}
