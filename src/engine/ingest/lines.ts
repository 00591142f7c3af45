import { isUtf8 } from 'node:buffer';
import { LIMITS } from '../../api/limits.js';

/** Longest line (or record) accepted, in bytes, excluding its line ending. */
export const MAX_LINE_BYTES = LIMITS.lineBytes;
export const TOO_LONG = 'line exceeds 1 MiB';
export const BAD_UTF8 = 'invalid UTF-8';

/** One physical line: its text without the line ending, or why it was refused. */
export type LineItem = { line: number; value: string } | { line: number; error: string };

const LF = 0x0a;
const CR = 0x0d;
// ignoreBOM keeps a U+FEFF inside a line; only the one opening the input is dropped, by hand.
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Decodes strict UTF-8; null when the bytes are not valid UTF-8. */
export function decodeUtf8(bytes: Uint8Array): string | null {
  try {
    return decoder.decode(bytes);
  } catch {
    return null;
  }
}

/**
 * Whether a line holds nothing but whitespace (any Unicode space, tab, BOM): such lines are
 * skipped in every format. A line that starts with a visible character answers at its first one.
 */
export const isBlank = (text: string): boolean => !/\S/.test(text);

/** Some streams (fetch, undici) hand out plain Uint8Arrays; Buffer's methods are needed here. */
export function asBuffer(chunk: Uint8Array): Buffer {
  return Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}

/**
 * Cuts a byte stream into lines, one batch per input chunk, so callers pay one async hop per
 * chunk rather than per line. Memory stays bounded by the chunk plus at most ~1 MiB of a
 * line that spans chunks.
 */
export async function* lineBatches(input: AsyncIterable<Buffer>): AsyncGenerator<LineItem[]> {
  const splitter = new LineSplitter();
  for await (const chunk of input) {
    const out: LineItem[] = [];
    splitter.push(asBuffer(chunk), out);
    if (out.length > 0) yield out;
  }
  const out: LineItem[] = [];
  splitter.end(out);
  if (out.length > 0) yield out;
}

/** Lines of a byte stream with their 1-based numbers. */
export async function* readLines(input: AsyncIterable<Buffer>): AsyncGenerator<LineItem> {
  for await (const batch of lineBatches(input)) yield* batch;
}

class LineSplitter {
  private line = 1;
  /** Pieces of a line that started in an earlier chunk. */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Inside an oversize line: drop bytes until its newline. */
  private skipping = false;

  push(chunk: Buffer, out: LineItem[]): void {
    let start = 0;
    if (this.skipping || this.pendingBytes > 0) {
      const nl = chunk.indexOf(LF);
      if (nl === -1) {
        this.hold(chunk);
        return;
      }
      this.hold(chunk.subarray(0, nl));
      this.finishPending(out);
      start = nl + 1;
    }
    const last = chunk.lastIndexOf(LF);
    if (last >= start) {
      this.emitRegion(chunk, start, last, out);
      start = last + 1;
    }
    if (start < chunk.length) this.hold(chunk.subarray(start));
  }

  end(out: LineItem[]): void {
    if (this.skipping || this.pendingBytes > 0) this.finishPending(out);
  }

  private hold(piece: Buffer): void {
    if (this.skipping || piece.length === 0) return;
    this.pendingBytes += piece.length;
    // One byte of slack for a CR that the newline may still turn into a line ending.
    if (this.pendingBytes > MAX_LINE_BYTES + 1) {
      this.skipping = true;
      this.pending = [];
      this.pendingBytes = 0;
      return;
    }
    this.pending.push(piece);
  }

  private finishPending(out: LineItem[]): void {
    if (this.skipping) {
      out.push({ line: this.line++, error: TOO_LONG });
      this.skipping = false;
      return;
    }
    const bytes = this.pending.length === 1 ? this.pending[0] : Buffer.concat(this.pending, this.pendingBytes);
    this.pending = [];
    this.pendingBytes = 0;
    this.emitLine(bytes, 0, bytes.length, out);
  }

  /** Lines ending at each LF in chunk[start..last]; last is the index of an LF. */
  private emitRegion(chunk: Buffer, start: number, last: number, out: LineItem[]): void {
    const region = chunk.subarray(start, last);
    if (region.length > MAX_LINE_BYTES || !isUtf8(region)) {
      // Slow path only when some line may be refused.
      let s = start;
      while (s <= last) {
        const nl = chunk.indexOf(LF, s);
        this.emitLine(chunk, s, nl, out);
        s = nl + 1;
      }
      return;
    }
    // One decode per chunk is several times faster than one per line.
    const text = chunk.toString('utf8', start, last + 1);
    let line = this.line;
    let s = 0;
    if (line === 1 && text.charCodeAt(0) === 0xfeff) s = 1;
    for (;;) {
      const nl = text.indexOf('\n', s);
      if (nl === -1) break;
      const e = nl > s && text.charCodeAt(nl - 1) === CR ? nl - 1 : nl;
      out.push({ line: line++, value: text.slice(s, e) });
      s = nl + 1;
    }
    this.line = line;
  }

  private emitLine(bytes: Buffer, s: number, e: number, out: LineItem[]): void {
    const line = this.line++;
    if (e > s && bytes[e - 1] === CR) e--;
    if (line === 1 && e - s >= 3 && bytes[s] === 0xef && bytes[s + 1] === 0xbb && bytes[s + 2] === 0xbf) s += 3;
    if (e - s > MAX_LINE_BYTES) {
      out.push({ line, error: TOO_LONG });
      return;
    }
    const value = decodeUtf8(bytes.subarray(s, e));
    out.push(value === null ? { line, error: BAD_UTF8 } : { line, value });
  }
}
