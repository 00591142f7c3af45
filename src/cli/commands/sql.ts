import type { Command } from 'commander';
import type { SqlEnvelope, SqlRequest } from '../../api/sql.js';
import { addFieldsFlag } from '../fieldsFlag.js';
import { withService } from '../context.js';
import { printAll, printPage, type PageShape } from '../paging.js';

const collect = (v: string, prev: string[] = []) => [...prev, v];

/** A parameter as JSON when it reads as a number, boolean or null (or a quoted string); else the text itself. */
export function param(text: string): string | number | boolean | null {
  try {
    const v = JSON.parse(text);
    if (v === null || ['string', 'number', 'boolean'].includes(typeof v)) return v;
  } catch {
    // plain text
  }
  return text;
}

export function sqlCommand(program: Command): void {
  addFieldsFlag(program.command('sql <statement>'))
    .description('run one read-only SQL statement over your datasets (one table per dataset)')
    .option('--param <value>', 'positional parameter $1, $2, … in order (repeatable); numbers, true/false and null are typed, quote "5" to pass text', collect)
    .option('-n, --limit <n>', 'rows per page (default 1000, max 10000)', (v) => Number(v))
    .option('--cursor <cursor>', 'next page: the next_cursor of the previous answer (with the same statement)')
    .option('--all', 'every row, page after page (from --cursor when given; --limit is the page size): ndjson and csv stream, json is one array')
    .addHelpText(
      'after',
      `\nTables are named after datasets; columns are the fields (a field with several value types has one
column per type, e.g. status__i64 and status__str) and _id, _seq, _source_key, _line, _etag, _time, _title, _body.

Examples:
  svc sql "SHOW TABLES"
  svc sql "SELECT Level, count(*) AS n FROM hdfs GROUP BY Level ORDER BY n DESC"
  svc sql "SELECT _id, _line, _body FROM hdfs WHERE Pid = \\$1 LIMIT 5" --param 148 --output ndjson
  svc sql "SELECT * FROM hdfs WHERE Level = 'WARN'" --all --output csv > warnings.csv`,
    )
    .action((statement: string, o: { param?: string[]; limit?: number; cursor?: string; all?: boolean }, cmd: Command) =>
      withService(cmd, async ({ service, emit, format, fields }) => {
        const shape: PageShape<SqlEnvelope> = {
          format,
          noun: 'rows',
          rows: (page) => page.records.map((r) => r.metadata),
          columns: (page) => fields ?? page.columns.map((c) => c.name),
          // the answer was cut at the row cap: its pages end there, and nothing in them says so
          warnings: (page) => (page.total.relation === 'gte' ? [`rows stop at the cap of ${page.total.value.toLocaleString('en-US')}: the statement has more; narrow it (WHERE, LIMIT) to see the rest`] : []),
        };
        const req: SqlRequest = { sql: statement, params: o.param?.map(param), limit: o.limit };
        if (!o.all) return printPage(await service.sql({ ...req, cursor: o.cursor }), shape, emit);
        await printAll((cursor) => service.sql({ ...req, cursor }), o.cursor, shape);
      }),
    );
}
