import { Option, type Command } from 'commander';
import type { HostedSourcePut, Source, SourcePut } from '../../api/sources.js';
import { NotFound } from '../../engine/errors.js';
import { confirmDestructive, EXIT, Exit, withService } from '../context.js';
import type { Service } from '../service.js';

/** A source named by its id, or by its key (a dataset's own source has the dataset id as key). */
export async function sourceOf(service: Service, ref: string): Promise<Source> {
  const sources = await service.listSources();
  // an id first; a dataset named "2024" has a source whose key is "2024"
  const found = sources.find((s) => String(s.source_id) === ref) ?? sources.find((s) => s.source_key === ref);
  if (!found) throw new NotFound(`source '${ref}' not found`);
  return found;
}

const COLUMNS = ['source_id', 'source_key', 'dataset_id', 'source_type', 'format', 'enabled', 'ingest_token_configured'];

interface CreateFlags {
  dataset: string;
  key: string;
  name?: string;
  type: string;
  format?: 'ndjson' | 'json' | 'csv' | 'text';
  idField?: string;
  titleField?: string;
  bodyField?: string;
  timeField?: string;
  timeFormat?: string;
  retentionDays?: number;
  bucket?: string;
  accessRole?: string;
  prefix?: string;
  disabled?: boolean;
}

function sourceRequest(o: CreateFlags): SourcePut | HostedSourcePut {
  const transform = Object.fromEntries(Object.entries({ id_field: o.idField, title_field: o.titleField, body_field: o.bodyField, time_field: o.timeField }).filter(([, v]) => v));
  const hosted: HostedSourcePut = {
    dataset_id: o.dataset, source_key: o.key, name: o.name ?? o.key, source_type: o.type, enabled: !o.disabled,
    parse_config: o.format || o.timeFormat ? { ...(o.format ? { format: o.format } : {}), ...(o.timeFormat ? { time_format: o.timeFormat } : {}) } : undefined, transform_config: transform, retention_days: o.retentionDays,
  };
  if (!o.bucket) return hosted;
  if (!o.accessRole) throw new Exit(EXIT.usage, '--access-role is required with --bucket');
  return { ...hosted, bucket: o.bucket, access_role_ref: o.accessRole, prefix: o.prefix };
}

export function sourcesCommand(program: Command): void {
  const sources = program.command('sources').description('sources that feed datasets, and their ingest tokens');
  sources
    .command('create [source_id]')
    .description('create or replace a source (hosted unless --bucket is given); the id defaults to the next free one')
    .requiredOption('--dataset <id>', 'the dataset it feeds')
    .requiredOption('--key <source_key>', 'its key, used in ingest URLs')
    .option('--name <name>')
    .option('--type <type>', 'source type', 'hosted')
    .addOption(new Option('--format <format>', 'format of its objects').choices(['ndjson', 'json', 'csv', 'text']))
    .option('--id-field <field>')
    .option('--title-field <field>')
    .option('--body-field <field>')
    .option('--time-field <field>')
    .option('--time-format <format>', "how a text line's time is read: auto, none, iso8601, rfc3164, clf, apache_error, hdfs, epoch, or a pattern such as '%d/%b/%Y:%H:%M:%S %z'")
    .option('--retention-days <n>', 'delete records older than this', (v) => Number(v))
    .option('--bucket <bucket>', 'a bucket of its own (not hosted)')
    .option('--access-role <ref>', 'role used to read that bucket')
    .option('--prefix <prefix>')
    .option('--disabled', 'create it disabled')
    .addHelpText('after', '\nExample:\n  svc sources create --dataset logs --key nginx --format ndjson --time-field @timestamp')
    .action((id: string | undefined, o: CreateFlags, cmd: Command) =>
      withService(cmd, async ({ service, emit }) => {
        const sourceId = id ? Number(id) : Math.max(0, ...(await service.listSources()).map((s) => s.source_id)) + 1;
        if (!Number.isInteger(sourceId) || sourceId < 1) throw new Exit(EXIT.usage, `invalid source id '${id}'`);
        await emit(await service.putSource(sourceId, sourceRequest(o)));
      }),
    );
  sources
    .command('get <source>')
    .description('show a source')
    .addHelpText('after', '\nSOURCE is the source id or its key.\nExamples:\n  svc sources get 2\n  svc sources get logs')
    .action((id: string, _o, cmd: Command) => withService(cmd, async ({ service, emit }) => emit(await sourceOf(service, id))));
  sources
    .command('list')
    .description('sources of the tenant')
    .option('--dataset <id>', 'only those feeding this dataset')
    .addHelpText('after', '\nExample:\n  svc sources list --dataset logs')
    .action((o: { dataset?: string }, cmd: Command) =>
      withService(cmd, async ({ service, emit }) => {
        const list = await service.listSources(o.dataset);
        await emit({ sources: list, next_cursor: null }, { rows: list, columns: COLUMNS });
      }),
    );
  sources
    .command('delete <source>')
    .description("delete a source with its records and objects (a data-deletion job)")
    .option('--wait', 'wait until the deletion job ends (exit 5 if it fails)')
    .addHelpText('after', '\nExample:\n  svc sources delete 2 --wait')
    .action((id: string, o: { wait?: boolean }, cmd: Command) =>
      withService(cmd, async ({ service, emit, globals }) => {
        await confirmDestructive(globals, `Delete source ${id} with all its records and objects?`);
        let job = await service.deleteSource((await sourceOf(service, id)).source_id);
        if (o.wait) job = await service.getDeletionJob((await service.waitJob(job.job_id)).job_id);
        await emit(job);
        if (job.status === 'failed') throw new Exit(EXIT.runFailed, `data-deletion job ${job.job_id} failed: ${job.error_message}`);
      }),
    );
  sources
    .command('rotate-token <source>')
    .description('mint a new ingest token for the source (printed once); the previous one stops working')
    .addHelpText('after', '\nExample:\n  TOKEN=$(svc sources rotate-token 2 --output json | jq -r .token)')
    .action((id: string, _o, cmd: Command) => withService(cmd, async ({ service, emit }) => emit(await service.rotateIngestToken((await sourceOf(service, id)).source_id))));
  sources
    .command('revoke-token <source>')
    .description("revoke the source's ingest token")
    .addHelpText('after', '\nExample:\n  svc sources revoke-token 2')
    .action((id: string, _o, cmd: Command) => withService(cmd, async ({ service, emit }) => emit(await service.revokeIngestToken((await sourceOf(service, id)).source_id))));
}
