import type { SearchRequest } from '../../api/search.js';
import { MAX_KEY, type Store } from '../store/db.js';
import { keys } from '../store/keys.js';

/** A search's note that it names a field no searched dataset has, with the known names closest to it. */
export interface FieldWarning { code: 'unknown_field'; message: string; field: string; suggestions: string[] }

/** Names every record answers to, whatever its dataset has discovered (see fieldValue.ts). */
const ALWAYS_KNOWN = new Set(['id', 'title', 'body', 'time', '_time', 'timestamp', '@timestamp', 'metadata']);
const MAX_SUGGESTIONS = 3;

/** The fields a request names where a record's value is read: `where`, `q`, `collapse` and aggregations, each once, with where. */
export function namedFields(request: SearchRequest, qFields: readonly string[]): Map<string, string> {
  const named = new Map<string, string>();
  const add = (field: string | undefined | null, where: string) => {
    if (field && !named.has(field)) named.set(field, where);
  };
  for (const item of request.where ?? []) add(item.field, 'where');
  for (const field of qFields) add(field, 'q');
  add(request.collapse?.field, 'collapse');
  for (const agg of request.aggregations ?? []) add(agg.field, `aggregation '${agg.name}'`);
  return named;
}

/**
 * A warning for each named field that no dataset of the search has discovered: such a filter
 * matches nothing (or everything, negated), such a collapse or aggregation sees no value.
 */
export function fieldWarnings(store: Store, tenantId: string, datasetIds: readonly string[], named: Map<string, string>): FieldWarning[] {
  if (named.size === 0) return [];
  const known = new Set<string>();
  for (const d of datasetIds) {
    const prefix = keys.field(tenantId, d);
    for (const key of store.meta.getKeys({ start: prefix, end: [...prefix, MAX_KEY] })) known.add(String((key as unknown[])[3]));
  }
  const warnings: FieldWarning[] = [];
  for (const [field, where] of named) {
    if (isKnown(field, known)) continue;
    const suggestions = closest(field.startsWith('metadata.') ? field.slice('metadata.'.length) : field, known);
    const hint = suggestions.length > 0 ? `: did you mean ${suggestions.map((s) => `'${s}'`).join(', ')}?` : '';
    warnings.push({ code: 'unknown_field', message: `no searched dataset has a field '${field}' (named in ${where})${hint}`, field, suggestions });
  }
  return warnings;
}

/** A path is known when a dataset has it, or a field it lies inside (an array of objects is one field). */
function isKnown(field: string, known: Set<string>): boolean {
  const path = field.startsWith('metadata.') ? field.slice('metadata.'.length) : field;
  if (ALWAYS_KNOWN.has(field) || known.has(path)) return true;
  for (let dot = path.lastIndexOf('.'); dot > 0; dot = path.lastIndexOf('.', dot - 1)) if (known.has(path.slice(0, dot))) return true;
  return false;
}

/** The known names nearest `field`: the same but for case first, then by edit distance (at most a third of its length, and 2 at least). */
function closest(field: string, known: Set<string>): string[] {
  const lower = field.toLowerCase();
  const most = Math.max(2, Math.floor(field.length / 3));
  const scored: [string, number][] = [];
  for (const name of new Set([...known, ...ALWAYS_KNOWN])) {
    const d = name.toLowerCase() === lower ? 0 : editDistance(lower, name.toLowerCase(), most) + 0.5;
    if (d <= most) scored.push([name, d]);
  }
  return scored.sort((a, b) => a[1] - b[1] || a[0].localeCompare(b[0])).slice(0, MAX_SUGGESTIONS).map(([name]) => name);
}

/** Levenshtein distance, or `cap + 1` as soon as it must exceed `cap`. */
function editDistance(a: string, b: string, cap: number): number {
  if (Math.abs(a.length - b.length) > cap) return cap + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      best = Math.min(best, cur[j]);
    }
    if (best > cap) return cap + 1;
    prev = cur;
  }
  return prev[b.length];
}
