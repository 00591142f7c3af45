import MiniSearch, { type Options } from 'minisearch';
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';

/**
 * A text index on disk, in a binary layout that loads in a fraction of the time of MiniSearch's
 * JSON (which builds an object per term and parses every document id from a string). The postings
 * of a term stay in the file's arrays until a search or an update first touches the term:
 *
 *   "SVCTXT02" | u32 header length | header (JSON) | sections, each 8-byte aligned:
 *   ids f64[n] · short ids u32[n] · field lengths u32[n × fields] · terms (UTF-8, NUL-separated)
 *   · per term: field count, then (field id, postings) per field, u32 · postings: short ids u32, term frequencies u32
 *
 * It reads and writes MiniSearch's own members: the tests round-trip every kind of index through
 * it, so an upgrade of MiniSearch that changes them fails there first.
 */
const MAGIC = 'SVCTXT02';

/** MiniSearch's own members that svc reads and writes (snapshots, the in-memory segment). */
export interface Internals {
  _index: Map<string, Map<number, Map<number, number>>> & {
    set(term: string, data: Map<number, Map<number, number>>): void;
    fetch(term: string, initial: () => Map<number, Map<number, number>>): Map<number, Map<number, number>>;
  };
  _options: Required<Pick<Options<any>, 'fields' | 'extractField' | 'stringifyField' | 'tokenize' | 'processTerm'>>;
  addDocumentId(id: unknown): number;
  addFieldLength(doc: number, fieldId: number, count: number, length: number): void;
  _documentCount: number;
  _nextId: number;
  _documentIds: Map<number, unknown>;
  _idToShortId: Map<unknown, number>;
  _fieldIds: Record<string, number>;
  _fieldLength: Map<number, number[]>;
  _avgFieldLength: number[];
  _dirtCount: number;
}

interface Header<M> {
  meta: M;
  documentCount: number;
  nextId: number;
  fieldIds: Record<string, number>;
  averageFieldLength: number[];
  sections: number[];
}

const internals = (mini: MiniSearch<any>) => mini as unknown as Internals;
const pad8 = (n: number) => (n + 7) & ~7;

/** Writes `mini` with `meta` (temp file, fsync, rename). Postings of discarded documents are left out. */
export function writeSnapshot<M>(path: string, mini: MiniSearch<any>, meta: M): void {
  const m = internals(mini);
  const fieldCount = Object.keys(m._fieldIds).length;
  const n = m._documentIds.size;
  const ids = new Float64Array(n);
  const shortIds = new Uint32Array(n);
  const lengths = new Uint32Array(n * fieldCount);
  let i = 0;
  for (const [shortId, id] of m._documentIds) {
    ids[i] = id as number;
    shortIds[i] = shortId;
    const fl = m._fieldLength.get(shortId) ?? [];
    for (let f = 0; f < fieldCount; f++) lengths[i * fieldCount + f] = fl[f] ?? 0;
    i++;
  }

  const terms: string[] = [];
  const shape: number[] = [];
  let postingIds: Uint32Array = new Uint32Array(1 << 16);
  let postingTfs: Uint32Array = new Uint32Array(1 << 16);
  let p = 0;
  for (const [term, fields] of m._index) {
    const at = shape.length;
    shape.push(0);
    for (const [fieldId, freqs] of fields instanceof LazyFields ? fields.unread() : fields) {
      const countAt = shape.length + 1;
      shape.push(fieldId, 0);
      for (const [docId, tf] of freqs) {
        if (!m._documentIds.has(docId)) continue;
        if (p === postingIds.length) {
          postingIds = grow(postingIds);
          postingTfs = grow(postingTfs);
        }
        postingIds[p] = docId;
        postingTfs[p++] = tf;
        shape[countAt]++;
      }
      if (shape[countAt] === 0) shape.length -= 2;
      else shape[at]++;
    }
    if (shape[at] === 0) shape.length = at;
    else terms.push(term);
  }

  const sections = [
    Buffer.from(ids.buffer, 0, ids.byteLength),
    Buffer.from(shortIds.buffer, 0, shortIds.byteLength),
    Buffer.from(lengths.buffer, 0, lengths.byteLength),
    Buffer.from(terms.join('\0'), 'utf8'),
    Buffer.from(Uint32Array.from(shape).buffer),
    Buffer.from(postingIds.buffer, 0, p * 4),
    Buffer.from(postingTfs.buffer, 0, p * 4),
  ];
  const header: Header<M> = {
    meta, documentCount: m._documentCount, nextId: m._nextId, fieldIds: m._fieldIds, averageFieldLength: m._avgFieldLength,
    sections: sections.map((s) => s.length),
  };
  const head = Buffer.from(JSON.stringify(header), 'utf8');
  const prefix = Buffer.alloc(pad8(12 + head.length));
  prefix.write(MAGIC, 0, 'latin1');
  prefix.writeUInt32LE(head.length, 8);
  head.copy(prefix, 12);

  const tmp = `${path}.tmp`;
  const fd = openSync(tmp, 'w');
  try {
    try {
      writeSync(fd, prefix);
      for (const s of sections) {
        writeSync(fd, s);
        if (pad8(s.length) > s.length) writeSync(fd, Buffer.alloc(pad8(s.length) - s.length));
      }
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true }); // a half-written copy would only hold on to the space that ran out
    throw err;
  }
}

/** Reads a snapshot into a MiniSearch with `options`; null when the file is not one (an older format). */
export function readSnapshot<M, T>(path: string, options: Options<T>): { meta: M; mini: MiniSearch<T> } | null {
  const read = readFileSync(path);
  const buf = read.byteOffset % 8 === 0 ? read : Buffer.from(new Uint8Array(read).buffer); // typed views need alignment
  if (buf.length < 12 || buf.toString('latin1', 0, 8) !== MAGIC) return null;
  const headLength = buf.readUInt32LE(8);
  const header: Header<M> = JSON.parse(buf.toString('utf8', 12, 12 + headLength));
  let offset = pad8(12 + headLength);
  const [ids, shortIds, lengths, termBytes, shape, postingIds, postingTfs] = header.sections.map((length, k) => {
    const at = offset;
    offset += pad8(length);
    if (k === 3) return buf.subarray(at, at + length);
    return k === 0 ? new Float64Array(buf.buffer, buf.byteOffset + at, length / 8) : new Uint32Array(buf.buffer, buf.byteOffset + at, length / 4);
  }) as [Float64Array, Uint32Array, Uint32Array, Buffer, Uint32Array, Uint32Array, Uint32Array];

  const mini = new MiniSearch<T>(options);
  const m = internals(mini);
  const fieldCount = Object.keys(header.fieldIds).length;
  Object.assign(m, { _documentCount: header.documentCount, _nextId: header.nextId, _fieldIds: header.fieldIds, _avgFieldLength: header.averageFieldLength, _dirtCount: 0 });
  for (let i = 0; i < ids.length; i++) {
    m._documentIds.set(shortIds[i], ids[i]);
    m._idToShortId.set(ids[i], shortIds[i]);
    m._fieldLength.set(shortIds[i], Array.from(lengths.subarray(i * fieldCount, (i + 1) * fieldCount)));
  }
  const postings = { shape, ids: postingIds, tfs: postingTfs, live: m._documentIds };
  let s = 0;
  let p = 0;
  for (const term of termBytes.length > 0 ? termBytes.toString('utf8').split('\0') : []) {
    m._index.set(term, new LazyFields(postings, s, p));
    const fieldCount = shape[s++];
    for (let f = 0; f < fieldCount; f++, s += 2) p += shape[s + 1]; // (field id, count) pairs
  }
  return { meta: header.meta, mini };
}

interface Postings { shape: Uint32Array; ids: Uint32Array; tfs: Uint32Array; live: Map<number, unknown> }

/**
 * The field → (document → term frequency) map MiniSearch keeps per term, built from the snapshot's
 * arrays the first time it is used. Postings of documents removed since the load are left out then.
 */
class LazyFields extends Map<number, Map<number, number>> {
  private source: Postings | null;

  constructor(source: Postings, private readonly s: number, private readonly p: number) {
    super();
    this.source = source;
  }

  /** field id → postings, read straight from the arrays while the map is not built (for writing a snapshot) */
  *unread(): Generator<[number, Iterable<[number, number]>]> {
    if (!this.source) return yield* this.entries();
    const { ids, tfs } = this.source;
    for (const [fieldId, start, end] of this.ranges(this.source)) {
      yield [fieldId, (function* () {
        for (let i = start; i < end; i++) yield [ids[i], tfs[i]] as [number, number];
      })()];
    }
  }

  /** (field id, first posting, end) of each field of the term */
  private *ranges({ shape }: Postings): Generator<[number, number, number]> {
    let s = this.s;
    let p = this.p;
    for (let f = shape[s++]; f > 0; f--) {
      const fieldId = shape[s++];
      const start = p;
      p += shape[s++];
      yield [fieldId, start, p];
    }
  }

  private build(): void {
    if (!this.source) return;
    const source = this.source;
    this.source = null;
    const { ids, tfs, live } = source;
    for (const [fieldId, start, end] of this.ranges(source)) {
      const freqs = new Map<number, number>();
      for (let i = start; i < end; i++) if (live.has(ids[i])) freqs.set(ids[i], tfs[i]);
      if (freqs.size > 0) super.set(fieldId, freqs);
    }
  }

  override get size(): number { this.build(); return super.size; }
  override get(k: number) { this.build(); return super.get(k); }
  override has(k: number) { this.build(); return super.has(k); }
  override set(k: number, v: Map<number, number>) { this.build(); return super.set(k, v); }
  override delete(k: number) { this.build(); return super.delete(k); }
  override clear() { this.source = null; super.clear(); }
  override keys() { this.build(); return super.keys(); }
  override values() { this.build(); return super.values(); }
  override entries() { this.build(); return super.entries(); }
  override forEach(fn: (v: Map<number, number>, k: number, m: Map<number, Map<number, number>>) => void, thisArg?: unknown) { this.build(); super.forEach(fn, thisArg); }
  override [Symbol.iterator]() { this.build(); return super[Symbol.iterator](); }
}

function grow(a: Uint32Array): Uint32Array {
  const b = new Uint32Array(a.length * 2);
  b.set(a);
  return b;
}
