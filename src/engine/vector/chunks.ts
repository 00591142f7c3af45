import type { StoredRecord } from '../records.js';
import { fieldValue } from '../search/fieldValue.js';

export interface DocumentField { field: string; max_chars: number }

/** A record longer than this many chunks keeps only the first ones: one record cannot flood the index. */
export const MAX_CHUNKS = 16;

const asText = (v: unknown): string => (v === null || v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v));

/** Cuts text into pieces of at most `max` characters, at whitespace where there is some. */
export function split(text: string, max: number): string[] {
  const out: string[] = [];
  let rest = text.trim();
  while (rest.length > max) {
    let cut = rest.lastIndexOf(' ', max);
    if (cut < max / 2) cut = max;
    out.push(rest.slice(0, cut).trim());
    rest = rest.slice(cut).trim();
  }
  if (rest) out.push(rest);
  return out;
}

/**
 * The texts to embed for a record: text past a field's `max_chars` is chunked, not dropped. Chunk
 * i joins the i-th piece of every field, so the first vector sees the title with the start of the
 * body and later vectors carry the rest; a search scores a record by its best chunk. Empty when
 * the record has no text in those fields.
 */
export function documentTexts(rec: StoredRecord, fields: DocumentField[]): string[] {
  const pieces = fields.map((f) => split(asText(fieldValue(rec, f.field)), f.max_chars));
  const n = Math.min(MAX_CHUNKS, Math.max(0, ...pieces.map((p) => p.length)));
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(pieces.map((p) => p[i] ?? '').filter(Boolean).join('\n'));
  return out;
}
