/**
 * The in-memory segment (LiveSegment) must hold exactly what MiniSearch's `add` builds from the
 * same records — postings, term frequencies, field lengths (distinct tokens) — over SciFact
 * abstracts and Loghub lines, and keep doing so after records are removed.
 */
import MiniSearch, { type Options } from 'minisearch';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { corpus } from '../bench/lib/scifact.js';
import { normalizeTerm, tokenize } from '../src/engine/text/analyzer.js';
import { LiveSegment } from '../src/engine/text/liveSegment.js';
import type { TextRecord } from '../src/engine/text/protocol.js';
import { DATA } from './helpers/cli.js';
import { liveContents, newLive } from './helpers/liveSegment.js';

const FIELDS = ['title', 'body'];
const options: Options<TextRecord> = {
  idField: 'seq',
  fields: FIELDS,
  storeFields: [],
  extractField: (rec, field) => (field === 'seq' ? (rec.seq as unknown as string) : field === 'title' ? (rec.title ?? '') : rec.body),
  tokenize,
  processTerm: normalizeTerm,
};

function records(): TextRecord[] {
  const docs = corpus().slice(0, 2000).map((d) => ({ title: d.title, body: d.text }));
  const lines = ['HDFS', 'Apache', 'OpenSSH'].flatMap((n) => readFileSync(join(DATA, 'loghub', n, `${n}_2k.log`), 'utf8').split('\n').filter(Boolean).slice(0, 1000));
  // a repeated word, a word in two cases, an empty title: frequencies, analysis and lengths of their own
  const odd = [{ title: 'Error error ERROR', body: 'the the the the' }, { title: null, body: '' }];
  return [...docs, ...lines.map((body) => ({ title: null, body })), ...odd].map((r, i) => ({ seq: i + 1, replaces: undefined, ...r }));
}

/** MiniSearch's members this test reads. */
interface MiniInternals {
  _index: Map<string, Map<number, Map<number, number>>>;
  _documentIds: Map<number, number>;
  _fieldLength: Map<number, number[]>;
}

/** What a MiniSearch holds, in the form of `liveContents`: term → field → [seq, tf] pairs, and seq → field lengths. */
function miniContents(mini: MiniSearch<TextRecord>) {
  const m = mini as unknown as MiniInternals;
  const terms: Record<string, Record<number, [number, number][]>> = {};
  for (const [term, fields] of m._index) {
    const out: Record<number, [number, number][]> = {};
    for (const [field, docs] of fields) {
      const pairs = [...docs].filter(([doc]) => m._documentIds.has(doc)).map(([doc, tf]): [number, number] => [m._documentIds.get(doc)!, tf]);
      if (pairs.length > 0) out[field] = pairs.sort((a, b) => a[0] - b[0]);
    }
    if (Object.keys(out).length > 0) terms[term] = out;
  }
  const lengths: Record<number, number[]> = {};
  for (const [doc, seq] of m._documentIds) lengths[seq] = FIELDS.map((_, f) => m._fieldLength.get(doc)![f] ?? 0);
  return { terms, lengths };
}

describe('the in-memory segment', () => {
  it('holds what MiniSearch builds from the same records', () => {
    const all = records();
    const mini = new MiniSearch(options);
    mini.addAll(all);
    const live = newLive(FIELDS);
    for (const rec of all) live.add(rec);
    const expected = miniContents(mini);
    expect(Object.keys(expected.terms).length).toBeGreaterThan(10_000);
    expect(liveContents(live, FIELDS.length)).toEqual(expected);
    expect(live.docs).toBe(all.length);
    expect(live.totalLength).toEqual(FIELDS.map((_, f) => Object.values(expected.lengths).reduce((sum, l) => sum + l[f], 0)));
  });

  it('after removing records, holds and adds as MiniSearch does', () => {
    const all = records();
    const [first, rest] = [all.slice(0, 3000), all.slice(3000)];
    const mini = new MiniSearch(options);
    const live = newLive(FIELDS);
    mini.addAll(first);
    for (const rec of first) live.add(rec);
    for (let seq = 1; seq <= 3000; seq += 3) {
      mini.discard(seq);
      expect(live.remove(seq)).toBe(true);
      expect(live.has(seq)).toBe(false);
    }
    expect(live.remove(1)).toBe(false); // already gone
    expect(live.remove(99_999)).toBe(false); // never there
    mini.addAll(rest);
    for (const rec of rest) live.add(rec);
    expect(liveContents(live, FIELDS.length)).toEqual(miniContents(mini));
    expect(live.docs).toBe(all.length - 1000);
    expect(live.clean).toBe(false);
    // records enter in seq order only: the same seq again, or an older one, is refused
    expect(() => live.add(rest[0])).toThrow(/not after/);
  });

  it('finds terms by prefix and by typo through its term tree', () => {
    const live: LiveSegment = newLive(FIELDS);
    for (const rec of records().slice(2000, 3000)) live.add(rec);
    expect(live.terms.has('packetrespond')).toBe(true);
    expect([...live.terms.atPrefix('packetr').keys()]).toContain('packetrespond');
    expect([...live.terms.fuzzyGet('packetrespondr', 1).keys()]).toEqual(['packetrespond']);
  });
});
