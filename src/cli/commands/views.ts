import type { Command } from 'commander';
import type { ViewCreate, ViewRecords } from '../../api/views.js';
import { confirmDestructive, EXIT, Exit, withService } from '../context.js';
import { printAll, printPage, sayMore, type PageShape } from '../paging.js';
import { addSearchFlags, searchGiven, searchRequestOf, type SearchFlags } from '../searchFlags.js';
import { ALL_PAGE_SIZE } from './search.js';
import { addFieldsFlag } from '../fieldsFlag.js';
import { recordColumns, recordRow } from '../recordRows.js';

const COLUMNS = ['view_id', 'name', 'kind', 'record_count', 'deleted_count', 'created_at', 'expires_at'];

type CreateFlags = SearchFlags & { text?: string; fromSearch?: string; live?: boolean; expiresAt?: string };

/** The view to create: a search id or a search, never both and never neither (checked before anything opens). */
function viewRequest(name: string, positional: string | undefined, o: CreateFlags): ViewCreate {
  if (positional !== undefined && o.text !== undefined) throw new Exit(EXIT.usage, 'give the search text once: after NAME or with --text');
  const text = positional ?? o.text;
  if (o.fromSearch && searchGiven(text, o)) throw new Exit(EXIT.usage, 'give --from-search or a search (text, --dataset, --q, --where, …), not both');
  if (!o.fromSearch && !searchGiven(text, o)) throw new Exit(EXIT.usage, 'nothing to keep: give a search (text, --dataset D, --q Q, --where …) or --from-search SEARCH_ID');
  return {
    name,
    kind: o.live ? 'live' : undefined,
    from_search_id: o.fromSearch,
    search_request: o.fromSearch ? undefined : searchRequestOf(text, o),
    expires_at: o.expiresAt,
  };
}

export function viewsCommand(program: Command): void {
  const views = program.command('view').alias('views').description('saved searches: materialized (the records as they were) or live (run again on each read)');
  addSearchFlags(views.command('create <name> [text]').description('keep a search as a view (admin): its records now, or with --live its request'), { paging: false })
    .option('--text <text>', 'the search text (or give it after NAME)')
    .option('--from-search <search_id>', "exactly the records a search answered, in its order (the search_id of `svc search --output json`), instead of search flags")
    .option('--live', 'keep the request and run it again on every read (default: keep the records as they are now)')
    .option('--expires-at <time>', 'ISO 8601 time after which the view is gone (default: never)')
    .addHelpText(
      'after',
      `\nA search id lives in the memory of the process that ran the search: with --from-search, search
and create the view through a server (\`svc serve\`, or --url).

Examples:
  svc view create terminating "PacketResponder terminating" --dataset logs
  svc view create hdfs-warn --dataset hdfs --q 'Level:WARN' --expires-at 2030-01-01T00:00:00Z
  svc view create hdfs-warn-now --dataset hdfs --q 'Level:WARN' --live
  svc view create incident-42 --from-search srch_01jd…`,
    )
    .action((name: string, text: string | undefined, o: CreateFlags, cmd: Command) => {
      const req = viewRequest(name, text, o);
      return withService(cmd, async ({ service, emit }) => emit(await service.createView(req)));
    });
  addFieldsFlag(views.command('list'))
    .description('views of the tenant')
    .option('-n, --limit <n>', 'at most this many (max 500)', (v) => Number(v))
    .option('--cursor <cursor>', 'next page: the next_cursor of the previous answer')
    .addHelpText('after', '\nExample:\n  svc view list --output json')
    .action((o: { limit?: number; cursor?: string }, cmd: Command) =>
      withService(cmd, async ({ service, emit, format }) => {
        const list = await service.listViews(o);
        await emit(list, { rows: list.views, columns: COLUMNS });
        sayMore(format, 'views', list.next_cursor);
      }),
    );
  views
    .command('get <view_id>')
    .description('show a view: its request, how many records it holds and lost to deletions')
    .addHelpText('after', '\nExample:\n  svc view get view_01jd…')
    .action((id: string, _o, cmd: Command) => withService(cmd, async ({ service, emit }) => emit(await service.getView(id))));
  addFieldsFlag(views.command('records <view_id>'))
    .description("a view's records, printed like search results (a live view runs its search again)")
    .option('-n, --limit <n>', 'records per page (max 1000)', (v) => Number(v))
    .option('--cursor <cursor>', 'next page: the next_cursor of the previous answer')
    .option('--all', 'every record, page after page (from --cursor when given; --limit is the page size): ndjson and csv stream, json is one array')
    .addHelpText('after', '\nExamples:\n  svc view records view_01jd… --limit 5\n  svc view records view_01jd… --all --output ndjson > incident-42.ndjson')
    .action((id: string, o: { limit?: number; cursor?: string; all?: boolean }, cmd: Command) =>
      withService(cmd, async ({ service, emit, format, fields }) => {
        const shape: PageShape<ViewRecords> = { format, noun: 'records', rows: (page) => page.records.map((r) => recordRow(r, format)), columns: (page) => fields ?? recordColumns(page, format), warnings: () => [] };
        if (!o.all) return printPage(await service.viewRecords(id, { limit: o.limit, cursor: o.cursor }), shape, emit);
        await printAll((cursor) => service.viewRecords(id, { limit: o.limit ?? ALL_PAGE_SIZE, cursor }), o.cursor, shape);
      }),
    );
  views
    .command('delete <view_id>')
    .description('delete a view (its records stay in their datasets)')
    .addHelpText('after', '\nExample:\n  svc view delete view_01jd… --yes')
    .action((id: string, _o, cmd: Command) =>
      withService(cmd, async ({ service, emit, globals }) => {
        await confirmDestructive(globals, `Delete view '${id}'? Its records stay in their datasets.`);
        await emit(await service.deleteView(id));
      }),
    );
}
