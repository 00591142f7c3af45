import { stemmer } from 'stemmer';

// Lucene's English stop words (EnglishAnalyzer.ENGLISH_STOP_WORDS_SET).
const STOP_WORDS = new Set([
  'a', 'an', 'and', 'are', 'as', 'at', 'be', 'but', 'by', 'for', 'if', 'in', 'into', 'is', 'it', 'no', 'not',
  'of', 'on', 'or', 'such', 'that', 'the', 'their', 'then', 'there', 'these', 'they', 'this', 'to', 'was',
  'will', 'with',
]);

const TOKEN = /[\p{L}\p{N}]+/gu;
const stemCache = new Map<string, string>();
const STEM_CACHE_MAX = 200_000;

/** Splits text into lower-cased word tokens, as they appear (no stemming). */
export function tokenize(text: string): string[] {
  return text.toLowerCase().match(TOKEN) ?? [];
}

/** A token as the index holds it: null for a stop word, else its Porter stem (memoised: stemming is the hot path). */
export function normalizeTerm(token: string): string | null {
  const term = token.toLowerCase();
  if (STOP_WORDS.has(term)) return null;
  if (term.length <= 2 || /\d/.test(term)) return term; // not stemmed, and a log's ids would only churn the cache
  let stem = stemCache.get(term);
  if (stem === undefined) {
    stem = stemmer(term);
    if (stemCache.size >= STEM_CACHE_MAX) stemCache.clear();
    stemCache.set(term, stem);
  }
  return stem;
}

/** Index terms of a text: tokens, stop words removed, stemmed. */
export function analyze(text: string): string[] {
  const out: string[] = [];
  for (const token of tokenize(text)) {
    const term = normalizeTerm(token);
    if (term !== null) out.push(term);
  }
  return out;
}
