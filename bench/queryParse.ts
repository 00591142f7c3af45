/**
 * q parse time at 1, 4 and 16 KB for pathological shapes. The parser is called directly, so 16 KB
 * passes the length cap and the clause count is not capped; the nesting cap stays. A linear
 * parser shows about the same µs per KB in every column, and a 4× longer q takes about 4× longer.
 */
import { LIMITS } from '../src/api/limits.js';
import { parseQuery } from '../src/engine/search/queryParser.js';
import { quantile } from './lib/stats.js';
import { fixed, printTable } from './lib/table.js';

const SIZES = [1024, 4096, 16_384];
const LIMITS_OFF = { clauses: Infinity, depth: LIMITS.qDepth };

const SHAPES: Record<string, string> = {
  'OR chain': 'a OR',
  'field tests': 'level:ERROR',
  'nesting at the cap': `${'('.repeat(LIMITS.qDepth)}x${')'.repeat(LIMITS.qDepth)}`,
  'NOT chains': `${'NOT '.repeat(LIMITS.qDepth - 1)}x`,
  quotes: '"a b"',
  colons: 'a:b:c:d:e:f',
  wildcards: 'f:a*b?c*d',
  'failed regexes': 'p:/x',
  ranges: 'n:[1 TO 5}',
};

/** Whole copies of `unit`, space-separated, padded with spaces to exactly `size` characters. */
function shaped(unit: string, size: number): string {
  let q = `${unit} `.repeat(Math.floor((size - 2) / (unit.length + 1)));
  if (unit.endsWith('OR')) q += 'a';
  return q.padEnd(size, ' ');
}

/** Median ms of one parse, over enough runs to last about 200 ms. */
function timeParse(q: string): number {
  parseQuery(q, LIMITS_OFF);
  const samples: number[] = [];
  const until = performance.now() + 200;
  while (performance.now() < until || samples.length < 5) {
    const t = performance.now();
    parseQuery(q, LIMITS_OFF);
    samples.push(performance.now() - t);
  }
  return quantile(samples, 0.5);
}

export function queryParseBench(): void {
  const rows = Object.entries(SHAPES).map(([name, unit]) => {
    const ms = SIZES.map((size) => timeParse(shaped(unit, size)));
    const perKb = ms.map((t, k) => (t * 1000) / (SIZES[k] / 1024));
    return [name, ...ms.map((t) => fixed(t, 3)), ...perKb.map((t) => fixed(t, 1)), `${fixed(ms[2] / ms[1], 1)}×`];
  });
  const kb = SIZES.map((s) => `${s / 1024} KB`);
  printTable(
    'q parse time (median ms; µs per KB; 16 KB over 4 KB, 4× when linear)',
    ['shape', ...kb.map((k) => `ms ${k}`), ...kb.map((k) => `µs/KB ${k}`), '16/4'],
    rows,
  );
}
