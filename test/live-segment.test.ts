/**
 * The in-memory segment adds records itself (LiveSegment.add) rather than through MiniSearch's
 * `add`: over SciFact abstracts and Loghub lines it must build exactly what MiniSearch builds —
 * postings, term frequencies, field lengths, averages — and keep doing so after records are
 * discarded.
 */
import MiniSearch, { type Options } from 'minisearch';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { corpus } from '../bench/lib/scifact.js';
import { normalizeTerm, tokenize } from '../src/engine/text/analyzer.js';
import { LiveSegment } from '../src/engine/text/liveSegment.js';
import type { TextRecord } from '../src/engine/text/protocol.js';
import type { Internals } from '../src/engine/text/snapshot.js';
import { DATA } from './helpers/cli.js';

const FIELDS = ['title', 'body'];
const options: Options<TextRecord> = {
  idField: 'seq',
  fields: FIELDS,
  storeFields: [],
  extractField: (rec, field) => (field === 'seq' ? (rec.seq as unknown as string) : field === 'title' ? (rec.title ?? '') : rec.body),
  tokenize,
  processTerm: normalizeTerm,
  autoVacuum: false,
};

function records(): TextRecord[] {
  const docs = corpus().slice(0, 2000).map((d) => ({ title: d.title, body: d.text }));
  const lines = ['HDFS', 'Apache', 'OpenSSH'].flatMap((n) => readFileSync(join(DATA, 'loghub', n, `${n}_2k.log`), 'utf8').split('\n').filter(Boolean).slice(0, 1000));
  // a repeated word, a word in two cases, an empty title: frequencies, analysis and lengths of their own
  const odd = [{ title: 'Error error ERROR', body: 'the the the the' }, { title: null, body: '' }];
  return [...docs, ...lines.map((body) => ({ title: null, body })), ...odd].map((r, i) => ({ seq: i + 1, replaces: undefined, ...r }));
}

/** Everything an index holds, as plain values: term → field → [doc, tf] pairs, lengths, averages. */
function contents(mini: MiniSearch<TextRecord>) {
  const m = mini as unknown as Internals;
  const terms: Record<string, Record<number, [number, number][]>> = {};
  for (const [term, fields] of m._index) {
    const out: Record<number, [number, number][]> = {};
    for (const [field, docs] of fields) if (docs.size > 0) out[field] = [...docs].filter(([doc]) => m._documentIds.has(doc)).sort((a, b) => a[0] - b[0]);
    if (Object.values(out).some((d) => d.length > 0)) terms[term] = out;
  }
  return { terms, lengths: [...m._fieldLength], averages: m._avgFieldLength, count: m._documentCount, ids: [...m._documentIds] };
}

describe('the in-memory segment', () => {
  it('builds what MiniSearch builds from the same records', () => {
    const all = records();
    const mini = new MiniSearch(options);
    mini.addAll(all);
    const live = new LiveSegment(options, FIELDS.length);
    for (const rec of all) live.add(rec);
    const expected = contents(mini);
    expect(Object.keys(expected.terms).length).toBeGreaterThan(10_000);
    expect(contents(live.mini)).toEqual(expected);
    expect(live.totalLength).toEqual(FIELDS.map((_, f) => expected.lengths.reduce((sum, [, l]) => sum + (l[f] ?? 0), 0)));
  });

  it('after discarding records, adds the next ones as MiniSearch does', () => {
    const all = records();
    const [first, rest] = [all.slice(0, 3000), all.slice(3000)];
    const mini = new MiniSearch(options);
    const live = new LiveSegment(options, FIELDS.length);
    mini.addAll(first);
    for (const rec of first) live.add(rec);
    for (let seq = 1; seq <= 3000; seq += 3) {
      mini.discard(seq);
      expect(live.remove(seq)).toBe(true);
    }
    mini.addAll(rest);
    for (const rec of rest) live.add(rec);
    expect(contents(live.mini)).toEqual(contents(mini));
    expect(() => live.add(rest[0])).toThrow(/duplicate ID/);
  });
});
