import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Option, type Command } from 'commander';
import type { ConnectionRequest, ConnectorRun, ConnectorSourcePut, SyncStream } from '../../api/connectors.js';
import { EXIT, Exit, withService } from '../context.js';
import type { Service } from '../service.js';

const KIND_COLUMNS = ['connector_id', 'kind', 'name', 'description'];
const SYNC_COLUMNS = ['connector_run_id', 'trigger', 'status', 'objects', 'bytes', 'created_at', 'completed_at', 'error_message'];

const collect = (v: string, all: unknown) => [...(Array.isArray(all) ? all : []), v];
const sourceId = (v: string) => {
  if (!/^[1-9][0-9]*$/.test(v)) throw new Exit(EXIT.usage, `invalid source id '${v}'`);
  return Number(v);
};

interface CreateFlags {
  fromFile?: string;
  dataset?: string;
  key?: string;
  name?: string;
  kind?: 'directory' | 'http';
  path?: string;
  include?: string[];
  exclude?: string[];
  follow?: boolean;
  url?: string;
  header?: string[];
  recordsPath?: string;
  nextLinkPath?: string;
  cursorParam?: string;
  cursorField?: string;
  httpFormat?: 'ndjson' | 'json' | 'csv';
  bearerTokenEnv?: string;
  format?: 'ndjson' | 'json' | 'csv' | 'text';
  timeFormat?: string;
}

const defined = <T extends object>(o: T) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

function headers(lines: string[] | undefined): Record<string, string> | undefined {
  if (!lines) return undefined;
  return Object.fromEntries(
    lines.map((line) => {
      const at = line.indexOf(':');
      if (at < 1) throw new Exit(EXIT.usage, `--header '${line}': give it as 'Name: value'`);
      return [line.slice(0, at).trim(), line.slice(at + 1).trim()];
    }),
  );
}

/** The source to put: --from-file's JSON with the flags over it. */
function sourceRequest(o: CreateFlags): ConnectorSourcePut {
  const base = o.fromFile ? (JSON.parse(readFileSync(o.fromFile === '-' ? 0 : o.fromFile, 'utf8')) as Partial<ConnectorSourcePut>) : {};
  const kind = o.kind ?? base.connector_id;
  const config =
    kind === 'directory'
      ? defined({ path: o.path && resolve(o.path), include: o.include, exclude: o.exclude, follow: o.follow })
      : defined({ url: o.url, headers: headers(o.header), format: o.httpFormat, records_path: o.recordsPath, next_link_path: o.nextLinkPath, cursor_param: o.cursorParam, cursor_field: o.cursorField });
  let credentials = base.connector_credentials;
  if (o.bearerTokenEnv) {
    const token = process.env[o.bearerTokenEnv];
    if (!token) throw new Exit(EXIT.usage, `--bearer-token-env ${o.bearerTokenEnv}: that environment variable is empty`);
    credentials = { ...credentials, bearer_token: token };
  }
  const key = o.key ?? base.source_key;
  const req = {
    ...base,
    ...defined({ dataset_id: o.dataset, source_key: key, name: o.name ?? base.name ?? key }),
    source_type: 'connector' as const,
    connector_id: kind!,
    connector_config: { ...base.connector_config, ...config },
    ...(credentials ? { connector_credentials: credentials } : {}),
  };
  if (o.format || o.timeFormat) req.parse_config = { ...base.parse_config, ...defined({ format: o.format, time_format: o.timeFormat }) };
  const missing = [['dataset_id', '--dataset'], ['source_key', '--key'], ['connector_id', '--kind']].filter(([k]) => (req as Record<string, unknown>)[k] === undefined);
  if (missing.length) throw new Exit(EXIT.usage, `incomplete connector source: give ${missing.map(([, f]) => f).join(', ')} (or --from-file SOURCE.json)`);
  return req as ConnectorSourcePut;
}

interface ConnectFlags {
  stream?: string[];
  mode: 'incremental' | 'full_refresh';
  cursorField?: string;
  primaryKey?: string;
  cron?: string;
  timezone?: string;
}

function connectionRequest(o: ConnectFlags): ConnectionRequest {
  const streams: SyncStream[] = (o.stream ?? []).map((name) => ({ name, selected: true, sync_mode: o.mode, ...defined({ cursor_field: o.cursorField, primary_key: o.primaryKey }) }));
  return { sync_catalog: { streams }, schedule_type: o.cron ? 'cron' : 'manual', cron_expression: o.cron ?? null, cron_timezone: o.timezone ?? 'UTC' };
}

/** Waits for the sync, then for each ingest run it started: the runs are where its records land. */
async function waitSync(service: Service, id: number, run: ConnectorRun): Promise<ConnectorRun> {
  await service.waitJob(run.job_id);
  const done = await service.connectorSync(id, run.connector_run_id);
  for (const runId of done.ingest_run_ids) await service.waitRun(runId);
  return done;
}

export function connectorsCommand(program: Command): void {
  const connectors = program.command('connectors').alias('connector').description('connector sources: svc reads a directory or polls a URL into a dataset');
  connectors
    .command('kinds')
    .description('the built-in connector kinds, with the JSON schema of their config')
    .addHelpText('after', '\nExample:\n  svc connectors kinds --output json')
    .action((_o, cmd: Command) =>
      withService(cmd, async ({ service, emit }) => {
        const list = await service.connectorKinds();
        await emit(list, { rows: list.connectors, columns: KIND_COLUMNS });
      }),
    );
  connectors
    .command('create <source_id>')
    .description('create or replace a connector source (admin)')
    .option('--from-file <file>', 'the source as JSON (`-` reads stdin); flags override its members')
    .option('--dataset <id>', 'the dataset it feeds')
    .option('--key <source_key>', 'its key')
    .option('--name <name>')
    .addOption(new Option('--kind <kind>', 'what it reads').choices(['directory', 'http']))
    .option('--path <dir>', 'directory: the directory to read')
    .option('--include <glob>', "directory: files to read, relative to it (repeat; default '*.log'; '**/*.log' goes into subdirectories)", collect)
    .option('--exclude <glob>', 'directory: files to leave (repeat)', collect)
    .option('--follow', 'directory: under svc serve, read new lines as they are written')
    .option('--url <url>', 'http: the URL to poll')
    .option('--header <header>', "http: 'Name: value' sent with each request (repeat)", collect)
    .addOption(new Option('--http-format <format>', 'http: what the URL answers (default: by its Content-Type)').choices(['ndjson', 'json', 'csv']))
    .option('--records-path <path>', 'http: dotted path of the records array in a JSON answer')
    .option('--next-link-path <path>', 'http: dotted path of the next page URL in a JSON answer (a Link rel="next" header is followed anyway)')
    .option('--cursor-param <name>', 'http: query parameter that carries the highest --cursor-field value read so far')
    .option('--cursor-field <field>', 'http: record field that orders records (incremental syncs)')
    .option('--bearer-token-env <var>', 'http: send the token in this environment variable as a bearer token (stored encrypted, never shown)')
    .addOption(new Option('--format <format>', 'directory: format of the files (default: by extension)').choices(['ndjson', 'json', 'csv', 'text']))
    .option('--time-format <format>', "how a text line's time is read (see svc sources create --help)")
    .addHelpText(
      'after',
      `
Examples:
  svc connectors create 10 --dataset logs --key varlog --kind directory --path /var/log/myapp --include '*.log' --follow
  svc connectors create 11 --dataset tickets --key tickets-api --kind http --url https://api.example.com/tickets \\
    --records-path data --cursor-field updated_at --cursor-param since --bearer-token-env TICKETS_TOKEN`,
    )
    .action((id: string, o: CreateFlags, cmd: Command) => {
      const req = sourceRequest(o);
      return withService(cmd, async ({ service, emit }) => emit(await service.putConnectorSource(sourceId(id), req)));
    });
  connectors
    .command('get <source_id>')
    .description('a connector source: its integration (kind, schedule, streams, last sync) and the source')
    .addHelpText('after', '\nExample:\n  svc connectors get 10 --output json')
    .action((id: string, _o, cmd: Command) => withService(cmd, async ({ service, emit }) => emit(await service.getConnectorSource(sourceId(id)))));
  connectors
    .command('connect <source_id>')
    .description('set what a connector source syncs and when (admin)')
    .option('--stream <name>', 'a stream: a glob under the directory, or a path under the URL (repeat; default: the config\'s own)', collect)
    .addOption(new Option('--mode <mode>', 'how --stream is read').choices(['incremental', 'full_refresh']).default('incremental'))
    .option('--cursor-field <field>', 'http: the field incremental streams advance by')
    .option('--primary-key <field>', 'http: the field that identifies a record (a record read again replaces itself)')
    .option('--cron <expr>', 'sync on this schedule (five fields, or six with seconds first); without it, syncs are manual')
    .option('--timezone <tz>', 'the IANA time zone of --cron (default UTC)')
    .addHelpText('after', "\nExamples:\n  svc connectors connect 10 --cron '*/5 * * * *'\n  svc connectors connect 11 --stream /v2/tickets --cursor-field updated_at --cron '0 * * * *' --timezone Europe/Paris")
    .action((id: string, o: ConnectFlags, cmd: Command) =>
      withService(cmd, async ({ service, emit }) => emit(await service.connectConnectorSource(sourceId(id), connectionRequest(o)))),
    );
  connectors
    .command('sync <source_id>')
    .description('sync now (admin): waits for the sync and the ingest runs it starts; exit 5 if one failed')
    .option('--no-wait', 'print the queued sync and return (a local data dir syncs at the next svc serve)')
    .addHelpText('after', '\nExample:\n  svc connectors sync 10 && svc search --dataset logs --last 1h error')
    .action((id: string, o: { wait: boolean }, cmd: Command) =>
      withService(cmd, async ({ service, emit }) => {
        const queued = await service.syncConnectorSource(sourceId(id));
        const run = o.wait ? await waitSync(service, sourceId(id), queued) : queued;
        await emit(run);
        if (o.wait && run.status === 'failed') throw new Exit(EXIT.runFailed, `sync ${run.connector_run_id} failed: ${run.error_message}`);
      }),
    );
  connectors
    .command('syncs <source_id>')
    .description("a connector source's latest syncs, newest first")
    .addHelpText('after', '\nExample:\n  svc connectors syncs 10')
    .action((id: string, _o, cmd: Command) =>
      withService(cmd, async ({ service, emit }) => {
        const list = await service.connectorSyncs(sourceId(id));
        await emit(list, { rows: list.syncs, columns: SYNC_COLUMNS });
      }),
    );
}
