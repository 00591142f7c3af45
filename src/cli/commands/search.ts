import { Option, type Command } from 'commander';
import type { AggregationSpec, SearchEnvelope, SearchRequest, WhereItem } from '../../api/search.js';
import { EXIT, Exit, withService } from '../context.js';

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

/** What a table of records leaves out: how many there are, the next page, the aggregations. */
function footer(result: SearchEnvelope): string {
  const lines = [`${result.records.length} of ${result.total.relation === 'gte' ? 'at least ' : ''}${result.total.value} records`];
  if (result.next_cursor) lines.push(`next page: --cursor ${result.next_cursor}`);
  for (const [name, agg] of Object.entries(result.aggregations)) lines.push(`${name}: ${JSON.stringify(agg)}`);
  return lines.join('\n') + '\n';
}

interface SearchFlags {
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
  cursor?: string;
}

export function searchCommand(program: Command): void {
  program
    .command('search [text]')
    .description('search records (BM25 over title and body, with filters and aggregations)')
    .option('--dataset <id>', 'search this dataset (repeatable; default: all)', collect)
    .option('--q <query>', 'query string: field:value, "phrases", AND/OR/NOT, n:[1 TO 5], host:web*')
    .option('--where <filter>', "filter 'field op value' (repeatable); op: " + OPS.join(' '), collect)
    .option('--last <duration>', 'only records whose time is within this duration: 15m, 24h, 7d')
    .option('--agg <spec>', 'aggregation [name=]type:field[:param] (repeatable)', collect)
    .option('--collapse <field>', 'keep the best record per value of this field')
    .option('--semantic', 'semantic search (hybrid when there is text)')
    .addOption(new Option('--mode <mode>', 'search mode (wins over --semantic)').choices(['text', 'semantic', 'hybrid']))
    .option('--min-score <score>', 'semantic: leave out vector matches below this cosine', (v) => Number(v))
    .option('--limit <n>', 'records per page (max 1000)', (v) => Number(v))
    .option('--cursor <cursor>', 'next page: the next_cursor of the previous answer')
    .addHelpText('after', `\nExamples:\n  svc search "PacketResponder terminating" --dataset logs\n  svc search block --dataset logs --where 'level eq WARN' --output ndjson | jq .provenance\n  svc search --dataset hdfs --q 'Level:WARN AND Component:dfs*' --agg components=terms:Component\n  svc search "disk is slow" --semantic --dataset logs --min-score 0.5`)
    .action((text: string | undefined, o: SearchFlags, cmd: Command) =>
      withService(cmd, async ({ service, emit, format }) => {
        const req: SearchRequest = {
          text: text ?? '',
          q: o.q,
          datasets: o.dataset,
          where: o.where?.map(parseWhere),
          time: o.last ? { last: o.last } : undefined,
          aggregations: o.agg?.map(parseAgg),
          collapse: o.collapse ? { field: o.collapse } : undefined,
          semantic: o.semantic,
          mode: o.mode,
          semantic_min_score: o.minScore,
          limit: o.limit,
          cursor: o.cursor,
        };
        const result = await service.search(req);
        await emit(result, { rows: result.records, columns: ['score', 'provenance.dataset_id', 'provenance.line', 'body'] });
        if (format === 'table') process.stdout.write(footer(result));
      }),
    );
}
