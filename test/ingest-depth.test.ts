/**
 * The record depth limit as the parsers apply it: how levels are counted, and that a line past the
 * limit is refused on its own, cheaply, before JSON.parse, whatever the format.
 */
import { describe, expect, it } from 'vitest';
import { LIMITS } from '../src/api/limits.js';
import { nestsDeeperThan, TOO_DEEP } from '../src/engine/ingest/depth.js';
import { parseObject } from '../src/engine/ingest/parse.js';
import type { IngestFormat, ParsedItem } from '../src/engine/records.js';

const LIMIT = LIMITS.recordDepth;

/** An object nested `levels` deep, counted as the limit counts them: the record itself is level 1. */
const nested = (levels: number, open = '{"a":', close = '}') => `${open.repeat(levels - 1)}{"leaf":1}${close.repeat(levels - 1)}`;

async function parse(text: string, format: IngestFormat, size = 4096): Promise<ParsedItem[]> {
  const buf = Buffer.from(text);
  const chunks = Array.from({ length: Math.ceil(buf.length / size) }, (_, i) => buf.subarray(i * size, (i + 1) * size));
  const out: ParsedItem[] = [];
  for await (const item of parseObject((async function* () { yield* chunks; })(), format)) out.push(item);
  return out;
}

describe('counting levels', () => {
  it('counts the record as level 1 and each object or array inside it as one more', () => {
    expect(nestsDeeperThan('{"a":1}', 0)).toBe(true);
    expect(nestsDeeperThan('{"a":1}', 1)).toBe(false);
    expect(nestsDeeperThan('{"a":{"b":1}}', 1)).toBe(true);
    expect(nestsDeeperThan('{"a":{"b":1}}', 2)).toBe(false);
    expect(nestsDeeperThan('{"a":[1]}', 1)).toBe(true);
    expect(nestsDeeperThan('{"a":[{"b":1}]}', 2)).toBe(true);
    expect(nestsDeeperThan('{"a":[{"b":1}]}', 3)).toBe(false);
    // siblings do not add up: depth is the deepest path, not the number of objects
    expect(nestsDeeperThan('{"a":{"x":1},"b":{"y":[2]},"c":[[3]]}', 3)).toBe(false);
  });

  it(`accepts ${LIMIT} levels and refuses ${LIMIT + 1}, objects and arrays alike`, () => {
    expect(nestsDeeperThan(nested(LIMIT))).toBe(false);
    expect(nestsDeeperThan(nested(LIMIT + 1))).toBe(true);
    expect(nestsDeeperThan(`{"a":${'['.repeat(LIMIT - 1)}${']'.repeat(LIMIT - 1)}}`)).toBe(false);
    expect(nestsDeeperThan(`{"a":${'['.repeat(LIMIT)}${']'.repeat(LIMIT)}}`)).toBe(true);
  });

  it('does not count brackets inside strings, escaped quotes included', () => {
    const brackets = '[{'.repeat(50);
    expect(nestsDeeperThan(JSON.stringify({ a: brackets, b: `say \\"${brackets}\\"`, c: `\\\\${brackets}` }), 1)).toBe(false);
    expect(nestsDeeperThan(`{"a":"x\\\\"${',"b":{'.repeat(3)}}}}}`, 3)).toBe(true); // `\\` then a quote: the string ends there
    expect(nestsDeeperThan(`{"a":"x\\"${'{'.repeat(30)}"}`, 1)).toBe(false); // `\"` does not end it
  });

  it('decides a 1 MiB line of [[[[ after its first levels, and a flat 1 MiB line in one pass', () => {
    const deep = '['.repeat(LIMITS.lineBytes);
    const flat = JSON.stringify({ a: 'x'.repeat(LIMITS.lineBytes - 20), b: [1, 2, { c: 3 }] });
    let t = performance.now();
    expect(nestsDeeperThan(deep)).toBe(true);
    expect(nestsDeeperThan(flat)).toBe(false);
    expect(performance.now() - t).toBeLessThan(100);
  });
});

describe('parsers refuse a record past the depth limit and keep the others', () => {
  it('ndjson: the deep line is malformed with its number; the lines around it parse', async () => {
    const text = ['{"n":1}', nested(LIMIT), nested(LIMIT + 1), nested(2500), '{"n":5}'].join('\n');
    const items = await parse(text, 'ndjson', 7);
    expect(items.map((i) => ('error' in i ? { line: i.line, error: i.error } : { line: i.line }))).toEqual([
      { line: 1 }, { line: 2 }, { line: 3, error: TOO_DEEP }, { line: 4, error: TOO_DEEP }, { line: 5 },
    ]);
    expect(TOO_DEEP).toContain(String(LIMIT));
  });

  it('ndjson: a 15 KB line of [[[[ and a 1 MiB one cost only themselves', async () => {
    const text = ['{"n":1}', '['.repeat(15_000), '{"n":3}', '[{'.repeat(LIMITS.lineBytes / 2), '{"n":5}'].join('\n');
    const t = performance.now();
    const items = await parse(text, 'ndjson', 65536);
    expect(performance.now() - t).toBeLessThan(1000);
    expect(items).toEqual([
      { line: 1, value: { n: 1 } },
      { line: 2, error: TOO_DEEP },
      { line: 3, value: { n: 3 } },
      { line: 4, error: TOO_DEEP },
      { line: 5, value: { n: 5 } },
    ]);
  });

  it('json: an array element past the limit is malformed at its line; a deep single object too', async () => {
    const text = `[\n{"n":1},\n${nested(LIMIT + 1)},\n${nested(LIMIT, '{"a":[', ']}')},\n{"n":4}\n]`;
    const items = await parse(text, 'json', 5);
    expect(items.map((i) => ('error' in i ? { line: i.line, error: i.error } : { line: i.line }))).toEqual([
      { line: 2 }, { line: 3, error: TOO_DEEP }, { line: 4, error: TOO_DEEP }, { line: 5 },
    ]);
    expect(await parse(`\n${nested(3000)}\n`, 'json')).toEqual([{ line: 2, error: TOO_DEEP }]);
    expect(await parse(nested(LIMIT), 'json')).toEqual([{ line: 1, value: JSON.parse(nested(LIMIT)) }]);
  });
});
