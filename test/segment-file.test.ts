import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { corpus } from '../bench/lib/scifact.js';
import { normalizeTerm, tokenize } from '../src/engine/text/analyzer.js';
import { Segment } from '../src/engine/text/segment.js';
import { SegmentWriter, TERM_BLOCK } from '../src/engine/text/segmentFile.js';

function levenshtein(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length];
}

/** A sealed segment's file: its dictionary read block by block against the sorted list it was written from, and its postings. */
describe('a sealed segment file', () => {
  let dir: string;
  let segment: Segment;
  let terms: string[];

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-terms-'));
    const vocabulary = new Set(['café', 'cafe', 'naïve', '日本語', 'zürich', 'zurich']);
    for (const doc of corpus().slice(0, 1500)) {
      for (const token of tokenize(`${doc.title} ${doc.text}`)) {
        const term = normalizeTerm(token);
        if (term) vocabulary.add(term);
      }
    }
    terms = [...vocabulary].sort();
    const writer = new SegmentWriter(join(dir, 'seg-1'), 2);
    // term i is in doc i % 7 of field 0 (tf i % 5 + 1), and in no doc of field 1
    terms.forEach((term, i) => writer.term(term, [Uint32Array.of(i % 7, (i % 5) + 1), new Uint32Array(0)]));
    writer.finish(Float64Array.from({ length: 7 }, (_, i) => i + 1), new Uint32Array(14).fill(3), ['title', 'body'], { replaces: [] });
    segment = Segment.open(join(dir, 'seg-1'));
  });
  afterAll(() => {
    segment.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('holds every term in order, across blocks, with its postings', () => {
    expect(terms.length).toBeGreaterThan(100 * TERM_BLOCK);
    expect(segment.terms.size).toBe(terms.length);
    terms.forEach((term, i) => {
      expect(segment.terms.at(i)).toBe(term);
      expect(segment.terms.indexOf(term)).toBe(i);
    });
    for (const i of [0, TERM_BLOCK - 1, TERM_BLOCK, 77 * TERM_BLOCK + 5, terms.length - 1]) {
      expect([...segment.postings(terms[i], 0)]).toEqual([i % 7, (i % 5) + 1]);
      expect(segment.postings(terms[i], 1).length).toBe(0);
    }
    expect(segment.terms.indexOf('qqqzz')).toBe(-1);
    expect(segment.terms.indexOf('\uffff')).toBe(-1);
    expect(segment.terms.indexOf('')).toBe(-1);
    expect(segment.terms.at(segment.terms.indexOf('日本語'))).toBe('日本語');
  });

  it('finds the first term not below any string, a block boundary or between terms', () => {
    const probes = ['', 'a', 'ab', 'cell', 'cellz', 'm', 'zz', '\uffff', ...terms.filter((_, i) => i % TERM_BLOCK === 0).slice(0, 40), ...terms.slice(0, 200).map((t) => t + 'a')];
    for (const probe of probes) {
      const expected = terms.findIndex((t) => t >= probe);
      expect(segment.terms.lowerBound(probe), probe).toBe(expected < 0 ? terms.length : expected);
    }
  });

  it('reads postings in term order through its window as a search reads them one list at a time', () => {
    const path = join(dir, 'seg-2');
    const writer = new SegmentWriter(path, 1);
    const lists: Uint32Array[] = [];
    // 3,000 lists of up to 600 pairs, one of 200,000 (1.6 MB, more than the window): about 8 MB in all
    for (let t = 0; t < 3000; t++) {
      const pairs = t === 1234 ? 200_000 : (t * 7919) % 600;
      const list = new Uint32Array(pairs * 2);
      for (let i = 0; i < pairs; i++) list.set([i, ((t + i) % 9) + 1], 2 * i);
      lists.push(list);
      writer.term(`t${String(t).padStart(5, '0')}`, [list]);
    }
    writer.finish(Float64Array.from({ length: 200_000 }, (_, i) => i + 1), new Uint32Array(200_000).fill(2), ['body'], { replaces: [] });
    const big = Segment.open(path);
    try {
      const inOrder = big.inOrder();
      const bytes = (a: Uint32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
      const wrong = lists.flatMap((list, t) => (bytes(inOrder(t, 0)).equals(bytes(list)) && bytes(big.postings(big.terms.at(t), 0)).equals(bytes(list)) ? [] : [t]));
      expect(wrong).toEqual([]);
    } finally {
      big.close();
    }
  });

  it('lists the terms with a prefix, and those within an edit distance, as a scan of every term does', () => {
    for (const prefix of ['cell', 'prot', 'z', 'caf', 'inflamm', 'qqq']) expect([...segment.terms.withPrefix(prefix)], prefix).toEqual(terms.filter((t) => t.startsWith(prefix)));
    for (const [query, max] of [['protien', 2], ['cancr', 1], ['cafe', 1], ['zurich', 1], ['diabetis', 2], ['mous', 1], ['xyzzyq', 2]] as const) {
      const expected = new Map(terms.map((t) => [t, levenshtein(query, t)] as const).filter(([, d]) => d <= max));
      expect(segment.terms.fuzzy(query, max), query).toEqual(expected);
    }
  });
});
