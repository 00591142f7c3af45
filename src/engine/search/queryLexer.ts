import { hasWildcard } from './glob.js';

/**
 * The tokens of a `q`. A clause (`level:ERROR`, `"a phrase"`, `ip:10.0.0.*`, `ms:[1 TO 5}`,
 * `/re/i`) is one token, so the parser above only sees operators, parentheses and clauses.
 * Every character is read a bounded number of times: text that turns out to be no field name,
 * regex or range is read once more as a word, no scan starts over from an earlier token, and no
 * regular expression runs over more than one character.
 */

/** `:=` is read as `:`. */
export type Op = ':' | '>' | '>=' | '<' | '<=';

export type Value =
  /** As typed (`raw`, escapes kept, for wildcards) and as meant (`text`, escapes resolved). */
  | { kind: 'word'; raw: string; text: string; wildcard: boolean }
  | { kind: 'quoted'; text: string }
  | { kind: 'regex'; source: string; flags: string }
  | { kind: 'range'; lo: Bound; hi: Bound };

/** A range end; `value` null is an open end (`*`). */
export interface Bound {
  value: string | null;
  inclusive: boolean;
}

export type Token =
  | { type: '(' | ')' | 'AND' | 'OR' | 'NOT' | '-' | '+' | 'end'; pos: number }
  | { type: 'clause'; pos: number; field: string | null; op: Op; value: Value };

/** A syntax error at `pos` (0-based), told in words the user can act on. */
export class QuerySyntaxError extends Error {
  constructor(message: string, readonly pos: number) {
    super(message);
  }
}

const KEYWORDS = new Set(['AND', 'OR', 'NOT']);
// Characters that end an unquoted field name; a name that meets one is a word instead.
const NOT_IN_NAME = new Set(['"', "'", '[', ']', '{', '}', '\\', '(', ')']);
const FIELD_START = /^[\p{L}_$@]$/u;
const REGEX_FLAGS = new Set(['d', 'g', 'i', 'm', 's', 'u', 'y']);
const NON_ASCII_SPACE = /^\s$/;

export function isSpace(c: string): boolean {
  const code = c.charCodeAt(0);
  return code === 32 || (code >= 9 && code <= 13) || (code > 127 && NON_ASCII_SPACE.test(c));
}

export class Lexer {
  private i = 0;

  constructor(private readonly q: string) {}

  next(): Token {
    const q = this.q;
    while (this.i < q.length && isSpace(q[this.i])) this.i++;
    const pos = this.i;
    if (pos >= q.length) return { type: 'end', pos };
    const c = q[pos];
    if (c === '(' || c === ')') {
      this.i++;
      return { type: c, pos };
    }
    if (c === '-' || c === '+') {
      const after = q[pos + 1];
      if (after === undefined || isSpace(after) || after === ')') {
        throw new QuerySyntaxError(`'${c}' must be followed directly by the clause it ${c === '-' ? 'excludes' : 'requires'}`, pos);
      }
      this.i++;
      return { type: c, pos };
    }
    if (c === '"' || c === "'") {
      const text = this.quoted();
      if (q[this.i] === ':') return this.fieldClause(pos, text);
      this.expectDelimiter();
      return { type: 'clause', pos, field: null, op: ':', value: { kind: 'quoted', text } };
    }
    if (c === '/') {
      const regex = this.regex();
      if (regex !== null) return { type: 'clause', pos, field: null, op: ':', value: regex };
    }
    if ((c === '[' || c === '{') && this.range(c) !== null) {
      throw new QuerySyntaxError('a range needs a field: write field:[min TO max]', pos);
    }
    this.i = pos;
    const name = this.fieldName();
    if (name !== null) return this.fieldClause(pos, name);
    const word = this.word();
    if (word.raw === word.text && KEYWORDS.has(word.raw)) return { type: word.raw as 'AND' | 'OR' | 'NOT', pos };
    return { type: 'clause', pos, field: null, op: ':', value: word };
  }

  /** `name:` at the current position: the name, with `i` on the colon; else null and `i` unmoved. */
  private fieldName(): string | null {
    const q = this.q;
    const start = this.i;
    if (!FIELD_START.test(String.fromCodePoint(q.codePointAt(start)!))) return null;
    for (let j = start; j < q.length; j++) {
      const c = q[j];
      if (c === ':') {
        this.i = j;
        return q.slice(start, j);
      }
      if (isSpace(c) || NOT_IN_NAME.has(c)) return null;
    }
    return null;
  }

  /** The value after `field` and its colon (at `i`): an operator, then a range, regex, quoted string or word. */
  private fieldClause(pos: number, field: string): Token {
    const q = this.q;
    this.i++; // the colon
    const op = this.operator();
    const at = this.i;
    const c = q[at];
    if (c === undefined || isSpace(c) || c === '(' || c === ')') {
      const hint = c === '(' ? `; groups such as ${field}:(a OR b) are not supported, write ${field}:a OR ${field}:b` : '';
      throw new QuerySyntaxError(`missing value after '${field}:${op === ':' ? '' : op}'${hint}`, at);
    }
    const value = this.valueAt(field, op, c) ?? this.wordFrom(at);
    return { type: 'clause', pos, field, op, value };
  }

  /** A quoted string, a range or a regex at `i`; null when the value is a plain word. */
  private valueAt(field: string, op: Op, c: string): Value | null {
    if (c === '"' || c === "'") {
      const text = this.quoted();
      this.expectDelimiter();
      return { kind: 'quoted', text };
    }
    if (op !== ':') return null;
    if (c === '[' || c === '{') return this.range(c) ?? this.bracketedWord(field, this.i);
    return c === '/' ? this.regex() : null;
  }

  private wordFrom(at: number): Value {
    this.i = at;
    return this.word();
  }

  private operator(): Op {
    const q = this.q;
    const c = q[this.i];
    if (c === '>' || c === '<') {
      const eq = q[this.i + 1] === '=';
      this.i += eq ? 2 : 1;
      return eq ? (`${c}=` as Op) : c;
    }
    if (c === '=') this.i++;
    return ':';
  }

  /** A word up to whitespace or a parenthesis; `\` makes the next character part of it. */
  private word(): Value & { kind: 'word' } {
    const q = this.q;
    const start = this.i;
    let text = '';
    let j = start;
    for (; j < q.length; j++) {
      const c = q[j];
      if (isSpace(c) || c === '(' || c === ')') break;
      if (c === '\\' && j + 1 < q.length) text += q[++j];
      else text += c;
    }
    this.i = j;
    const raw = q.slice(start, j);
    return { kind: 'word', raw, text, wildcard: hasWildcard(raw) };
  }

  /** A string in the quote at `i`, `\` escaping any character; `i` ends past the closing quote. */
  private quoted(): string {
    const q = this.q;
    const start = this.i;
    const quote = q[start];
    let text = '';
    for (let j = start + 1; j < q.length; j++) {
      const c = q[j];
      if (c === quote) {
        this.i = j + 1;
        return text;
      }
      if (c === '\\' && j + 1 < q.length) text += q[++j];
      else text += c;
    }
    throw new QuerySyntaxError(`unclosed quote: this ${quote} is never closed`, start);
  }

  /**
   * `/body/flags` at `i`, ended by whitespace, a parenthesis or the end; null (and `i` unmoved)
   * when it is not one, such as the path `/v2/*`, which then reads as a word.
   */
  private regex(): (Value & { kind: 'regex' }) | null {
    const q = this.q;
    const start = this.i;
    const close = this.regexEnd(start + 1);
    if (close < 0) return null;
    let j = close + 1;
    while (j < q.length && REGEX_FLAGS.has(q[j])) j++;
    if (j < q.length && !isSpace(q[j]) && q[j] !== '(' && q[j] !== ')') return null;
    // a repeated flag says it is a path (`/var/sys`), not a regex
    const flags = q.slice(close + 1, j);
    if (new Set(flags).size < flags.length) return null;
    this.i = j;
    return { kind: 'regex', source: q.slice(start + 1, close), flags };
  }

  /**
   * The first slash at or after `from` that no backslash escapes, or -1. An opening slash never
   * follows a backslash, so this scan stops at or before the next opening slash: the scans of
   * failed regexes (`/a /b /c` …) never overlap.
   */
  private regexEnd(from: number): number {
    const q = this.q;
    for (let j = from; j < q.length; j++) {
      if (q[j] === '\\') j++;
      else if (q[j] === '/') return j;
    }
    return -1;
  }

  /** `[lo TO hi]`, `{` `}` exclusive, at `i`; null (and `i` unmoved) when the text is not a range. */
  private range(open: string): (Value & { kind: 'range' }) | null {
    const q = this.q;
    const start = this.i;
    this.i++;
    this.skipSpaces();
    const lo = this.bound();
    const spaced = this.skipSpaces();
    if (lo === undefined || !spaced || !q.startsWith('TO', this.i) || !isSpace(q[this.i + 2] ?? '')) {
      this.i = start;
      return null;
    }
    this.i += 2;
    this.skipSpaces();
    const hi = this.bound();
    this.skipSpaces();
    const close = q[this.i];
    if (hi === undefined || (close !== ']' && close !== '}')) {
      this.i = start;
      return null;
    }
    this.i++;
    this.expectDelimiter();
    return { kind: 'range', lo: { value: lo, inclusive: open === '[' }, hi: { value: hi, inclusive: close === ']' } };
  }

  /** One end of a range: quoted, `*` (open: null), or a run up to whitespace or a closing bracket. */
  private bound(): string | null | undefined {
    const q = this.q;
    const c = q[this.i];
    if (c === '"' || c === "'") return this.quoted();
    const start = this.i;
    while (this.i < q.length && !isSpace(q[this.i]) && q[this.i] !== ']' && q[this.i] !== '}') this.i++;
    if (this.i === start) return undefined;
    const text = q.slice(start, this.i);
    return text === '*' ? null : text;
  }

  /** A value opening with a bracket that is no range: a word such as `[INFO]`, or a range left open. */
  private bracketedWord(field: string, at: number): Value {
    const word = this.word();
    const last = word.raw[word.raw.length - 1];
    if (last === ']' || last === '}') return word;
    const closed = this.q.includes(']', at) || this.q.includes('}', at);
    throw new QuerySyntaxError(`${closed ? 'malformed' : 'unclosed'} range: write ${field}:[min TO max]`, at);
  }

  private skipSpaces(): boolean {
    const from = this.i;
    while (this.i < this.q.length && isSpace(this.q[this.i])) this.i++;
    return this.i > from;
  }

  /** Quoted strings and ranges end a clause: what follows must not stick to them. */
  private expectDelimiter(): void {
    const c = this.q[this.i];
    if (c !== undefined && !isSpace(c) && c !== '(' && c !== ')') {
      throw new QuerySyntaxError(`unexpected '${c}': put a space before it`, this.i);
    }
  }
}
