import { parse, type ParserAst, type TagToken } from 'liqe';
import { Invalid } from '../errors.js';
import type { StoredRecord } from '../records.js';
import { analyze } from '../text/analyzer.js';
import { anyValue, equalsTest, fieldGetter, orderTest, toNumber, type Order } from './fieldValue.js';
import { RecordText, type Scope } from './recordText.js';

/** A `q` compiled once into closures; `matches` runs per record. */
export interface CompiledQuery {
  matches(rec: StoredRecord): boolean;
  /** Bare terms and phrases outside any negation, for BM25 ranking. */
  scoringText: string;
}

type Test = (text: RecordText) => boolean;

export function compileQuery(q: string): CompiledQuery {
  const { ast, source } = parseQuery(q);
  const scoring: string[] = [];
  const test = compileNode(ast, { source, input: q, negated: false, scoring });
  return { matches: (rec) => test(new RecordText(rec)), scoringText: scoring.join(' ') };
}

// ---- Parsing

function parseQuery(q: string): { ast: ParserAst; source: string } {
  let error: unknown;
  try {
    return { ast: parse(q), source: q };
  } catch (e) {
    error = e;
  }
  // Lucene accepts what liqe's grammar does not (dates and IPs unquoted, date ranges, `@timestamp`);
  // a rewrite into liqe's dialect rescues those, and the user's own text keeps the error positions.
  const rewritten = rewrite(q);
  if (rewritten !== q) {
    try {
      return { ast: parse(rewritten), source: rewritten };
    } catch {
      // fall through to the original error
    }
  }
  const msg = readableError(q, error);
  throw new Invalid(`invalid q: ${msg}`, [{ loc: ['body', 'q'], msg, type: 'value_error', input: q }]);
}

function readableError(q: string, error: unknown): string {
  const e = error as { message?: string; offset?: number; column?: number };
  if (typeof e.offset === 'number' && typeof e.column === 'number') {
    const near = q.slice(Math.max(0, e.offset - 12), e.offset + 12);
    const ch = q[e.offset];
    const what = ch === undefined ? 'end of query' : ch === ' ' ? 'a space' : `'${ch}'`;
    return `syntax error at column ${e.column}: unexpected ${what} near "${near}"`;
  }
  if (e.message === 'Found no parsings.') {
    return 'query ends too early: an unclosed quote, parenthesis or range, or an operator without an operand';
  }
  return `syntax error: ${e.message ?? String(error)}`;
}

function parses(text: string): boolean {
  try {
    parse(text);
    return true;
  } catch {
    return false;
  }
}

const FIELD_HEAD = /([A-Za-z_$@][^\s()"':[\]{}]*|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'):(>=|<=|>|<|=)?/y;
const RANGE = /([[{])\s*("(?:[^"\\]|\\.)*"|[^\s\]}]+)\s+TO\s+("(?:[^"\\]|\\.)*"|[^\s\]}]+)\s*([\]}])/y;
const QUOTED = /"(?:[^"\\]|\\.)*"?|'(?:[^'\\]|\\.)*'?/y;
const VALUE = /[^\s()]+/y;
const LIQE_FIELD = /^[$A-Za-z_][\w$.-]*$/;
const PLAIN_NUMBER = /^-?\d+(?:\.\d+)?$/;

function rewrite(q: string): string {
  let out = '';
  let i = 0;
  let atStart = true;
  while (i < q.length) {
    const c = q[i];
    if (/\s/.test(c) || c === '(' || c === ')') {
      out += c;
      i++;
      atStart = true;
      continue;
    }
    if (!atStart || c === '-') {
      out += c;
      i++;
      continue;
    }
    atStart = false;
    const head = match(FIELD_HEAD, q, i);
    if (head !== null) {
      i += head[0].length;
      const field = head[1].startsWith('"') || head[1].startsWith("'") || LIQE_FIELD.test(head[1]) ? head[1] : quote(head[1]);
      const [value, used] = rewriteValue(q, i, field, head[2] ?? '');
      out += value;
      i += used;
      continue;
    }
    const quoted = match(QUOTED, q, i);
    const bare = quoted ?? match(VALUE, q, i);
    const token = bare![0];
    out += quoted !== null || /^(AND|OR|NOT)$/.test(token) || parses(token) ? token : quote(token);
    i += token.length;
  }
  return out;
}

/** The text after `field:op`, in liqe's dialect, and how many characters of `q` it consumed. */
function rewriteValue(q: string, i: number, field: string, op: string): [string, number] {
  const prefix = `${field}:${op}`;
  const range = op === '' ? match(RANGE, q, i) : null;
  // quoted below, `f:[1 TO 5` would be the word "[1" and match nothing: say what is wrong instead
  if (range === null && op === '' && /^[[{][^\]}]*$/.test(q.slice(i))) throw invalidQ(q, `unclosed range: write ${field}:[min TO max]`);
  if (range !== null) {
    const [all, open, lo, hi, close] = range;
    if (PLAIN_NUMBER.test(lo) && PLAIN_NUMBER.test(hi)) return [prefix + all, all.length];
    const sides: string[] = [];
    if (lo !== '*') sides.push(`${field}:${open === '[' ? '>=' : '>'}${quote(unquote(lo))}`);
    if (hi !== '*') sides.push(`${field}:${close === ']' ? '<=' : '<'}${quote(unquote(hi))}`);
    return [sides.length === 0 ? `${field}:*` : `(${sides.join(' AND ')})`, all.length];
  }
  const quoted = match(QUOTED, q, i);
  if (quoted !== null) return [prefix + quoted[0], quoted[0].length];
  const value = match(VALUE, q, i);
  if (value === null) return [prefix, 0];
  const text = value[0];
  if (parses(`x:${op}${text}`)) return [prefix + text, text.length];
  // Quoting would turn `ip:10.0.0.*` into an exact match; a regular expression keeps the wildcard.
  const spelled = op === '' && WILDCARD.test(text) ? `/${wildcardSource(text)}/is` : quote(text);
  return [prefix + spelled, text.length];
}

function match(re: RegExp, s: string, at: number): RegExpExecArray | null {
  re.lastIndex = at;
  return re.exec(s);
}

function quote(s: string): string {
  return `"${s.replace(/["\\]/g, '\\$&')}"`;
}

function unquote(s: string): string {
  return s.startsWith('"') ? s.slice(1, -1).replace(/\\(.)/g, '$1') : s;
}

// ---- Compiling

interface Ctx {
  /** The text liqe parsed (locations point into it). */
  source: string;
  /** The user's q, for error reports. */
  input: string;
  negated: boolean;
  scoring: string[];
}

const ALWAYS: Test = () => true;

// Relative cost of a test: reading a field is cheap, analysing title and body is not. AND and OR
// run the cheap operands first so a failing field clause spares the text analysis.
const COST = new WeakMap<Test, number>([[ALWAYS, 0]]);
const FIELD_COST = 1;
const TEXT_COST = 20;

function costed(test: Test, cost: number): Test {
  if (test !== ALWAYS) COST.set(test, cost);
  return test;
}

function byCost(tests: Test[]): Test[] {
  return [...tests].sort((a, b) => (COST.get(a) ?? FIELD_COST) - (COST.get(b) ?? FIELD_COST));
}

function totalCost(tests: Test[]): number {
  return tests.reduce((sum, t) => sum + (COST.get(t) ?? FIELD_COST), 0);
}

function compileNode(node: ParserAst, ctx: Ctx): Test {
  switch (node.type) {
    case 'EmptyExpression':
      return ALWAYS;
    case 'ParenthesizedExpression':
      return compileNode(node.expression, ctx);
    case 'UnaryOperator': {
      const inner = compileNode(node.operand, { ...ctx, negated: true });
      return costed((text) => !inner(text), COST.get(inner) ?? FIELD_COST);
    }
    case 'LogicalExpression':
      return compileLogical(node, ctx);
    case 'Tag':
      return compileTag(node, ctx);
  }
}

/** liqe chains AND and OR left to right; Lucene users expect AND to bind tighter, so the chain is regrouped. */
function compileLogical(node: ParserAst, ctx: Ctx): Test {
  const operands: ParserAst[] = [];
  const ops: string[] = [];
  flatten(node, operands, ops);
  const groups: ParserAst[][] = [[operands[0]]];
  ops.forEach((op, k) => {
    if (op === 'OR') groups.push([operands[k + 1]]);
    else groups[groups.length - 1].push(operands[k + 1]);
  });
  const alternatives = groups.map((group) => all(group.map((n) => compileNode(n, ctx))));
  return alternatives.length === 1 ? alternatives[0] : any(alternatives);
}

function flatten(node: ParserAst, operands: ParserAst[], ops: string[]): void {
  if (node.type !== 'LogicalExpression') {
    operands.push(node);
    return;
  }
  flatten(node.left, operands, ops);
  ops.push(node.operator.operator);
  flatten(node.right, operands, ops);
}

function all(tests: Test[]): Test {
  if (tests.length === 1) return tests[0];
  const ordered = byCost(tests);
  return costed((text) => {
    for (const t of ordered) if (!t(text)) return false;
    return true;
  }, totalCost(tests));
}

function any(tests: Test[]): Test {
  const ordered = byCost(tests);
  return costed((text) => {
    for (const t of ordered) if (t(text)) return true;
    return false;
  }, totalCost(tests));
}

function compileTag(tag: TagToken, ctx: Ctx): Test {
  const expr = tag.expression;
  // liqe leaves the operator out of tags without a field
  const op = (tag.operator as TagToken['operator'] | undefined)?.operator ?? ':';
  const name = tag.field.type === 'ImplicitField' ? null : tag.field.name;
  if (expr.type === 'EmptyExpression') {
    throw invalidQ(ctx.input, `missing value after '${name}:'`);
  }
  const scope: Scope | null = name === null ? 'all' : name === 'title' || name === 'body' ? name : null;
  if (scope !== null && expr.type === 'LiteralExpression' && op === ':') {
    const raw = expr.quoted ? expr.value : ctx.source.slice(expr.location.start, expr.location.end);
    if (name === null && !ctx.negated && (expr.quoted || !WILDCARD.test(raw))) ctx.scoring.push(raw);
    return costed(compileText(scope, raw, expr.quoted), TEXT_COST);
  }
  if (scope !== null && expr.type === 'RegexExpression') {
    const re = regexOf(expr.value, ctx.input);
    return costed((text) => re.test(text.view(scope).raw), TEXT_COST);
  }
  if (name === null) throw invalidQ(ctx.input, `'${op}' needs a field name before it`);
  const get = fieldGetter(name);
  const test = compileValueTest(expr, op, ctx.input);
  return (text) => test(get(text.rec));
}

function invalidQ(input: string, msg: string): Invalid {
  return new Invalid(`invalid q: ${msg}`, [{ loc: ['body', 'q'], msg, type: 'value_error', input }]);
}

// ---- Text clauses: tokens of title and/or body, analyzed as the text index analyzes them

const WILDCARD = /[*?]/;

function compileText(scope: Scope, raw: string, quoted: boolean): Test {
  if (!quoted && raw === '*') return scope === 'all' ? ALWAYS : (text) => text.view(scope).raw.length > 0;
  if (!quoted && WILDCARD.test(raw)) return wildcardText(scope, raw);
  const terms = analyze(raw);
  if (terms.length === 0) return ALWAYS; // only stop words: nothing to require
  if (terms.length === 1) {
    const term = terms[0];
    return (text) => text.view(scope).termSet.has(term);
  }
  return (text) => containsRun(text.view(scope).terms, terms);
}

/** Words made of letters and digits match tokens; patterns with punctuation match whitespace-delimited words. */
function wildcardText(scope: Scope, pattern: string): Test {
  const re = wildcardRegex(pattern);
  const byToken = /^[\p{L}\p{N}*?]+$/u.test(pattern);
  return (text) => {
    const view = text.view(scope);
    for (const word of byToken ? view.tokens : view.words) if (re.test(word)) return true;
    return false;
  };
}

function containsRun(haystack: string[], run: string[]): boolean {
  const last = haystack.length - run.length;
  outer: for (let i = 0; i <= last; i++) {
    for (let k = 0; k < run.length; k++) if (haystack[i + k] !== run[k]) continue outer;
    return true;
  }
  return false;
}

function wildcardRegex(pattern: string): RegExp {
  return new RegExp(wildcardSource(pattern), 'is');
}

function wildcardSource(pattern: string): string {
  return `^${pattern.replace(/[.+^${}()|[\]\\/]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`;
}

// ---- Field clauses: compare the field's value(s)

type ValueTest = (v: unknown) => boolean;

function compileValueTest(expr: TagToken['expression'], op: string, input: string): ValueTest {
  if (expr.type === 'RangeExpression') {
    const { min, max, minInclusive, maxInclusive } = expr.range;
    return (v) =>
      anyValue(v, (x) => {
        const n = toNumber(x);
        return n !== null && (minInclusive ? n >= min : n > min) && (maxInclusive ? n <= max : n < max);
      });
  }
  if (expr.type === 'RegexExpression') {
    const re = regexOf(expr.value, input);
    return (v) => anyValue(v, (x) => x !== null && x !== undefined && typeof x !== 'object' && re.test(String(x)));
  }
  if (expr.type !== 'LiteralExpression') throw invalidQ(input, 'missing value');
  const value = expr.value;
  if (op === ':' || op === ':=') {
    if (!expr.quoted && value === '*') return (v) => v !== undefined && v !== null && !(Array.isArray(v) && v.length === 0);
    if (!expr.quoted && typeof value === 'string' && WILDCARD.test(value)) {
      const re = wildcardRegex(value);
      return (v) => anyValue(v, (x) => x !== null && x !== undefined && typeof x !== 'object' && re.test(String(x)));
    }
    const eq = equalsTest(value);
    return (v) => anyValue(v, eq);
  }
  return orderTest(value, ORDER[op]);
}

const ORDER: Record<string, Order> = { ':>': 'gt', ':>=': 'gte', ':<': 'lt', ':<=': 'lte' };

function regexOf(literal: string, input: string): RegExp {
  const end = literal.lastIndexOf('/');
  // g and y would make `test` remember where it stopped between records
  const flags = literal.slice(end + 1).replace(/[gy]/g, '');
  try {
    return new RegExp(literal.slice(1, end), flags);
  } catch (e) {
    throw invalidQ(input, `bad regular expression ${literal}: ${(e as Error).message}`);
  }
}
