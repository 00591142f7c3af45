import type { Command } from 'commander';
import type { DataDeletionJob } from '../../api/jobs.js';
import { confirmDestructive, EXIT, Exit, withService, type Ctx } from '../context.js';
import type { Service } from '../service.js';
import { sourceOf } from './sources.js';

const COLUMNS = ['job_id', 'scope', 'status', 'target_dataset_id', 'item_total_count', 'error_message'];

/** The deletion scopes narrower than a dataset or a source: each starts a data-deletion job. */
export function deleteCommand(program: Command): void {
  const del = program.command('delete').description('delete records, an object or an upload with what was derived from them (data-deletion jobs)');
  del
    .command('records <dataset_id> <record_id...>')
    .description('delete records of a dataset by id: one data-deletion job each; prints the jobs')
    .option('--wait', 'wait until the deletion jobs end (exit 5 if one fails)')
    .addHelpText('after', '\nExample:\n  svc delete records logs rec-17 rec-18 --yes --wait')
    .action((datasetId: string, ids: string[], o: { wait?: boolean }, cmd: Command) =>
      withService(cmd, async (ctx) => {
        const n = ids.length;
        await confirmDestructive(ctx.globals, `Delete ${n === 1 ? `record '${ids[0]}'` : `${n} records`} of dataset '${datasetId}'?`);
        const jobs: DataDeletionJob[] = [];
        for (const id of ids) jobs.push(await ctx.service.deleteRecord(datasetId, id));
        await finish(ctx, jobs, o.wait);
      }),
    );
  del
    .command('object')
    .description("delete one object a source ingested, with its records")
    .requiredOption('--source <source>', 'the source (id or key)')
    .requiredOption('--key <key>', "the object's key, as its ingest run shows it")
    .option('--wait', 'wait until the deletion job ends (exit 5 if it fails)')
    .addHelpText('after', '\nExample:\n  svc delete object --source logs --key logs/obj_01jd…/app.ndjson --yes --wait')
    .action((o: { source: string; key: string; wait?: boolean }, cmd: Command) =>
      withService(cmd, async (ctx) => {
        const source = await sourceOf(ctx.service, o.source);
        await confirmDestructive(ctx.globals, `Delete object '${o.key}' of source ${source.source_id} with its records?`);
        await finish(ctx, [await ctx.service.deleteObject(source.source_id, o.key)], o.wait);
      }),
    );
  del
    .command('upload <upload_session_id>')
    .description('delete what one completed upload brought: its object and its records')
    .option('--wait', 'wait until the deletion job ends (exit 5 if it fails)')
    .addHelpText('after', '\nExample:\n  svc delete upload upl_01jd… --yes --wait')
    .action((id: string, o: { wait?: boolean }, cmd: Command) =>
      withService(cmd, async (ctx) => {
        await confirmDestructive(ctx.globals, `Delete upload '${id}' with its object and records?`);
        await finish(ctx, [await ctx.service.deleteUpload(id)], o.wait);
      }),
    );
}

/** Prints the job (or, for records, the list of jobs) as it is, or as it ended with --wait. */
async function finish({ service, emit }: Ctx, started: DataDeletionJob[], wait?: boolean): Promise<void> {
  const jobs = wait ? await Promise.all(started.map((j) => ended(service, j))) : started;
  // records answer with a list whatever their number, so that a script reads one shape
  await (started[0].scope === 'record' ? emit({ jobs }, { rows: jobs, columns: COLUMNS }) : emit(jobs[0]));
  const failed = jobs.find((j) => j.status === 'failed');
  if (failed) throw new Exit(EXIT.runFailed, `data-deletion job ${failed.job_id} failed: ${failed.error_message}`);
}

const ended = async (service: Service, job: DataDeletionJob) => service.getDeletionJob((await service.waitJob(job.job_id)).job_id);
