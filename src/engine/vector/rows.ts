/**
 * The vectors of an index as rows: which record each row belongs to, the vector itself (unit
 * length, int8 ×127: exact search over a filtered subset needs the vectors, and USearch cannot
 * give one back), and whether the row is still alive. Row numbers are the keys in the HNSW graph.
 */
export class Rows {
  count = 0;
  dead = 0;
  seqOf = new Uint32Array(1024);
  vecs: Int8Array;
  alive = new Uint8Array(1024);
  private readonly bySeq = new Map<number, number[]>();

  constructor(readonly dims: number) {
    this.vecs = new Int8Array(1024 * dims);
  }

  get liveCount(): number {
    return this.count - this.dead;
  }

  rowsOf(seq: number): number[] | undefined {
    return this.bySeq.get(seq);
  }

  seqs(): IterableIterator<number> {
    return this.bySeq.keys();
  }

  /** Appends a unit vector for `seq`; returns its row. */
  push(seq: number, v: Float32Array): number {
    if (this.count === this.seqOf.length) this.grow();
    const row = this.count++;
    this.seqOf[row] = seq;
    this.alive[row] = 1;
    const off = row * this.dims;
    for (let j = 0; j < this.dims; j++) this.vecs[off + j] = Math.round(Math.max(-1, Math.min(1, v[j])) * 127);
    const list = this.bySeq.get(seq);
    if (list) list.push(row);
    else this.bySeq.set(seq, [row]);
    return row;
  }

  /** Marks the rows of `seq` dead; returns them. */
  kill(seq: number): number[] {
    const rows = this.bySeq.get(seq) ?? [];
    for (const row of rows) this.alive[row] = 0;
    this.dead += rows.length;
    this.bySeq.delete(seq);
    return rows;
  }

  /** Cosine of a unit query with a row. */
  score(q: Float32Array, row: number): number {
    const off = row * this.dims;
    let dot = 0;
    for (let j = 0; j < this.dims; j++) dot += q[j] * this.vecs[off + j];
    return dot / 127;
  }

  vector(row: number): Float32Array {
    return Float32Array.from(this.vecs.subarray(row * this.dims, (row + 1) * this.dims), (x) => x / 127);
  }

  private grow(): void {
    const size = this.seqOf.length * 2;
    const seqOf = new Uint32Array(size);
    seqOf.set(this.seqOf);
    const alive = new Uint8Array(size);
    alive.set(this.alive);
    const vecs = new Int8Array(size * this.dims);
    vecs.set(this.vecs);
    Object.assign(this, { seqOf, alive, vecs });
  }

  /** The live rows only, renumbered in order. */
  compacted(): Rows {
    const out = new Rows(this.dims);
    for (let row = 0; row < this.count; row++) {
      if (!this.alive[row]) continue;
      if (out.count === out.seqOf.length) out.grow();
      const to = out.count++;
      out.seqOf[to] = this.seqOf[row];
      out.alive[to] = 1;
      out.vecs.set(this.vecs.subarray(row * this.dims, (row + 1) * this.dims), to * this.dims);
      const list = out.bySeq.get(this.seqOf[row]);
      if (list) list.push(to);
      else out.bySeq.set(this.seqOf[row], [to]);
    }
    return out;
  }

  toBuffer(): Buffer {
    const head = Buffer.alloc(8);
    head.writeUInt32LE(this.dims, 0);
    head.writeUInt32LE(this.count, 4);
    const part = (a: ArrayBufferView, bytes: number) => Buffer.from(a.buffer, a.byteOffset, bytes);
    return Buffer.concat([head, part(this.seqOf, this.count * 4), part(this.alive, this.count), part(this.vecs, this.count * this.dims)]);
  }

  static fromBuffer(buf: Buffer): Rows {
    const dims = buf.readUInt32LE(0);
    const count = buf.readUInt32LE(4);
    const rows = new Rows(dims);
    const capacity = Math.max(1024, count);
    rows.seqOf = new Uint32Array(capacity);
    rows.alive = new Uint8Array(capacity);
    rows.vecs = new Int8Array(capacity * dims);
    let at = 8;
    rows.seqOf.set(new Uint32Array(Uint8Array.from(buf.subarray(at, at + count * 4)).buffer));
    at += count * 4;
    rows.alive.set(buf.subarray(at, at + count));
    at += count;
    rows.vecs.set(new Int8Array(buf.buffer, buf.byteOffset + at, count * dims));
    rows.count = count;
    for (let row = 0; row < count; row++) {
      if (!rows.alive[row]) {
        rows.dead++;
        continue;
      }
      const seq = rows.seqOf[row];
      const list = rows.bySeq.get(seq);
      if (list) list.push(row);
      else rows.bySeq.set(seq, [row]);
    }
    return rows;
  }
}
