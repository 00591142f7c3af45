import { LiveSegment } from '../../src/engine/text/liveSegment.js';
import type { TextRecord } from '../../src/engine/text/protocol.js';

/** Each record's text in `fields` (title and body only, as the tests' records have). */
export const fieldText = (fields: string[]) => (rec: TextRecord, f: number) => (fields[f] === 'title' ? rec.title ?? null : rec.body);

export const newLive = (fields: string[]) => new LiveSegment(fields, fieldText(fields));

/** Everything an in-memory segment holds, by seq: term → field → [seq, tf] pairs, and seq → field lengths. */
export function liveContents(live: LiveSegment, fieldCount: number) {
  const terms: Record<string, Record<number, [number, number][]>> = {};
  for (const term of live.terms.keys()) {
    const out: Record<number, [number, number][]> = {};
    for (let f = 0; f < fieldCount; f++) {
      const list = live.postings(term, f) ?? [];
      const pairs: [number, number][] = [];
      for (let i = 0; i < list.length; i += 2) if (live.isLive(list[i])) pairs.push([live.seq(list[i]), list[i + 1]]);
      if (pairs.length > 0) out[f] = pairs;
    }
    if (Object.keys(out).length > 0) terms[term] = out;
  }
  const lengths: Record<number, number[]> = {};
  for (let doc = 0; doc < live.slots; doc++) {
    if (live.isLive(doc)) lengths[live.seq(doc)] = Array.from({ length: fieldCount }, (_, f) => live.length(doc, f));
  }
  return { terms, lengths };
}
