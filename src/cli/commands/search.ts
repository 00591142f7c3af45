import type { Command } from 'commander';
import type { SearchEnvelope } from '../../api/search.js';
import { withService } from '../context.js';
import { printAll, printPage, type PageShape } from '../paging.js';
import { recordColumns, recordRow } from '../recordRows.js';
import { addFieldsFlag } from '../fieldsFlag.js';
import { addSearchFlags, searchRequestOf, type SearchFlags } from '../searchFlags.js';

/** With --all and no --limit: the largest page, so that every record takes the fewest requests. */
export const ALL_PAGE_SIZE = 1000;

export function searchCommand(program: Command): void {
  addFieldsFlag(addSearchFlags(program.command('search [text]').description('search records (BM25 over title and body, with filters and aggregations)')))
    .option('--cursor <cursor>', 'next page: the next_cursor of the previous answer')
    .option('--all', 'every record, page after page (from --cursor when given; --limit is the page size): ndjson and csv stream, json is one array')
    .addHelpText(
      'after',
      `\nExamples:
  svc search "PacketResponder terminating" --dataset logs
  svc search block --dataset logs --where 'level eq WARN' --output ndjson | jq .provenance
  svc search --dataset hdfs --q 'Level:WARN AND Component:dfs*' --agg components=terms:Component
  svc search "disk is slow" --semantic --dataset logs --min-score 0.5
  svc search --dataset hdfs --q 'Level:WARN' --all --output csv > warnings.csv
  svc search --dataset openstack --sort status:desc,time:asc --where 'status exists'`,
    )
    .action((text: string | undefined, o: SearchFlags & { cursor?: string; all?: boolean }, cmd: Command) =>
      withService(cmd, async ({ service, emit, format, fields }) => {
        const shape: PageShape<SearchEnvelope> = {
          format,
          noun: 'records',
          rows: (page) => page.records.map((r) => recordRow(r, format)),
          columns: (page) => fields ?? recordColumns(page, format),
          warnings: (page) => page.warnings?.map((w) => w.message) ?? [],
        };
        const req = searchRequestOf(text, o);
        if (!o.all) return printPage(await service.search({ ...req, cursor: o.cursor }), shape, emit);
        await printAll((cursor) => service.search({ ...req, limit: req.limit ?? ALL_PAGE_SIZE, cursor }), o.cursor, shape);
      }),
    );
}
