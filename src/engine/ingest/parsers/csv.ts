import { ParserOptions } from 'fast-csv';
// fast-csv's streaming API reports no positions; its synchronous row parser, fed one row at a
// time, lets this file own row boundaries (and so line numbers) while fast-csv owns the fields.
import { Parser } from '@fast-csv/parse/build/src/parser/Parser.js';
import type { ParsedItem } from '../../records.js';
import { asBuffer, BAD_UTF8, decodeUtf8, isBlank, MAX_LINE_BYTES } from '../lines.js';

/** A header row, then one object per data row, each with the line the row starts on. */
export async function* parseCsv(input: AsyncIterable<Buffer>): AsyncGenerator<ParsedItem> {
  const rows = new RowReader();
  for await (const batch of rawRows(input)) {
    for (const raw of batch) {
      const item = rows.read(raw);
      if (item) yield item;
      if (rows.failed) return;
    }
  }
}

async function* rawRows(input: AsyncIterable<Buffer>): AsyncGenerator<RawRow[]> {
  const cutter = new RowCutter();
  for await (const chunk of input) {
    const out: RawRow[] = [];
    cutter.push(asBuffer(chunk), out);
    if (out.length > 0) yield out;
  }
  const out: RawRow[] = [];
  cutter.end(out);
  yield out;
}

/** A row's bytes as cut from the input, not yet split into fields. */
type RawRow = { line: number; bytes: Buffer | null };

/** Cell text becomes a number or boolean only when nothing is lost, so `081109` stays text. */
export function csvCell(s: string): string | number | boolean {
  if (s === 'true') return true;
  if (s === 'false') return false;
  const c = s.charCodeAt(0);
  if ((c >= 0x30 && c <= 0x39) || c === 0x2d) {
    const n = Number(s);
    if (Number.isFinite(n) && String(n) === s) return n;
  }
  return s;
}

class RowReader {
  private header: string[] | null = null;
  private readonly parser = new Parser(new ParserOptions({}));
  /** Set when the header cannot be read: no row after it means anything. */
  failed = false;

  read(raw: RawRow): ParsedItem | null {
    const { line } = raw;
    const fields = this.fields(raw);
    if (fields === null) return null;
    if (typeof fields === 'string') {
      if (this.header === null) this.failed = true;
      return { line, error: fields };
    }
    const header = this.header;
    if (header === null) {
      this.header = fields;
      return null;
    }
    if (fields.length !== header.length) {
      return { line, error: `expected ${header.length} columns, got ${fields.length}` };
    }
    const value: Record<string, unknown> = {};
    for (let j = 0; j < header.length; j++) {
      const key = header[j];
      // A column named __proto__ must stay data, not become the prototype.
      if (key === '__proto__') Object.defineProperty(value, key, { value: csvCell(fields[j]), enumerable: true, writable: true, configurable: true });
      else value[key] = csvCell(fields[j]);
    }
    return { line, value };
  }

  /** The row's fields, an error message, or null for a blank or whitespace-only row. */
  private fields(raw: RawRow): string[] | string | null {
    if (raw.bytes === null) return 'row exceeds 1 MiB';
    const text = decodeUtf8(raw.bytes);
    if (text === null) return BAD_UTF8;
    if (isBlank(text)) return null;
    // A row with no quotes splits the same by hand, and fast-csv is some 20x slower at it.
    if (!text.includes('"') && !text.includes('\r') && text.charCodeAt(0) !== 0xfeff) return text.split(',');
    let rows: string[][];
    try {
      rows = this.parser.parse(text, false).rows;
    } catch (e) {
      return `invalid CSV: ${(e as Error).message}`;
    }
    if (rows.length === 0) return null;
    if (rows.length > 1) return 'invalid CSV: stray carriage return inside a row';
    return rows[0];
  }
}

const FIELD_START = 0;
const UNQUOTED = 1;
const QUOTED = 2;
const QUOTE_IN_QUOTED = 3; // a quote inside a quoted field: closes it, or escapes the next one

/** Finds where rows start and end: a newline ends a row unless it is inside quotes (RFC 4180). */
class RowCutter {
  private state = FIELD_START;
  private line = 1;
  private rowLine = 1;
  private pieces: Buffer[] = [];
  private pieceBytes = 0;
  private oversize = false;

  push(chunk: Buffer, out: RawRow[]): void {
    let state = this.state;
    let rowFrom = 0;
    const n = chunk.length;
    for (let i = 0; i < n; i++) {
      const c = chunk[i];
      if (c === 0x0a) {
        this.line++;
        if (state === QUOTED) continue;
        this.finishRow(chunk.subarray(rowFrom, i), out);
        rowFrom = i + 1;
        state = FIELD_START;
        continue;
      }
      if (state === UNQUOTED) {
        if (c === 0x2c) state = FIELD_START;
      } else if (state === QUOTED) {
        if (c === 0x22) state = QUOTE_IN_QUOTED;
      } else if (state === FIELD_START) {
        // fast-csv lets blanks precede an opening quote.
        if (c === 0x22) state = QUOTED;
        else if (c !== 0x2c && c !== 0x20 && c !== 0x09) state = UNQUOTED;
      } else {
        state = c === 0x22 ? QUOTED : c === 0x2c ? FIELD_START : UNQUOTED;
      }
    }
    this.state = state;
    this.hold(chunk.subarray(rowFrom));
  }

  end(out: RawRow[]): void {
    if (this.pieceBytes > 0 || this.oversize) this.finishRow(Buffer.alloc(0), out);
  }

  private hold(piece: Buffer): void {
    if (this.oversize || piece.length === 0) return;
    this.pieceBytes += piece.length;
    // One byte of slack for the CR of a CRLF.
    if (this.pieceBytes > MAX_LINE_BYTES + 1) {
      this.oversize = true;
      this.pieces = [];
      return;
    }
    this.pieces.push(piece);
  }

  private finishRow(tail: Buffer, out: RawRow[]): void {
    this.hold(tail);
    const line = this.rowLine;
    this.rowLine = this.line;
    const { oversize, pieces, pieceBytes } = this;
    this.pieces = [];
    this.pieceBytes = 0;
    this.oversize = false;
    if (oversize) {
      out.push({ line, bytes: null });
      return;
    }
    let bytes = pieces.length === 0 ? Buffer.alloc(0) : pieces.length === 1 ? pieces[0] : Buffer.concat(pieces, pieceBytes);
    if (bytes.length > 0 && bytes[bytes.length - 1] === 0x0d) bytes = bytes.subarray(0, bytes.length - 1);
    if (line === 1 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) bytes = bytes.subarray(3);
    out.push({ line, bytes: bytes.length > MAX_LINE_BYTES ? null : bytes });
  }
}
