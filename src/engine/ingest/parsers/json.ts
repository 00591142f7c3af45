import type { ParsedItem } from '../../records.js';
import { asBuffer, BAD_UTF8, decodeUtf8, MAX_LINE_BYTES } from '../lines.js';
import { parseObjectText } from './ndjson.js';

/**
 * One JSON object, or an array of objects, streamed: the top-level array is cut into elements
 * by a byte scan so each is parsed on its own and a bad one costs only itself.
 */
export async function* parseJson(input: AsyncIterable<Buffer>): AsyncGenerator<ParsedItem> {
  const cutter = new ElementCutter();
  for await (const chunk of input) {
    const out: ParsedItem[] = [];
    cutter.push(asBuffer(chunk), out);
    yield* out;
    if (cutter.state === DONE) return;
  }
  const out: ParsedItem[] = [];
  cutter.end(out);
  yield* out;
}

const TOP = 0; // before the top-level value
const BEFORE_ELEM = 1; // inside the array, before an element or the closing bracket
const IN_ELEM = 2;
const AFTER_TOP = 3;
const DONE = 4; // refused: the rest of the input is ignored

const BOM = [0xef, 0xbb, 0xbf];
const TOO_LONG = 'element exceeds 1 MiB';

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

class ElementCutter {
  state = TOP;
  private line = 1;
  /** Line of the last non-whitespace byte: where a truncation shows. */
  private sigLine = 1;
  private seen = 0;
  private inArray = false;
  private afterComma = false;
  private depth = 0;
  private inString = false;
  private escaped = false;
  private elemLine = 0;
  private pieces: Buffer[] = [];
  private pieceBytes = 0;
  private oversize = false;

  push(chunk: Buffer, out: ParsedItem[]): void {
    let elemFrom = 0;
    const n = chunk.length;
    for (let i = 0; i < n; i++) {
      const c = chunk[i];
      if (c === 0x0a) this.line++;
      else if (!isSpace(c)) this.sigLine = this.line;
      switch (this.state) {
        case IN_ELEM:
          if (this.inString) {
            if (this.escaped) this.escaped = false;
            else if (c === 0x5c) this.escaped = true;
            else if (c === 0x22) this.inString = false;
          } else if (c === 0x22) {
            this.inString = true;
          } else if (c === 0x7b || c === 0x5b) {
            this.depth++;
          } else if (this.depth === 0 && this.inArray && (c === 0x2c || c === 0x5d)) {
            this.finishElement(chunk.subarray(elemFrom, i), out);
            this.state = c === 0x2c ? BEFORE_ELEM : AFTER_TOP;
            this.afterComma = c === 0x2c;
          } else if (c === 0x7d || c === 0x5d) {
            if (this.depth > 0) this.depth--;
            if (this.depth === 0 && !this.inArray) {
              this.finishElement(chunk.subarray(elemFrom, i + 1), out);
              this.state = AFTER_TOP;
            }
          }
          break;
        case BEFORE_ELEM:
          if (isSpace(c)) break;
          if (c === 0x5d) {
            if (this.afterComma) out.push({ line: this.line, error: 'invalid JSON: trailing comma in array' });
            this.state = AFTER_TOP;
          } else if (c === 0x2c) {
            out.push({ line: this.line, error: 'invalid JSON: missing array element' });
            this.afterComma = true;
          } else {
            elemFrom = i;
            this.startElement(c);
          }
          break;
        case TOP:
          if (this.seen + i < 3 && c === BOM[this.seen + i]) break;
          if (isSpace(c)) break;
          if (c === 0x5b) {
            this.inArray = true;
            this.state = BEFORE_ELEM;
          } else if (c === 0x7b) {
            elemFrom = i;
            this.startElement(c);
          } else {
            this.refuse(out, this.line, 'expected a JSON object or an array of objects');
            return;
          }
          break;
        case AFTER_TOP:
          if (isSpace(c)) break;
          this.refuse(out, this.line, 'unexpected data after the top-level JSON value');
          return;
        default:
          return;
      }
    }
    this.seen += n;
    if (this.state === IN_ELEM) this.hold(chunk.subarray(elemFrom));
  }

  end(out: ParsedItem[]): void {
    if (this.state === BEFORE_ELEM) {
      out.push({ line: this.sigLine, error: 'unexpected end of input: array not closed' });
    } else if (this.state === IN_ELEM) {
      if (this.inArray && this.depth === 0 && !this.inString) {
        this.finishElement(Buffer.alloc(0), out);
        out.push({ line: this.sigLine, error: 'unexpected end of input: array not closed' });
      } else {
        out.push({ line: this.elemLine, error: 'unexpected end of input: value not closed' });
      }
    }
    this.state = DONE;
  }

  private refuse(out: ParsedItem[], line: number, error: string): void {
    out.push({ line, error });
    this.state = DONE;
  }

  private startElement(first: number): void {
    this.state = IN_ELEM;
    this.elemLine = this.line;
    this.inString = first === 0x22;
    this.escaped = false;
    this.depth = first === 0x7b || first === 0x5b ? 1 : 0;
  }

  private hold(piece: Buffer): void {
    if (this.oversize) return;
    this.pieceBytes += piece.length;
    if (this.pieceBytes > MAX_LINE_BYTES) {
      this.oversize = true;
      this.pieces = [];
      return;
    }
    this.pieces.push(piece);
  }

  private finishElement(tail: Buffer, out: ParsedItem[]): void {
    this.hold(tail);
    const line = this.elemLine;
    const { oversize, pieces, pieceBytes } = this;
    this.pieces = [];
    this.pieceBytes = 0;
    this.oversize = false;
    if (oversize) {
      out.push({ line, error: TOO_LONG });
      return;
    }
    const text = decodeUtf8(pieces.length === 1 ? pieces[0] : Buffer.concat(pieces, pieceBytes));
    if (text === null) {
      out.push({ line, error: BAD_UTF8 });
      return;
    }
    const parsed = parseObjectText(text);
    if (parsed === undefined) out.push({ line, error: 'invalid JSON: missing array element' });
    else out.push('error' in parsed ? { line, error: parsed.error } : { line, value: parsed.value });
  }
}
