import { Option, type Command } from 'commander';
import { createReadStream, statSync } from 'node:fs';
import { basename } from 'node:path';
import { NotFound } from '../../engine/errors.js';
import { INGEST_FORMATS, type IngestFormat } from '../../engine/records.js';
import { EXIT, Exit, withService } from '../context.js';
import { counted, progressBar } from '../progress.js';

interface IngestFlags {
  format?: IngestFormat;
  source?: string;
  wait?: boolean;
  idField?: string;
  titleField?: string;
  bodyField?: string;
  timeField?: string;
}

function openInput(file: string | undefined): { input: AsyncIterable<Buffer>; filename?: string; path?: string; size: number } {
  if (file === undefined || file === '-') {
    if (file === undefined && process.stdin.isTTY) throw new Exit(EXIT.usage, 'no input: name a FILE, or pipe data in with `-`');
    return { input: process.stdin, size: 0 };
  }
  let stat;
  try {
    stat = statSync(file);
  } catch {
    throw new NotFound(`file '${file}' not found`);
  }
  if (!stat.isFile()) throw new Exit(EXIT.usage, `'${file}' is not a file`);
  const size = stat.size;
  return { input: createReadStream(file, { highWaterMark: 1 << 20 }), filename: basename(file), path: file, size };
}

export function ingestCommand(program: Command): void {
  program
    .command('ingest <dataset> [file]')
    .description('ingest a file (or stdin with `-`) into a dataset; prints the ingest run')
    .addOption(new Option('--format <format>', 'input format (default: from the file name, else ndjson)').choices(INGEST_FORMATS))
    .option('--source <key>', "source to ingest through (default: the dataset's own)")
    .option('--wait', 'wait until the run is ready (exit 5 if it fails)')
    .option('--id-field <field>', 'field holding the record id')
    .option('--title-field <field>', 'field holding the title')
    .option('--body-field <field>', 'field holding the body text')
    .option('--time-field <field>', 'field holding the timestamp')
    .addHelpText('after', '\nExamples:\n  svc ingest logs ./HDFS_2k.log --format text --wait\n  cat events.ndjson | svc ingest logs - --format ndjson')
    .action((dataset: string, file: string | undefined, o: IngestFlags, cmd: Command) =>
      withService(cmd, async ({ service, emit }) => {
        const { input, filename, path, size } = openInput(file);
        const bar = progressBar(size);
        try {
          const target = {
            dataset_id: dataset, source_key: o.source, format: o.format, filename, id_field: o.idField, title_field: o.titleField, body_field: o.bodyField, time_field: o.timeField,
            path, size: path === undefined ? undefined : size,
          };
          let run = await service.ingest(counted(input, bar.bytes), target);
          if (o.wait) run = await service.waitRun(run.ingest_run_id, (r) => bar.records(r.documents.parsed));
          bar.stop();
          await emit(run);
          if (o.wait && run.status === 'failed') throw new Exit(EXIT.runFailed, `ingest run ${run.ingest_run_id} failed: ${run.error_code}: ${run.error_message}`);
        } finally {
          bar.stop();
        }
      }),
    );
}
