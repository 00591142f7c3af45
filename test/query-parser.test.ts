import { describe, expect, it, vi } from 'vitest';
import { LIMITS } from '../src/api/limits.js';
import { Invalid } from '../src/engine/errors.js';
import type { StoredRecord } from '../src/engine/records.js';
import { compileQuery } from '../src/engine/search/query.js';
import * as parser from '../src/engine/search/queryParser.js';

// The real parser, watched: a q over the length cap must be refused without it ever running.
vi.mock('../src/engine/search/queryParser.js', async (importOriginal) => {
  const real = await importOriginal<typeof parser>();
  return { ...real, parseQuery: vi.fn(real.parseQuery) };
});

function rec(body: string, metadata: Record<string, unknown> = {}, title: string | null = null): StoredRecord {
  return {
    id: 'r1', seq: 1, title, body, time: null, metadata, created_at: '2024-01-01T00:00:00.000Z',
    source_key: 'src', bucket: 'b', key: 'k', etag: 'e', line: 1, transform_version: 1,
  };
}

/** The issue compileQuery refused `q` with; fails the test when it did not refuse. */
function refusal(q: string): { msg: string; loc: (string | number)[]; type: string } {
  try {
    compileQuery(q);
  } catch (e) {
    expect(e).toBeInstanceOf(Invalid);
    const issues = (e as Invalid).issues;
    expect(issues).toHaveLength(1);
    return issues[0];
  }
  throw new Error(`q was accepted: ${q.slice(0, 60)}…`);
}

const words = (n: number, word: (i: number) => string, sep = ' ') => Array.from({ length: n }, (_, i) => word(i)).join(sep);

/** `unit` repeated (joined by `sep`) as often as fits in `size` characters. */
function fill(size: number, unit: string, sep = ' '): string {
  return words(Math.floor((size + sep.length) / (unit.length + sep.length)), () => unit, sep);
}

/** word(0), word(1)… joined by `sep`, as many as fit in `size` characters. */
function upTo(size: number, word: (i: number) => string, sep: string): string {
  let out = word(0);
  for (let i = 1; ; i++) {
    const next = sep + word(i);
    if (out.length + next.length > size) return out;
    out += next;
  }
}

describe('q limits', () => {
  it('refuses a q longer than LIMITS.q characters, naming the limit', () => {
    expect(() => compileQuery('a'.repeat(LIMITS.q))).not.toThrow();
    const issue = refusal('a'.repeat(LIMITS.q + 1));
    expect(issue.loc).toEqual(['body', 'q']);
    expect(issue.msg).toMatch(new RegExp(`longer than ${LIMITS.q} characters`));
  });

  it('refuses 100k characters before parsing them', () => {
    const parse = vi.mocked(parser.parseQuery);
    parse.mockClear();
    compileQuery('level:INFO');
    expect(parse).toHaveBeenCalledTimes(1);
    parse.mockClear();
    // unbalanced parentheses: had it been parsed, the error would be about depth or syntax
    const issue = refusal('('.repeat(50_000) + 'a OR '.repeat(10_000));
    expect(issue.msg).toMatch(/longer than 4096 characters \(it has 100000\)/);
    expect(parse).not.toHaveBeenCalled();
  });

  it('refuses more than LIMITS.qClauses clauses, naming the limit', () => {
    expect(compileQuery(words(LIMITS.qClauses, () => 'x')).matches(rec('x'))).toBe(true);
    const issue = refusal(words(LIMITS.qClauses + 1, () => 'x'));
    expect(issue.loc).toEqual(['body', 'q']);
    expect(issue.msg).toMatch(new RegExp(`more than ${LIMITS.qClauses} clauses`));
    // phrases and regexes count as well
    expect(refusal(words(LIMITS.qClauses + 1, () => '""')).msg).toMatch(/clauses/);
    expect(refusal(words(LIMITS.qClauses + 1, () => '//')).msg).toMatch(/clauses/);
  });

  it('refuses parentheses and NOT nested deeper than LIMITS.qDepth, naming the limit', () => {
    const parens = (n: number) => '('.repeat(n) + 'x' + ')'.repeat(n);
    expect(compileQuery(parens(LIMITS.qDepth)).matches(rec('x'))).toBe(true);
    expect(refusal(parens(LIMITS.qDepth + 1)).msg).toMatch(new RegExp(`more than ${LIMITS.qDepth} deep`));
    expect(compileQuery('NOT '.repeat(LIMITS.qDepth) + 'x').matches(rec('x'))).toBe(true);
    expect(refusal('NOT '.repeat(LIMITS.qDepth + 1) + 'x').msg).toMatch(/NOT more than 32 deep/);
    expect(refusal('-'.repeat(LIMITS.qDepth + 1) + 'x').msg).toMatch(/deep/);
    // mixed: each ( and each NOT is a level
    const mixed = 'NOT ('.repeat(LIMITS.qDepth / 2) + 'x' + ')'.repeat(LIMITS.qDepth / 2);
    expect(compileQuery(mixed).matches(rec('x'))).toBe(true);
    expect(refusal(`(${mixed})`).loc).toEqual(['body', 'q']);
  });

  it('answers nesting far past the cap with a 422, not a stack overflow', () => {
    for (const q of ['('.repeat(LIMITS.q), 'NOT '.repeat(LIMITS.q / 4), '-'.repeat(LIMITS.q - 1) + 'x', '(NOT '.repeat(LIMITS.q / 5)]) {
      expect(refusal(q).msg).toMatch(/deep/);
    }
    // the parser alone, without the length cap, on a million levels
    expect(() => parser.parseQuery('('.repeat(1_000_000))).toThrow(parser.QueryLimitError);
  });

  it('refuses more than LIMITS.queryTerms distinct scoring terms, naming the limit', () => {
    const terms = (n: number) => words(n, (i) => `t${i}`, ' OR ');
    expect(compileQuery(terms(LIMITS.queryTerms)).matches(rec('t7'))).toBe(true);
    expect(refusal(terms(LIMITS.queryTerms + 1)).msg).toMatch(new RegExp(`more than ${LIMITS.queryTerms} distinct terms`));
    // repeated, negated, wildcard and field terms look nothing up in the index
    expect(() => compileQuery(fill(LIMITS.q, 't1 OR t1'))).not.toThrow();
    expect(() => compileQuery(`${terms(LIMITS.queryTerms)} ${words(50, (i) => `-n${i}`)}`)).not.toThrow();
    expect(() => compileQuery(`${terms(LIMITS.queryTerms)} n0`)).toThrow(Invalid);
    expect(() => compileQuery(words(200, (i) => `w${i}*`, ' OR '))).not.toThrow();
    expect(() => compileQuery(words(200, (i) => `f:v${i}`, ' OR '))).not.toThrow();
  });
});

describe('pathological q of 4,096 characters parse and match', () => {
  it('a long OR chain of field tests', () => {
    const q = upTo(LIMITS.q, (i) => `level:l${i}`, ' OR ');
    expect(q.length).toBeGreaterThan(LIMITS.q - 20);
    const c = compileQuery(q);
    expect(c.matches(rec('', { level: 'L0' }))).toBe(true);
    expect(c.matches(rec('', { level: 'l250' }))).toBe(true);
    expect(c.matches(rec('', { level: 'l9999' }))).toBe(false);
    expect(c.scoringText).toBe('');
  });

  it('a long OR chain of bare terms, and AND binding tighter in it', () => {
    const q = fill(LIMITS.q - 20, 'alpha OR beta', ' OR ');
    const c = compileQuery(`${q} OR gamma delta`);
    expect(c.matches(rec('beta'))).toBe(true);
    expect(c.matches(rec('gamma'))).toBe(false);
    expect(c.matches(rec('delta gamma'))).toBe(true);
  });

  it('nesting as deep as allowed, many times over', () => {
    const block = '('.repeat(LIMITS.qDepth) + 'x' + ')'.repeat(LIMITS.qDepth);
    const c = compileQuery(fill(LIMITS.q, block));
    expect(c.matches(rec('x'))).toBe(true);
    expect(c.matches(rec('y'))).toBe(false);
    const negations = fill(LIMITS.q, `(${'NOT '.repeat(LIMITS.qDepth - 2)}(y))`, ' OR ');
    expect(compileQuery(negations).matches(rec('y'))).toBe(true);
    expect(compileQuery(negations).matches(rec('z'))).toBe(false);
  });

  it('many quotes', () => {
    const c = compileQuery(fill(LIMITS.q, '"disk full"'));
    expect(c.matches(rec('full disk'))).toBe(false);
    expect(c.matches(rec('disk full at 3am'))).toBe(true);
    expect(c.scoringText.startsWith('disk full disk full')).toBe(true);
    expect(compileQuery(fill(LIMITS.q, '"x\\"y"')).matches(rec('x y'))).toBe(true);
    expect(compileQuery(fill(LIMITS.q, '"x\\"y"')).matches(rec('y x'))).toBe(false);
    // an odd number: the last one is unclosed, told as such
    expect(refusal(fill(LIMITS.q - 10, '"x"') + ' "x').msg).toMatch(/column \d+: unclosed quote/);
    expect(refusal('"'.repeat(LIMITS.q)).loc).toEqual(['body', 'q']);
  });

  it('many colons', () => {
    const value = fill(LIMITS.q - 4, 'a', ':');
    const c = compileQuery(`f:${value}`);
    expect(c.matches(rec('', { f: value }))).toBe(true);
    expect(c.matches(rec('', { f: `${value}:a` }))).toBe(false);
    expect(compileQuery(':'.repeat(LIMITS.q)).matches(rec('x'))).toBe(true);
    expect(compileQuery(fill(LIMITS.q, 'f:a:b')).matches(rec('', { f: 'A:B' }))).toBe(true);
  });

  it('long wildcards, matched without backtracking', () => {
    const pattern = fill(LIMITS.q - 5, 'a', '*') + '*b';
    const c = compileQuery(`f:${pattern}`);
    // a backtracking regex for this pattern would not finish on these values
    expect(c.matches(rec('', { f: 'a'.repeat(20_000) }))).toBe(false);
    expect(c.matches(rec('', { f: `${'a'.repeat(20_000)}b` }))).toBe(true);
    expect(c.matches(rec('', { f: 'ab'.repeat(3_000) }))).toBe(true);
    expect(c.matches(rec('', { f: `${'a'.repeat(1_000)}b` }))).toBe(false);
    const text = compileQuery(fill(LIMITS.q - 5, 'a', '?*'));
    expect(text.matches(rec(`${'a'.repeat(5_000)} b`))).toBe(true);
    expect(text.matches(rec('a'.repeat(2_000)))).toBe(false);
  });

  it('many slashes, brackets and backslashes', () => {
    expect(compileQuery(fill(LIMITS.q, 'p:/x')).matches(rec('', { p: '/X' }))).toBe(true);
    expect(compileQuery(fill(LIMITS.q, '/x/')).matches(rec('x'))).toBe(true);
    expect(compileQuery('/'.repeat(LIMITS.q)).matches(rec('x'))).toBe(true);
    expect(compileQuery(fill(LIMITS.q, 'm:[INFO]')).matches(rec('', { m: '[info]' }))).toBe(true);
    expect(refusal(fill(LIMITS.q, 'm:[1 TO')).msg).toMatch(/unclosed range: write m:\[min TO max\]/);
    expect(compileQuery(fill(LIMITS.q, 'n:[1 TO 5}')).matches(rec('', { n: 4 }))).toBe(true);
    expect(compileQuery(`f:${'\\\\'.repeat(2000)}`).matches(rec('', { f: '\\'.repeat(2000) }))).toBe(true);
  });

  it('the parser alone reads a megabyte of each shape', () => {
    const unlimited = { clauses: Infinity, depth: LIMITS.qDepth };
    for (const unit of ['a OR', 'level:x', '"a b"', '(((x)))', 'f:a*a?a', 'p:/x', 'u:1:2:3', 'n:[1 TO 2]', 'NOT -x']) {
      const q = fill(2 ** 20, unit);
      expect(() => parser.parseQuery(q.endsWith('OR') ? `${q} a` : q, unlimited)).not.toThrow();
    }
  });
});

describe('q syntax', () => {
  const doc = rec('The disks were replaced', { level: 'WARN', 'my field': 'x', path: 'a:b', n: 7 }, 'Storage');

  it('reads +, -, NOT before a clause or a group', () => {
    expect(compileQuery('+disks +level:warn').matches(doc)).toBe(true);
    expect(compileQuery('-(level:info OR level:error)').matches(doc)).toBe(true);
    expect(compileQuery('NOT (level:warn)').matches(doc)).toBe(false);
    expect(compileQuery('NOT NOT level:warn').matches(doc)).toBe(true);
    expect(compileQuery('disks -level:warn').matches(doc)).toBe(false);
  });

  it('reads quoted field names, escapes and := as :', () => {
    expect(compileQuery('"my field":x').matches(doc)).toBe(true);
    expect(compileQuery("'my field':X").matches(doc)).toBe(true);
    expect(compileQuery('path:a\\:b').matches(doc)).toBe(true);
    expect(compileQuery('path:"a:b"').matches(doc)).toBe(true);
    expect(compileQuery('n:=7').matches(doc)).toBe(true);
    expect(compileQuery('f:a\\*').matches(rec('', { f: 'a*' }))).toBe(true);
    expect(compileQuery('f:a\\*').matches(rec('', { f: 'ab' }))).toBe(false);
    expect(compileQuery('f:null').matches(rec('', { f: null }))).toBe(true);
    expect(compileQuery('f:"null"').matches(rec('', { f: null }))).toBe(false);
  });

  it('reads a range with open, quoted and date ends', () => {
    expect(compileQuery('n:[5 TO *]').matches(doc)).toBe(true);
    expect(compileQuery('n:{* TO 7}').matches(doc)).toBe(false);
    expect(compileQuery('n:[* TO *]').matches(doc)).toBe(true);
    expect(compileQuery('missing:[* TO *]').matches(doc)).toBe(false);
    expect(compileQuery('d:["2017-05-16" TO 2017-05-17]').matches(rec('', { d: '2017-05-16T10:00:00Z' }))).toBe(true);
    expect(compileQuery('tags:[3 TO 4]').matches(rec('', { tags: [1, 9] }))).toBe(false);
  });

  it('tells a regex from a path', () => {
    expect(compileQuery('/dis[kc]s/').matches(doc)).toBe(true);
    expect(compileQuery('/DISKS/i').matches(doc)).toBe(true);
    expect(compileQuery('/var/sys').matches(rec('logs in /var/sys'))).toBe(true);
    expect(compileQuery('p:/a/b').matches(rec('', { p: '/a/b' }))).toBe(true);
    expect(refusal('/(/').msg).toMatch(/bad regular expression \/\(\//);
  });

  it('says where and what is wrong', () => {
    expect(refusal('level:(warn OR info)').msg).toMatch(/column 7: missing value after 'level:'; groups such as level:\(a OR b\) are not supported/);
    expect(refusal('a - b').msg).toMatch(/column 3: '-' must be followed directly/);
    expect(refusal('"abc"def').msg).toMatch(/column 6: unexpected 'd'/);
    expect(refusal('[1 TO 5]').msg).toMatch(/a range needs a field/);
    expect(refusal('a AND OR b').msg).toMatch(/column 7: unexpected OR/);
    expect(refusal('a (b').msg).toMatch(/column 3: unclosed parenthesis/);
    expect(refusal('a "b').msg).toMatch(/column 3: unclosed quote/);
    expect(refusal('a NOT').msg).toMatch(/ends too early/);
    expect(refusal('f:[1 TO ]').msg).toMatch(/malformed range/);
  });
});

describe('regular expressions in q', () => {
  it('refuses one that repeats a repetition, which a backtracking engine may take minutes on', () => {
    const err = (() => {
      try {
        compileQuery('body:/(a+)+$/');
      } catch (e) {
        return e as Invalid;
      }
    })();
    expect(err).toBeInstanceOf(Invalid);
    expect(err!.issues[0]).toMatchObject({ loc: ['body', 'q'], msg: expect.stringContaining('repeats a repetition') });
    expect(() => compileQuery('host:/(x*)*y/')).toThrow(Invalid);
  });

  it('runs a plain one', () => {
    const q = compileQuery('host:/^web-\\d+$/');
    const rec: StoredRecord = { id: 'r', seq: 1, title: null, body: '', time: null, metadata: { host: 'web-12' }, created_at: '2024-01-01T00:00:00.000Z', source_key: 's', bucket: 'b', key: 'k', etag: 'e', line: 1, transform_version: 1 };
    expect(q.matches(rec)).toBe(true);
    expect(q.matches({ ...rec, metadata: { host: 'db-1' } })).toBe(false);
  });
});
