import { closeSync, fstatSync, fsyncSync, openSync, readSync, renameSync, rmSync, writeSync } from 'node:fs';

/**
 * A sealed text segment on disk. Postings come first so that a merge can stream them out before
 * it knows the rest; the footer at the end says where every section is:
 *
 *   postings (doc, tf) u32 pairs | seqs f64[n] | field lengths u32[n × fields]
 *   | terms (UTF-8, sorted, concatenated) | term starts u32[terms + 1] (bytes)
 *   | posting starts u32[terms × fields + 1] | first term of each block (UTF-8) | their starts u32[blocks + 1]
 *   | footer (JSON) | u32 footer length | "SVCSEG02"
 *
 * A term's postings for field f are the pairs from posting start [term × fields + f] to the next one;
 * docs are positions in the seq array, ascending. Terms are read in blocks of `TERM_BLOCK`: only
 * each block's first term stays in memory, so a dictionary of millions of ids costs little heap.
 */
const MAGIC = 'SVCSEG02';
/** Terms per block of the dictionary. */
export const TERM_BLOCK = 64;

export interface SegmentFooter<M = unknown> {
  meta: M;
  fields: string[];
  docs: number;
  terms: number;
  /** byte length of each section after the postings, in order */
  sections: number[];
  postingBytes: number;
}

/** Writes a segment: postings one term at a time as they come, the rest at `finish` (fsync, then rename into place). */
export class SegmentWriter {
  private readonly fd: number;
  private readonly tmp: string;
  private postingPairs = 0;
  // a merge writes millions of terms: typed arrays and byte chunks, not a JS value per term
  private readonly postingStarts = new Numbers();
  private readonly termStarts = new Numbers();
  private termText = Buffer.alloc(1 << 16);
  private termBytes = 0;
  private readonly firsts: string[] = [];
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(private readonly path: string, private readonly fieldCount: number) {
    this.tmp = `${path}.tmp`;
    this.fd = openSync(this.tmp, 'w');
  }

  /** A term, in sorted order, with its postings per field: (doc, tf) pairs, docs ascending (empty for a field without any). */
  term(term: string, perField: Uint32Array[]): void {
    if (this.termStarts.length === 0) {
      this.termStarts.push(0);
      this.postingStarts.push(0);
    }
    if (this.termBytes + term.length * 3 > this.termText.length) {
      const grown = Buffer.alloc(Math.max(this.termText.length * 2, this.termBytes + term.length * 3));
      this.termText.copy(grown, 0, 0, this.termBytes);
      this.termText = grown;
    }
    if ((this.termStarts.length - 1) % TERM_BLOCK === 0) this.firsts.push(term);
    this.termBytes += this.termText.write(term, this.termBytes, 'utf8');
    this.termStarts.push(this.termBytes);
    for (let f = 0; f < this.fieldCount; f++) {
      const pairs = perField[f];
      this.postingPairs += pairs.length / 2;
      this.postingStarts.push(this.postingPairs);
      if (pairs.length > 0) this.push(Buffer.from(pairs.buffer, pairs.byteOffset, pairs.byteLength));
    }
  }

  finish<M>(seqs: Float64Array, lengths: Uint32Array, fields: string[], meta: M): void {
    try {
      this.flush();
      if (this.termStarts.length === 0) {
        this.termStarts.push(0);
        this.postingStarts.push(0);
      }
      const text = this.termText.subarray(0, this.termBytes);
      const firsts = this.firsts.map((t) => Buffer.from(t, 'utf8'));
      const firstStarts = new Uint32Array(firsts.length + 1);
      firsts.forEach((b, k) => (firstStarts[k + 1] = firstStarts[k] + b.length));
      const sections = [
        Buffer.from(seqs.buffer, seqs.byteOffset, seqs.byteLength),
        Buffer.from(lengths.buffer, lengths.byteOffset, lengths.byteLength),
        text,
        this.termStarts.bytes(),
        this.postingStarts.bytes(),
        Buffer.concat(firsts),
        Buffer.from(firstStarts.buffer),
      ];
      const terms = this.termStarts.length - 1;
      const footer: SegmentFooter<M> = { meta, fields, docs: seqs.length, terms, sections: sections.map((s) => s.length), postingBytes: this.postingPairs * 8 };
      const json = Buffer.from(JSON.stringify(footer), 'utf8');
      const tail = Buffer.alloc(12);
      tail.writeUInt32LE(json.length, 0);
      tail.write(MAGIC, 4, 'latin1');
      for (const s of [...sections, json, tail]) writeSync(this.fd, s);
      fsyncSync(this.fd);
      closeSync(this.fd);
      renameSync(this.tmp, this.path);
    } catch (err) {
      this.abandon();
      throw err;
    }
  }

  /** Gives the file up (a merge whose segments went away, or a full disk). */
  abandon(): void {
    try {
      closeSync(this.fd);
    } catch {
      // already closed
    }
    rmSync(this.tmp, { force: true }); // a half-written copy would only hold on to the space
  }

  private push(b: Buffer): void {
    this.pending.push(b);
    this.pendingBytes += b.length;
    if (this.pendingBytes >= 1 << 20) this.flush();
  }

  private flush(): void {
    if (this.pending.length === 0) return;
    writeSync(this.fd, Buffer.concat(this.pending));
    this.pending = [];
    this.pendingBytes = 0;
  }
}

/** A growing list of u32. */
class Numbers {
  private data = new Uint32Array(1024);
  length = 0;

  push(n: number): void {
    if (this.length === this.data.length) {
      const grown = new Uint32Array(this.data.length * 2);
      grown.set(this.data);
      this.data = grown;
    }
    this.data[this.length++] = n;
  }

  bytes(): Buffer {
    return Buffer.from(this.data.buffer, 0, this.length * 4);
  }
}

/** What a segment keeps in memory: seqs, field lengths and each term block's first term; the rest stays in the file. */
export interface SegmentContents<M = unknown> {
  footer: SegmentFooter<M>;
  seqs: Float64Array;
  lengths: Uint32Array;
  /** the first term of each block of `TERM_BLOCK` terms */
  firsts: string[];
  /** file offsets of the terms, term starts and posting starts sections */
  at: { terms: number; termStarts: number; postingStarts: number };
}

/** A block of the term dictionary: its terms and their posting starts (one more than terms × fields). */
export interface TermBlock {
  terms: string[];
  postingStarts: Uint32Array;
  /** about what it holds in the heap */
  byteLength: number;
}

/** Opens a segment file: answers its descriptor (kept open for terms and postings) and its contents. */
export function openSegmentFile<M>(path: string): { fd: number; contents: SegmentContents<M> } {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const tail = Buffer.alloc(12);
    if (size < 12 || readSync(fd, tail, 0, 12, size - 12) !== 12 || tail.toString('latin1', 4) !== MAGIC) throw new Error(`${path} is not a text segment`);
    const jsonLength = tail.readUInt32LE(0);
    const json = Buffer.alloc(jsonLength);
    readSync(fd, json, 0, jsonLength, size - 12 - jsonLength);
    const footer = JSON.parse(json.toString('utf8')) as SegmentFooter<M>;
    const starts = [footer.postingBytes];
    for (const length of footer.sections) starts.push(starts[starts.length - 1] + length);
    if (starts[starts.length - 1] + jsonLength + 12 !== size) throw new Error(`${path} is damaged`);
    const section = (k: number): ArrayBuffer => readBytes(fd, starts[k], footer.sections[k]);
    const firstText = Buffer.from(section(5));
    const firstStarts = new Uint32Array(section(6));
    const firsts = Array.from({ length: firstStarts.length - 1 }, (_, k) => firstText.toString('utf8', firstStarts[k], firstStarts[k + 1]));
    const contents = { footer, seqs: new Float64Array(section(0)), lengths: new Uint32Array(section(1)), firsts, at: { terms: starts[2], termStarts: starts[3], postingStarts: starts[4] } };
    return { fd, contents };
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

/** Reads block `b` of the term dictionary. */
export function readTermBlock(fd: number, c: SegmentContents, b: number): TermBlock {
  const fields = c.footer.fields.length;
  const from = b * TERM_BLOCK;
  const count = Math.min(TERM_BLOCK, c.footer.terms - from);
  const starts = new Uint32Array(readBytes(fd, c.at.termStarts + from * 4, (count + 1) * 4));
  const text = Buffer.from(readBytes(fd, c.at.terms + starts[0], starts[count] - starts[0]));
  const terms = Array.from({ length: count }, (_, k) => text.toString('utf8', starts[k] - starts[0], starts[k + 1] - starts[0]));
  const postingStarts = new Uint32Array(readBytes(fd, c.at.postingStarts + from * fields * 4, (count * fields + 1) * 4));
  return { terms, postingStarts, byteLength: 2 * text.length + 32 * count + postingStarts.byteLength };
}

/** Reads `pairs` (doc, tf) pairs starting at pair `start` of the postings. */
export function readPostings(fd: number, start: number, pairs: number): Uint32Array {
  return new Uint32Array(readBytes(fd, start * 8, pairs * 8));
}

/** How much a sequential reader reads at once. */
const WINDOW = 1 << 20;

/**
 * Reads postings in file order through a window of a megabyte: a merge walks every list once, in
 * order, and one read per list (millions of ids, each a list of one) would be a system call each.
 */
export class SequentialPostings {
  private window: Uint8Array = new Uint8Array(0);
  private from = 0;

  constructor(private readonly fd: number) {}

  /** `pairs` (doc, tf) pairs starting at pair `start`: a copy the caller may change. */
  read(start: number, pairs: number): Uint32Array {
    const a = start * 8;
    const b = a + pairs * 8;
    if (a < this.from || b > this.from + this.window.length) {
      this.window = readUpTo(this.fd, a, Math.max(WINDOW, b - a));
      this.from = a;
      if (this.window.length < b - a) throw new Error('a text segment is truncated');
    }
    return new Uint32Array(this.window.slice(a - this.from, b - this.from).buffer);
  }
}

/** Up to `length` bytes from `position`: fewer at the end of the file. */
function readUpTo(fd: number, position: number, length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  let done = 0;
  while (done < length) {
    const n = readSync(fd, bytes, done, length - done, position + done);
    if (n === 0) break;
    done += n;
  }
  return done === length ? bytes : bytes.subarray(0, done);
}

function readBytes(fd: number, position: number, length: number): ArrayBuffer {
  const bytes = readUpTo(fd, position, length);
  if (bytes.length < length) throw new Error('a text segment is truncated');
  return bytes.buffer as ArrayBuffer;
}
