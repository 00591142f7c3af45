import { LIMITS } from '../../api/limits.js';
import safeRegex from 'safe-regex2';
import { Invalid } from '../errors.js';
import type { StoredRecord } from '../records.js';
import { analyze } from '../text/analyzer.js';
import { anyValue, equalsTest, fieldGetter, orderTest, textScopeOf, type Order } from './fieldValue.js';
import { globMatcher } from './glob.js';
import { parseQuery, QueryLimitError, QuerySyntaxError, type Bound, type Clause, type Op, type QueryNode, type Value } from './queryParser.js';
import { RecordText, type Scope } from './recordText.js';

/** A `q` compiled once into closures; `matches` runs per record. */
export interface CompiledQuery {
  matches(rec: StoredRecord): boolean;
  /** The same test on a record's text views, which several tests of one record can share. */
  test(text: RecordText): boolean;
  /** Bare terms and phrases outside any negation, for BM25 ranking. */
  scoringText: string;
  /**
   * Index terms of which every matching record holds one in its title or body, or null when q
   * requires none: a cheap test that rules most records out before `test` runs.
   */
  required: string[] | null;
  /** The field names its clauses read, each once. */
  fields: string[];
}

type Test = (text: RecordText) => boolean;

export function compileQuery(q: string): CompiledQuery {
  // before anything reads q: what the cap prevents is the work of reading a long one
  if (q.length > LIMITS.q) {
    const msg = `q is longer than ${LIMITS.q} characters (it has ${q.length})`;
    throw new Invalid(`invalid q: ${msg}`, [{ loc: ['body', 'q'], msg, type: 'value_error' }]);
  }
  const ctx: Ctx = { input: q, negated: false, scoring: [], terms: new Set(), fields: new Set() };
  const tree = parse(q);
  const test = compileNode(tree, ctx);
  return { matches: (rec) => test(new RecordText(rec)), test, scoringText: ctx.scoring.join(' '), required: requiredTerms(tree), fields: [...ctx.fields] };
}

function parse(q: string): QueryNode {
  try {
    return parseQuery(q);
  } catch (e) {
    if (e instanceof QueryLimitError) throw invalidQ(q, e.message);
    if (!(e instanceof QuerySyntaxError)) throw e;
    const near = q.slice(Math.max(0, e.pos - 12), e.pos + 12);
    throw invalidQ(q, `syntax error at column ${e.pos + 1}: ${e.message} (near "${near}")`);
  }
}

function invalidQ(input: string, msg: string): Invalid {
  return new Invalid(`invalid q: ${msg}`, [{ loc: ['body', 'q'], msg, type: 'value_error', input }]);
}

/** What `CompiledQuery.required` says of a node: sound, not complete (null when unsure). */
function requiredTerms(node: QueryNode): string[] | null {
  switch (node.type) {
    case 'and': {
      // any operand's requirement holds for the whole: the narrowest one rules out the most
      const each = node.items.map(requiredTerms).filter((r): r is string[] => r !== null);
      return each.length ? each.reduce((a, b) => (b.length < a.length ? b : a)) : null;
    }
    case 'or': {
      const each = node.items.map(requiredTerms);
      return each.every((r) => r !== null) ? [...new Set(each.flat() as string[])] : null;
    }
    case 'clause': {
      const { field, op, value } = node;
      const text = field === null || field === 'title' || field === 'body';
      if (!text || op !== ':' || !(value.kind === 'quoted' || (value.kind === 'word' && !value.wildcard && value.raw !== '*'))) return null;
      const terms = analyze(value.text);
      // a phrase needs all its terms: its longest is the likeliest to be rare
      return terms.length ? [terms.reduce((a, b) => (b.length > a.length ? b : a))] : null;
    }
    default:
      return null; // everything; a negation
  }
}

// ---- Compiling

interface Ctx {
  /** The user's q, for error reports. */
  input: string;
  negated: boolean;
  /** Bare terms and phrases outside negation, and their distinct index terms (capped). */
  scoring: string[];
  terms: Set<string>;
  /** Field names the clauses read. */
  fields: Set<string>;
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

function compileNode(node: QueryNode, ctx: Ctx): Test {
  switch (node.type) {
    case 'all':
      return ALWAYS;
    case 'and':
      return all(node.items.map((n) => compileNode(n, ctx)));
    case 'or':
      return any(node.items.map((n) => compileNode(n, ctx)));
    case 'not': {
      const inner = compileNode(node.item, { ...ctx, negated: true });
      return costed((text) => !inner(text), COST.get(inner) ?? FIELD_COST);
    }
    case 'clause':
      return compileClause(node, ctx);
  }
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

function compileClause({ field, op, value }: Clause, ctx: Ctx): Test {
  if (field !== null) ctx.fields.add(field);
  const scope: Scope | null = field === null ? 'all' : field === 'title' || field === 'body' ? field : null;
  if (scope !== null && op === ':' && (value.kind === 'word' || value.kind === 'quoted')) {
    if (field === null && !ctx.negated && (value.kind === 'quoted' || !value.wildcard)) score(value.text, ctx);
    return costed(compileText(scope, value), TEXT_COST);
  }
  if (scope !== null && op === ':' && value.kind === 'regex') {
    const re = regexOf(value, ctx.input);
    return costed((text) => re.test(text.view(scope).raw), TEXT_COST);
  }
  // the lexer gives a bare clause no other value
  if (field === null) throw invalidQ(ctx.input, `a ${value.kind} needs a field name before it`);
  const get = fieldGetter(field);
  const test = compileValueTest(value, op, ctx.input);
  const valueTest: Test = (text) => test(get(text.rec));
  // a record whose body or title came from a field of this name (`Content:"block"`) matches as `body:` / `title:` would
  if (op !== ':' || !(value.kind === 'word' || value.kind === 'quoted' || value.kind === 'regex')) return valueTest;
  const asText: Partial<Record<'title' | 'body', Test>> = {};
  const textTest = (s: 'title' | 'body'): Test => {
    if (value.kind !== 'regex') return compileText(s, value);
    const re = regexOf(value, ctx.input);
    return (text) => re.test(text.view(s).raw);
  };
  return costed((text) => {
    const s = textScopeOf(text.rec, field);
    return s === null ? valueTest(text) : (asText[s] ??= textTest(s))(text);
  }, FIELD_COST);
}

/** Each distinct term is one more lookup in the text index: their number is capped. */
function score(text: string, ctx: Ctx): void {
  ctx.scoring.push(text);
  for (const term of analyze(text)) ctx.terms.add(term);
  if (ctx.terms.size > LIMITS.queryTerms) throw invalidQ(ctx.input, `q looks up more than ${LIMITS.queryTerms} distinct terms`);
}

// ---- Text clauses: tokens of title and/or body, analyzed as the text index analyzes them

type TextValue = Value & { kind: 'word' | 'quoted' };

function compileText(scope: Scope, value: TextValue): Test {
  if (value.kind === 'word' && value.raw === '*') return scope === 'all' ? ALWAYS : (text) => text.view(scope).raw.length > 0;
  if (value.kind === 'word' && value.wildcard) return wildcardText(scope, value.raw);
  const terms = analyze(value.text);
  if (terms.length === 0) return ALWAYS; // only stop words: nothing to require
  if (terms.length === 1) {
    const term = terms[0];
    return (text) => text.view(scope).termSet.has(term);
  }
  return (text) => containsRun(text.view(scope).terms, terms);
}

/** Words made of letters and digits match tokens; patterns with punctuation match whitespace-delimited words. */
function wildcardText(scope: Scope, pattern: string): Test {
  const glob = globMatcher(pattern);
  const byToken = /^[\p{L}\p{N}*?]+$/u.test(pattern);
  return (text) => {
    const view = text.view(scope);
    for (const word of byToken ? view.tokens : view.words) if (glob(word)) return true;
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

// ---- Field clauses: compare the field's value(s)

type ValueTest = (v: unknown) => boolean;

const EXISTS: ValueTest = (v) => v !== undefined && v !== null && !(Array.isArray(v) && v.length === 0);
const ORDER: Record<Exclude<Op, ':'>, Order> = { '>': 'gt', '>=': 'gte', '<': 'lt', '<=': 'lte' };

function compileValueTest(value: Value, op: Clause['op'], input: string): ValueTest {
  if (value.kind === 'range') return rangeTest(value.lo, value.hi);
  if (value.kind === 'regex') return scalarTest(regexOf(value, input));
  if (op !== ':') return orderTest(value.text, ORDER[op]);
  if (value.kind === 'word' && value.raw === '*') return EXISTS;
  if (value.kind === 'word' && value.wildcard) return scalarTest({ test: globMatcher(value.raw) });
  const eq = equalsTest(value.kind === 'word' && value.raw === 'null' ? null : value.text);
  return (v) => anyValue(v, eq);
}

/** Both ends hold for one value: of an array, some element lies in the range. */
function rangeTest(lo: Bound, hi: Bound): ValueTest {
  if (lo.value === null && hi.value === null) return EXISTS;
  const above = lo.value === null ? null : orderTest(lo.value, lo.inclusive ? 'gte' : 'gt');
  const below = hi.value === null ? null : orderTest(hi.value, hi.inclusive ? 'lte' : 'lt');
  return (v) => anyValue(v, (x) => (above === null || above(x)) && (below === null || below(x)));
}

/** A test of the scalars of a field as text. */
function scalarTest(matcher: { test(s: string): boolean }): ValueTest {
  return (v) => anyValue(v, (x) => x !== null && x !== undefined && typeof x !== 'object' && matcher.test(String(x)));
}

function regexOf({ source, flags }: Value & { kind: 'regex' }, input: string): RegExp {
  let re: RegExp;
  try {
    // g and y would make `test` remember where it stopped between records
    re = new RegExp(source, flags.replace(/[gy]/g, ''));
  } catch (e) {
    throw invalidQ(input, `bad regular expression /${source}/${flags}: ${(e as Error).message}`);
  }
  // JavaScript's engine backtracks: a nested repetition such as (a+)+ can take minutes on one value
  if (!safeRegex(re)) throw invalidQ(input, `regular expression /${source}/${flags} repeats a repetition (such as (a+)+), which can take exponential time: write it without`);
  return re;
}
