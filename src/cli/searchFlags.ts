import { Option, type Command } from 'commander';
import type { AggregationSpec, SearchRequest, SortKey, WhereItem } from '../api/search.js';
import { EXIT, Exit } from './context.js';

const OPS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'nin', 'exists', 'prefix', 'contains'];
const AGG_TYPES = ['terms', 'date_histogram', 'histogram', 'stats', 'count'];

const collect = (v: string, prev: string[] = []) => [...prev, v];

/** A JSON value when the text is one (numbers, booleans, arrays), else the text itself. */
function literal(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** 'field op value', e.g. `level eq WARN`, `status in 500,503`, `user exists`. */
export function parseWhere(spec: string): WhereItem {
  const m = /^\s*(\S+)\s+(\S+)(?:\s+([\s\S]*))?$/.exec(spec);
  if (!m || !OPS.includes(m[2])) throw new Exit(EXIT.usage, `invalid --where '${spec}': use 'field op value' with op one of ${OPS.join(' ')}`);
  const op = m[2] as WhereItem['op'];
  const raw = m[3]?.trim();
  if (raw === undefined) return op === 'exists' ? { field: m[1], op } : invalidWhere(spec);
  const value = (op === 'in' || op === 'nin') && !raw.startsWith('[') ? raw.split(',').map((v) => literal(v.trim())) : literal(raw);
  return { field: m[1], op, value };
}
const invalidWhere = (spec: string): never => {
  throw new Exit(EXIT.usage, `invalid --where '${spec}': this op needs a value`);
};

/** `[name=]type[:field[:interval-or-size]]`, e.g. `levels=terms:level`, `date_histogram:time:1h`, `count`. */
export function parseAgg(spec: string): AggregationSpec {
  const m = /^(?:([\w.-]+)=)?(\w+)(?::([^:]+))?(?::(.+))?$/.exec(spec);
  if (!m || !AGG_TYPES.includes(m[2])) throw new Exit(EXIT.usage, `invalid --agg '${spec}': use [name=]type:field[:param] with type one of ${AGG_TYPES.join(' ')}`);
  const [, name, type, field, param] = m;
  const agg: AggregationSpec = { name: name ?? (field ? `${type}_${field}` : type), type: type as AggregationSpec['type'], field };
  if (param !== undefined) {
    if (type === 'terms') agg.size = Number(param);
    else agg.interval = type === 'histogram' ? Number(param) : param;
  }
  return agg;
}

/**
 * `field[:asc|desc]`, comma-separated or one a flag: `time:desc`, `status,id:desc`. Without an
 * order the service's default applies (descending for time, created_at and score, else ascending).
 * A field path holding a colon takes its order spelled out: `a:b:asc`.
 */
export function parseSort(specs: string[]): SortKey[] {
  return specs.flatMap((spec) =>
    spec.split(',').map((part): SortKey => {
      const item = part.trim();
      const colon = item.lastIndexOf(':');
      const field = colon < 0 ? item : item.slice(0, colon).trim();
      const order = colon < 0 ? undefined : item.slice(colon + 1).trim().toLowerCase();
      if (field === '' || (order !== undefined && order !== 'asc' && order !== 'desc')) {
        throw new Exit(EXIT.usage, `invalid --sort '${spec}': use field[:asc|desc], e.g. time:desc or status:asc,id (comma-separated or repeated)`);
      }
      return order === undefined ? { field } : { field, order };
    }),
  );
}

export interface SearchFlags {
  dataset?: string[];
  q?: string;
  where?: string[];
  last?: string;
  agg?: string[];
  collapse?: string;
  semantic?: boolean;
  mode?: 'text' | 'semantic' | 'hybrid';
  minScore?: number;
  limit?: number;
  sort?: string[];
}

/**
 * The flags that make a search request, shared by every command that takes one (search, views,
 * exports). `paging: false` leaves out --limit: a view or an export holds every record, not a page.
 */
export function addSearchFlags(cmd: Command, { paging = true } = {}): Command {
  cmd
    .option('-d, --dataset <id>', 'search this dataset (repeatable; default: all)', collect)
    .option('-q, --q <query>', 'query string: field:value, "phrases", AND/OR/NOT, n:[1 TO 5], host:web*')
    .option('-w, --where <filter>', "filter 'field op value' (repeatable); op: " + OPS.join(' '), collect)
    .option('--last <duration>', 'only records whose time is within this duration: 15m, 24h, 7d')
    .option('--agg <spec>', 'aggregation [name=]type:field[:param] (repeatable)', collect)
    .option('--collapse <field>', 'keep the best record per value of this field')
    .option('--sort <field[:asc|desc]>', 'order by these fields (repeatable or comma-separated): time, score, id, created_at or a field path; default order desc for time, created_at and score, else asc', collect)
    .option('--semantic', 'semantic search (hybrid when there is text)')
    .addOption(new Option('--mode <mode>', 'search mode (wins over --semantic)').choices(['text', 'semantic', 'hybrid']))
    .option('--min-score <score>', 'semantic: leave out vector matches below this cosine', (v) => Number(v));
  return paging ? cmd.option('-n, --limit <n>', 'records per page (max 1000)', (v) => Number(v)) : cmd;
}

/** Whether any flag (or text) of a search was given: a command taking a search or something else tells which it got. */
export const searchGiven = (text: string | undefined, o: SearchFlags): boolean =>
  Boolean(text) || [o.dataset, o.q, o.where, o.last, o.agg, o.collapse, o.semantic, o.mode, o.minScore, o.sort].some((v) => v !== undefined);

/** The search request the flags describe (no cursor: paging is the caller's business). */
export function searchRequestOf(text: string | undefined, o: SearchFlags): SearchRequest {
  return {
    text: text ?? '',
    q: o.q,
    datasets: o.dataset,
    where: o.where?.map(parseWhere),
    time: o.last ? { last: o.last } : undefined,
    aggregations: o.agg?.map(parseAgg),
    collapse: o.collapse ? { field: o.collapse } : undefined,
    sort: o.sort ? parseSort(o.sort) : undefined,
    semantic: o.semantic,
    mode: o.mode,
    semantic_min_score: o.minScore,
    limit: o.limit,
  };
}
