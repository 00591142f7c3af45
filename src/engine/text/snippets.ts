import { LIMITS } from '../../api/limits.js';
import { normalizeTerm } from './analyzer.js';

const WINDOW = 160;
const MAX_SNIPPETS = 2;
const TOKEN = /[\p{L}\p{N}]+/gu;

const escapeHtml = (s: string) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

/**
 * Fragments of `text` around the words whose index term is one of `terms`, each word wrapped in <em>.
 * The text around them is HTML-escaped so that the only markup is ours.
 */
export function snippets(text: string, terms: Set<string>): string[] {
  if (terms.size === 0 || text.length === 0) return [];
  const hits: [number, number][] = [];
  let windows = 0;
  let windowEnd = -1;
  for (const m of text.matchAll(TOKEN)) {
    if (m.index! > LIMITS.snippetScan) break; // a long body's snippets come from its start: the cost stays bounded
    if (windows === MAX_SNIPPETS && m.index! >= windowEnd) break; // the last snippet's words are all found
    const term = normalizeTerm(m[0]);
    if (term === null || !terms.has(term)) continue;
    const end = m.index! + m[0].length;
    if (end > windowEnd) {
      windows++; // this word starts a snippet, as the loop below cuts them
      windowEnd = Math.min(text.length, Math.max(0, m.index! - WINDOW / 4) + WINDOW);
    }
    hits.push([m.index!, end]);
  }
  if (hits.length === 0) return [];
  const out: string[] = [];
  let i = 0;
  while (i < hits.length && out.length < MAX_SNIPPETS) {
    const start = Math.max(0, hits[i][0] - WINDOW / 4);
    const end = Math.min(text.length, start + WINDOW);
    let piece = '';
    let at = start;
    for (; i < hits.length && hits[i][1] <= end; i++) {
      piece += escapeHtml(text.slice(at, hits[i][0])) + '<em>' + escapeHtml(text.slice(hits[i][0], hits[i][1])) + '</em>';
      at = hits[i][1];
    }
    if (at === start) i++; // a single hit longer than the window
    piece += escapeHtml(text.slice(at, end));
    out.push((start > 0 ? '…' : '') + piece.trim() + (end < text.length ? '…' : ''));
  }
  return out;
}
