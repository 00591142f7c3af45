// The search form's state and the /v1/search request it makes, histogram included.
import type { AggregationSpec, SearchRequest, TimeFilter, WhereItem } from '../api/search';

export type Mode = 'text' | 'semantic' | 'hybrid';
export type Preset = '15m' | '1h' | '24h' | '7d' | 'all' | 'custom';
export const PRESETS: Preset[] = ['15m', '1h', '24h', '7d', 'all'];
export const OPS: WhereItem['op'][] = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'nin', 'exists', 'prefix', 'contains'];

export interface WhereRow {
  field: string;
  op: WhereItem['op'];
  value: string;
}

export interface SearchForm {
  datasets: string[]; // none: every dataset
  text: string;
  q: string;
  where: WhereRow[];
  preset: Preset;
  from: string; // datetime-local values, UTC
  to: string;
  mode: Mode;
}

export const emptyForm = (): SearchForm => ({ datasets: [], text: '', q: '', where: [], preset: 'all', from: '', to: '', mode: 'text' });

export const HISTOGRAM = 'time_histogram';
const UNIT: Record<string, number> = { s: 1e3, m: 6e4, h: 3.6e6, d: 8.64e7, w: 6.048e8 };
const STEPS = ['1s', '5s', '10s', '30s', '1m', '5m', '10m', '30m', '1h', '3h', '6h', '12h', '1d', '1w'];
export const stepMs = (interval: string) => Number(interval.slice(0, -1)) * UNIT[interval.slice(-1)];

/** The finest interval that draws a span in at most ~120 bars. */
export function intervalFor(spanMs: number): string {
  return STEPS.find((s) => spanMs / stepMs(s) <= 120) ?? '1w';
}

const PRESET_MS: Record<string, number> = { '15m': 9e5, '1h': 3.6e6, '24h': 8.64e7, '7d': 6.048e8 };

/** A datetime-local input's value read as UTC, and back. */
export const localToIso = (v: string) => (v ? new Date(`${v}Z`).toISOString() : undefined);
export const isoToLocal = (ms: number) => new Date(ms).toISOString().slice(0, 19);

export function timeFilter(f: SearchForm): TimeFilter | null {
  if (f.preset === 'all') return null;
  if (f.preset !== 'custom') return { last: f.preset };
  const t: TimeFilter = {};
  const gte = localToIso(f.from);
  const lt = localToIso(f.to);
  if (gte) t.gte = gte;
  if (lt) t.lt = lt;
  return gte || lt ? t : null;
}

/** The span the histogram covers, when the form says; null for "all" (learned from the data). */
export function spanOf(f: SearchForm): number | null {
  if (f.preset in PRESET_MS) return PRESET_MS[f.preset];
  if (f.preset === 'custom' && f.from && f.to) return Math.max(1000, Date.parse(`${f.to}Z`) - Date.parse(`${f.from}Z`));
  return null;
}

function whereValue(r: WhereRow): unknown {
  if (r.op === 'exists') return undefined;
  if (r.op === 'in' || r.op === 'nin') return r.value.split(',').map((s) => s.trim()).filter(Boolean);
  return r.value;
}

export function buildRequest(f: SearchForm, interval: string, limit = 20): SearchRequest {
  const req: SearchRequest = { text: f.text, limit, mode: f.mode };
  if (f.q.trim()) req.q = f.q;
  if (f.datasets.length) req.datasets = f.datasets;
  const where = f.where.filter((r) => r.field.trim()).map((r) => {
    const w: WhereItem = { field: r.field.trim(), op: r.op };
    const v = whereValue(r);
    if (v !== undefined) w.value = v;
    return w;
  });
  if (where.length) req.where = where;
  const time = timeFilter(f);
  if (time) req.time = time;
  const agg: AggregationSpec = { name: HISTOGRAM, type: 'date_histogram', field: 'time', interval };
  req.aggregations = [agg];
  return req;
}

export interface Bucket {
  key: number;
  doc_count: number;
}

export function bucketsOf(aggs: Record<string, unknown> | undefined): Bucket[] {
  const h = aggs?.[HISTOGRAM] as { buckets?: Bucket[] } | undefined;
  return h?.buckets ?? [];
}
