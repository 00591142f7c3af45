import { Option, type Command } from 'commander';
import { basename } from 'node:path';
import type { Export, ExportCreate, ExportFormat } from '../../api/exports.js';
import { confirmDestructive, EXIT, Exit, withService } from '../context.js';
import { checkTarget, discard, saveFile, toStdout } from '../files.js';
import { sayMore } from '../paging.js';
import { statusLine } from '../progress.js';
import { addSearchFlags, searchGiven, searchRequestOf, type SearchFlags } from '../searchFlags.js';
import type { Service } from '../service.js';
import { param } from './sql.js';

const COLUMNS = ['export_id', 'name', 'status', 'format', 'row_count', 'size_bytes', 'created_at'];
const FORMATS: ExportFormat[] = ['ndjson', 'jsonl', 'csv', 'parquet'];
const collect = (v: string, prev: string[] = []) => [...prev, v];

type CreateFlags = SearchFlags & {
  text?: string; view?: string; sql?: string; param?: string[]; format: ExportFormat; gzip?: boolean; name?: string; field?: string[]; wait?: boolean; out?: string;
};

/** What to export: exactly one of a view, a statement and a search (checked before anything opens). */
function exportRequest(positional: string | undefined, o: CreateFlags): ExportCreate {
  if (positional !== undefined && o.text !== undefined) throw new Exit(EXIT.usage, 'give the search text once: as an argument or with --text');
  const text = positional ?? o.text;
  const given = [o.view && '--view', o.sql && '--sql', searchGiven(text, o) && 'a search'].filter(Boolean);
  if (given.length === 0) throw new Exit(EXIT.usage, 'nothing to export: give --view VIEW_ID, --sql "SELECT …" or a search (text, --dataset D, --q Q, --where …)');
  if (given.length > 1) throw new Exit(EXIT.usage, `give one of --view, --sql and a search, not ${given.join(' and ')}`);
  if (o.param && !o.sql) throw new Exit(EXIT.usage, '--param goes with --sql');
  return {
    view_id: o.view, sql: o.sql, params: o.param?.map(param), search_request: given[0] === 'a search' ? searchRequestOf(text, o) : undefined,
    format: o.format, gzip: o.gzip, name: o.name, fields: o.field,
  };
}

/** Waits for the export, its status on a terminal's stderr meanwhile. */
async function waitFor(service: Service, exp: Export): Promise<Export> {
  const line = statusLine();
  try {
    return await service.waitExport(exp.export_id, (e) => line.update(`export ${e.export_id}: ${e.status}, ${e.row_count.toLocaleString('en-US')} rows`));
  } finally {
    line.stop();
  }
}

export function exportsCommand(program: Command): void {
  const exports = program.command('export').alias('exports').description('take a view, a search or a SQL answer out whole, as a file (a durable job)');
  const create = exports
    .command('create [text]')
    .description('export a view, a search or a SQL statement; prints the export')
    .option('--view <view_id>', 'export the records of this view')
    .option('--sql <statement>', 'export the rows of one read-only SQL statement')
    .option('--param <value>', 'with --sql: positional parameter $1, $2, … (repeatable)', collect)
    .option('--text <text>', 'export a search: its text (or give it as the argument), with the search flags below');
  addSearchFlags(create, { paging: false })
    .addOption(new Option('--format <format>', 'file format').choices(FORMATS).default('ndjson'))
    .option('--gzip', 'compress the file with gzip')
    .option('--name <name>', 'a name for the export')
    .option('--field <path>', 'csv and parquet of records: a column (id, body, metadata.level, provenance.line, …; repeatable; default: a standard set)', collect)
    .option('--wait', 'wait until the file is written (exit 5 if the export failed)')
    .option('-o, --out <file>', 'write the file here once it is written, or to stdout with - (implies --wait)')
    .addHelpText(
      'after',
      `\nAn existing file is overwritten only with --yes (or when confirmed at a prompt). A local command
writes the export before it exits, with or without --wait.

Examples:
  svc export create --dataset hdfs --q 'Level:WARN' --format csv --wait -o hdfs-warn.csv
  svc export create --sql "SELECT Level, count(*) AS n FROM hdfs GROUP BY Level" --format csv -o - | column -s, -t
  svc export create --view view_01jd… --format parquet --gzip --name incident-42
  svc export create "PacketResponder terminating" --dataset logs -o - | jq .provenance.line`,
    )
    .action((text: string | undefined, o: CreateFlags, cmd: Command) => {
      const req = exportRequest(text, o);
      return withService(cmd, async ({ service, emit, globals }) => {
        const waits = o.wait || o.out !== undefined;
        if (o.out && o.out !== '-') await checkTarget(o.out, globals); // before the export, not after its wait
        let exp = await service.createExport(req);
        // a local command runs the export's job before it exits anyway: it says how it ended
        if (waits || service.mode === 'local') exp = await waitFor(service, exp);
        if (waits && exp.status === 'failed') {
          if (o.out !== '-') await emit(exp); // stdout is the file's, with -
          throw new Exit(EXIT.runFailed, `export ${exp.export_id} failed: ${exp.error_message}`);
        }
        if (o.out !== undefined) {
          if (exp.status !== 'completed') throw new Exit(EXIT.failure, `export ${exp.export_id} was ${exp.status}: no file to write`);
          const file = await service.downloadExport(exp.export_id);
          if (o.out === '-') return toStdout(file.body);
          await saveFile(file.body, o.out);
        }
        await emit(exp);
      });
    });
  exports
    .command('list')
    .description('exports of the tenant')
    .option('--limit <n>', 'at most this many (max 500)', (v) => Number(v))
    .option('--cursor <cursor>', 'next page: the next_cursor of the previous answer')
    .addHelpText('after', '\nExample:\n  svc export list --output json')
    .action((o: { limit?: number; cursor?: string }, cmd: Command) =>
      withService(cmd, async ({ service, emit, format }) => {
        const list = await service.listExports(o);
        await emit(list, { rows: list.exports, columns: COLUMNS });
        sayMore(format, 'exports', list.next_cursor);
      }),
    );
  exports
    .command('get <export_id>')
    .description('show an export: its status, rows, size and (once completed) its download URL')
    .addHelpText('after', '\nExample:\n  svc export get exp_01jd…')
    .action((id: string, _o, cmd: Command) => withService(cmd, async ({ service, emit }) => emit(await service.getExport(id))));
  exports
    .command('download <export_id>')
    .description("write a completed export's file; prints where it went")
    .option('-o, --out <file>', "a file, or - for stdout (default: the export's file name in the current directory)")
    .addHelpText('after', '\nAn existing file is overwritten only with --yes (or when confirmed at a prompt).\n\nExamples:\n  svc export download exp_01jd…\n  svc export download exp_01jd… -o - | gunzip | head')
    .action((id: string, o: { out?: string }, cmd: Command) =>
      withService(cmd, async ({ service, emit, globals }) => {
        if (o.out && o.out !== '-') await checkTarget(o.out, globals);
        const file = await service.downloadExport(id);
        if (o.out === '-') return toStdout(file.body);
        // the server names the file; only its last part is used, so it lands in the current directory
        const path = o.out ?? basename(file.filename);
        if (!o.out) {
          try {
            await checkTarget(path, globals);
          } catch (err) {
            discard(file.body);
            throw err;
          }
        }
        const size_bytes = await saveFile(file.body, path);
        await emit({ export_id: id, file: path, size_bytes, content_type: file.content_type });
      }),
    );
  exports
    .command('cancel <export_id>')
    .description("stop an export that is pending or running (cancels its job)")
    .addHelpText('after', '\nExample:\n  svc export cancel exp_01jd…')
    .action((id: string, _o, cmd: Command) =>
      withService(cmd, async ({ service, emit }) => {
        await service.cancelJob((await service.getExport(id)).job_id);
        await emit(await service.getExport(id));
      }),
    );
  exports
    .command('delete <export_id>')
    .description('delete an export and its file')
    .addHelpText('after', '\nExample:\n  svc export delete exp_01jd… --yes')
    .action((id: string, _o, cmd: Command) =>
      withService(cmd, async ({ service, emit, globals }) => {
        await confirmDestructive(globals, `Delete export '${id}' and its file?`);
        await emit(await service.deleteExport(id));
      }),
    );
}
