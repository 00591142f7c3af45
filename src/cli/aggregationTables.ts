import { tableText, type Row } from './output.js';

/**
 * An aggregation under a table, as a small table of its own: one row a bucket (key, count). One
 * without buckets (stats, count) is a line of its values.
 */
export function aggregationText(name: string, agg: unknown): string {
  const buckets = (agg as { buckets?: Row[] } | null)?.buckets;
  if (Array.isArray(buckets)) {
    const rows = buckets.map((b) => ({ key: b.key_as_string ?? b.key, count: b.doc_count ?? b.count }));
    const other = (agg as { sum_other_doc_count?: number }).sum_other_doc_count;
    if (other) rows.push({ key: '(other)', count: other });
    return `\n${name}\n` + tableText(rows, ['key', 'count']);
  }
  const values = agg && typeof agg === 'object' ? Object.entries(agg).map(([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v) : String(v)}`) : [String(agg)];
  return `${name}: ${values.join(' ')}\n`;
}
