import { Option, type Command } from 'commander';
import { createReadStream, fstatSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import { NotFound } from '../../engine/errors.js';
import { INGEST_FORMATS, type IngestFormat } from '../../engine/records.js';
import { EXIT, Exit, withService } from '../context.js';
import { followFile } from '../follow.js';
import { ingestFiles, type IngestSummary } from '../ingestFiles.js';
import { expandPaths, namesMany } from '../inputs.js';
import { ingestFeedback } from '../ingestFeedback.js';
import { counted, statusLine } from '../progress.js';

interface IngestFlags {
  format?: IngestFormat | 'jsonl';
  source?: string;
  wait?: boolean;
  idField?: string;
  titleField?: string;
  bodyField?: string;
  timeField?: string;
  follow?: boolean;
}

function openInput(file: string | undefined): { input: AsyncIterable<Buffer>; filename?: string; path?: string; size: number } {
  if (file === undefined || file === '-') {
    if (file === undefined && process.stdin.isTTY) throw new Exit(EXIT.usage, 'no input: name a FILE, or pipe data in with `-`');
    // a terminal or /dev/null is no input: ingesting it would make a run of nothing
    const stdin = fstatSync(0);
    if (!stdin.isFIFO() && !stdin.isFile() && !stdin.isSocket()) throw new Exit(EXIT.usage, 'no input: stdin is not a pipe or a file; name a FILE, or pipe data in');
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

const SUMMARY_COLUMNS = ['path', 'status', 'records', 'malformed', 'ingest_run_id', 'error_code', 'error_message'];

/** The closing line of a multi-file ingest, on stderr in table output (stdout holds the table). */
const summaryLine = (s: IngestSummary) =>
  `${s.files} file${s.files === 1 ? '' : 's'}, ${s.runs} run${s.runs === 1 ? '' : 's'}, ${s.records} records${s.malformed ? ` (${s.malformed} malformed lines skipped)` : ''}, ${s.failures} failed`;

export function ingestCommand(program: Command): void {
  program
    .command('ingest <dataset> [paths...]')
    .description(
      'ingest files into a dataset: a FILE (or stdin with `-`) prints its run; several files, directories (recursively, hidden files skipped) or globs (quoted: svc expands them) are each their own run, waited for, then summed up. gzip input is decompressed, whatever its name',
    )
    .addOption(new Option('--format <format>', 'input format (default: from the file name, a .gz suffix aside, else the source\'s)').choices([...INGEST_FORMATS, 'jsonl']))
    .option('--source <key>', "source to ingest through (default: the dataset's own)")
    .option('--wait', 'remote mode: wait until the run is ready (a local run is always carried out before svc exits); exit 5 if it fails. Several files are always waited for')
    .option('--id-field <field>', 'field holding the record id')
    .option('--title-field <field>', 'field holding the title')
    .option('--body-field <field>', 'field holding the body text')
    .option('--time-field <field>', 'field holding the timestamp')
    .option('--follow', 'ingest FILE, then its new lines as they are written (rotation and truncation too), until interrupted; each read is a run, printed as it starts')
    .addHelpText(
      'after',
      "\nExamples:\n  svc ingest logs ./HDFS_2k.log --format text --wait\n  cat events.ndjson | svc ingest logs - --format ndjson\n  svc ingest logs ./archive/ 'more/*.log.gz' --output json\n  svc ingest logs /var/log/myapp/app.log --follow --output ndjson",
    )
    .action(async (dataset: string, paths: string[], o: IngestFlags, cmd: Command) => {
      if (paths.length > 1 && paths.includes('-')) throw new Exit(EXIT.usage, 'stdin (`-`) cannot be ingested along with other paths');
      const single = paths.length === 0 || (paths.length === 1 && !namesMany(paths[0]));
      // every path is checked before svc is even reached: a missing one is one line, and nothing is sent
      const files = single ? [] : await expandPaths(paths);
      if (o.follow && (!single || paths.length === 0 || paths[0] === '-')) throw new Exit(EXIT.usage, '--follow takes one FILE');
      if (o.follow && o.wait) throw new Exit(EXIT.usage, '--follow runs until interrupted: it takes no --wait');
      return withService(cmd, async ({ service, emit, format }) => {
        const options = { dataset_id: dataset, source_key: o.source, format: o.format, id_field: o.idField, title_field: o.titleField, body_field: o.bodyField, time_field: o.timeField };
        if (o.follow) {
          if (!statSync(paths[0], { throwIfNoEntry: false })?.isFile()) throw new NotFound(`file '${paths[0]}' not found`);
          const stop = new AbortController();
          process.once('SIGINT', () => stop.abort());
          process.once('SIGTERM', () => stop.abort());
          return followFile(service, paths[0], options, (run) => void emit(run), stop.signal);
        }
        if (single) {
          const { input, filename, path, size } = openInput(paths[0]);
          const feedback = ingestFeedback(size);
          try {
            const target = { ...options, filename, path, size: path === undefined ? undefined : size };
            let run = await service.ingest(counted(input, feedback.bytes), target, feedback.records);
            if (o.wait) run = await service.waitRun(run.ingest_run_id, feedback.records);
            feedback.done(run);
            await emit(run);
            // a run this process carried out, or waited for, says how it ended: a failure is an exit code with or without --wait
            if (run.status === 'failed') throw new Exit(EXIT.runFailed, `ingest run ${run.ingest_run_id} failed: ${run.error_code}: ${run.error_message}`);
          } finally {
            feedback.stop();
          }
          return;
        }
        const status = statusLine();
        let summary: IngestSummary;
        try {
          summary = await ingestFiles(service, files, options, (i, file) => status.update(`ingesting ${i + 1}/${files.length}: ${file}`));
        } finally {
          status.stop();
        }
        await emit(summary, { rows: summary.results as unknown as Record<string, unknown>[], columns: SUMMARY_COLUMNS });
        if (format === 'table' || format === 'csv') process.stderr.write(summaryLine(summary) + '\n');
        if (summary.failures > 0) throw new Exit(EXIT.runFailed, `${summary.failures} of ${summary.files} files failed to ingest`);
      });
    });
}

