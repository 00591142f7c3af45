import { ParserOptions } from '@fast-csv/parse';
// fast-csv's streaming API reports no positions; its synchronous row parser, fed one row at a
// time, lets this file own row boundaries (and so line numbers) while fast-csv owns the fields.
import { Parser } from '@fast-csv/parse/build/src/parser/Parser.js';
import type { ParsedItem } from '../../records.js';
import { asBuffer, BAD_UTF8, decodeUtf8, isBlank, MAX_LINE_BYTES } from '../lines.js';

/** An object's bytes, read once (an iterable) or as often as asked (a function opening it again). */
export type CsvInput = AsyncIterable<Buffer> | (() => AsyncIterable<Buffer>);

/**
 * A header row, then one object per data row, each with the line the row starts on. Given a way to
 * read the object again, a first pass decides each column's type for the whole object (see
 * ColumnTypes); read once, each cell is typed on its own (see csvCell).
 */
export async function* parseCsv(input: CsvInput): AsyncGenerator<ParsedItem> {
  let types: ColumnKind[] | null = null;
  if (typeof input === 'function') {
    types = await columnTypes(input());
    input = input();
  }
  const rows = new RowReader(types);
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

/** What a whole column holds: numbers, booleans or strings; `cell` for a column typed cell by cell. */
type ColumnKind = 'number' | 'boolean' | 'string' | 'cell';

/**
 * The first pass: a column is a number column when every non-empty cell of the object round-trips
 * as a number (csvCell's test), a boolean column when every one is `true` or `false`, else a string
 * column, so `081109` and `203615` in one column are both strings. Rows the parse refuses (a wrong
 * column count, bad UTF-8) do not count. It keeps one state per column, whatever the object's size.
 */
async function columnTypes(input: AsyncIterable<Buffer>): Promise<ColumnKind[]> {
  const rows = new RowReader(null);
  let seen: ('none' | 'number' | 'boolean' | 'string')[] = [];
  for await (const batch of rawRows(input)) {
    for (const raw of batch) {
      const cells = rows.cells(raw);
      if (rows.failed) return [];
      if (cells === null) continue;
      if (seen.length === 0) seen = cells.map(() => 'none');
      for (let j = 0; j < cells.length; j++) {
        const was = seen[j];
        if (was === 'string' || cells[j] === '') continue;
        const v = csvCell(cells[j]);
        const kind = typeof v === 'number' ? 'number' : typeof v === 'boolean' ? 'boolean' : 'string';
        seen[j] = was === 'none' || was === kind ? kind : 'string';
      }
    }
  }
  return seen.map((k) => (k === 'none' ? 'string' : k));
}

/** A cell of a column whose type the first pass decided: an empty cell of a number or boolean column has no value (null). */
function typedCell(s: string, kind: ColumnKind): unknown {
  if (kind === 'string') return s;
  if (kind === 'cell') return csvCell(s);
  if (s === '') return null;
  return csvCell(s);
}

class RowReader {
  private header: string[] | null = null;
  private readonly parser = new Parser(new ParserOptions({}));
  /** Set when the header cannot be read: no row after it means anything. */
  failed = false;

  constructor(private readonly types: ColumnKind[] | null) {}

  /** The cells of a data row with the header's column count; null for the header, a blank or refused row. */
  cells(raw: RawRow): string[] | null {
    const fields = this.fields(raw);
    if (fields === null) return null;
    if (typeof fields === 'string') {
      if (this.header === null) this.failed = true;
      return null;
    }
    if (this.header === null) {
      this.header = fields;
      return null;
    }
    return fields.length === this.header.length ? fields : null;
  }

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
    const types = this.types;
    for (let j = 0; j < header.length; j++) {
      const key = header[j];
      const cell = typedCell(fields[j], types?.[j] ?? 'cell');
      // A column named __proto__ must stay data, not become the prototype.
      if (key === '__proto__') Object.defineProperty(value, key, { value: cell, enumerable: true, writable: true, configurable: true });
      else value[key] = cell;
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
