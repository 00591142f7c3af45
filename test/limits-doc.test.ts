import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LIMITS } from '../src/api/limits.js';
import { ROOT } from './helpers/cli.js';

/** The README's limits table, as rows keyed by their `key` column. */
function documented(): Map<string, string> {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Limits'), readme.indexOf('\n## ', readme.indexOf('## Limits') + 1));
  const rows = new Map<string, string>();
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    const key = /^`(\w+)`$/.exec(cells[2] ?? '')?.[1];
    if (key) rows.set(key, cells[3]);
  }
  return rows;
}

const spelled = (n: number) => (n >= 2 ** 20 && n % 2 ** 20 === 0 ? `${n / 2 ** 20} MiB` : n.toLocaleString('en-US'));

describe('the README limits table', () => {
  it('lists every limit of src/api/limits.ts with its value, and nothing else', () => {
    const rows = documented();
    expect([...rows.keys()].sort()).toEqual(Object.keys(LIMITS).sort());
    for (const [key, value] of Object.entries(LIMITS)) expect(rows.get(key), key).toContain(spelled(value));
  });
});
