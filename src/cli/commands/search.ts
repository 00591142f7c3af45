import type { Command } from 'commander';
import type { SearchEnvelope } from '../../api/search.js';
import { withService } from '../context.js';
import { addSearchFlags, searchRequestOf, type SearchFlags } from '../searchFlags.js';

/** What a table of records leaves out: how many there are, the next page, the aggregations. */
function footer(result: SearchEnvelope): string {
  const lines = [`${result.records.length} of ${result.total.relation === 'gte' ? 'at least ' : ''}${result.total.value} records`];
  if (result.next_cursor) lines.push(`next page: --cursor ${result.next_cursor}`);
  for (const [name, agg] of Object.entries(result.aggregations)) lines.push(`${name}: ${JSON.stringify(agg)}`);
  return lines.join('\n') + '\n';
}

export function searchCommand(program: Command): void {
  addSearchFlags(program.command('search [text]').description('search records (BM25 over title and body, with filters and aggregations)'))
    .option('--cursor <cursor>', 'next page: the next_cursor of the previous answer')
    .addHelpText('after', `\nExamples:\n  svc search "PacketResponder terminating" --dataset logs\n  svc search block --dataset logs --where 'level eq WARN' --output ndjson | jq .provenance\n  svc search --dataset hdfs --q 'Level:WARN AND Component:dfs*' --agg components=terms:Component\n  svc search "disk is slow" --semantic --dataset logs --min-score 0.5`)
    .action((text: string | undefined, o: SearchFlags & { cursor?: string }, cmd: Command) =>
      withService(cmd, async ({ service, emit, format }) => {
        const result = await service.search({ ...searchRequestOf(text, o), cursor: o.cursor });
        await emit(result, { rows: result.records, columns: ['score', 'provenance.dataset_id', 'provenance.line', 'body'] });
        if (format === 'table') process.stdout.write(footer(result));
      }),
    );
}
