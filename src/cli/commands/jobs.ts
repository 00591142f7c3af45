import type { Command } from 'commander';
import { EXIT, Exit, withService } from '../context.js';

const COLUMNS = ['job_id', 'type', 'status', 'attempts', 'created_at', 'completed_at', 'error_message'];

export function jobsCommand(program: Command): void {
  const jobs = program.command('jobs').description('durable jobs: ingest runs, deletions, and other long work');
  jobs
    .command('list')
    .description('jobs of the tenant, newest first')
    .option('--type <type>', 'only jobs of this type (ingest, data_deletion, …)')
    .option('--status <status>', 'pending, running, succeeded, failed or cancelled')
    .option('--limit <n>', 'at most this many', (v) => Number(v), 50)
    .addHelpText('after', '\nExample:\n  svc jobs list --status failed')
    .action((o: { type?: string; status?: 'pending' | 'running' | 'succeeded' | 'failed' | 'cancelled'; limit: number }, cmd: Command) =>
      withService(cmd, async ({ service, emit }) => {
        const list = await service.listJobs(o);
        await emit({ jobs: list, next_cursor: null }, { rows: list, columns: COLUMNS });
      }),
    );
  jobs
    .command('get <job_id>')
    .description('show a job')
    .addHelpText('after', '\nExample:\n  svc jobs get job_01jd…')
    .action((id: string, _o, cmd: Command) => withService(cmd, async ({ service, emit }) => emit(await service.getJob(id))));
  jobs
    .command('wait <job_id>')
    .description('wait until a job ends; exit 5 if it failed')
    .addHelpText('after', '\nExample:\n  svc jobs wait job_01jd… && echo done')
    .action((id: string, _o, cmd: Command) =>
      withService(cmd, async ({ service, emit }) => {
        const job = await service.waitJob(id);
        await emit(job);
        if (job.status === 'failed') throw new Exit(EXIT.runFailed, `job ${id} failed: ${job.error_message}`);
      }),
    );
  jobs
    .command('backfill <dataset_id>')
    .description('filter backfill: stamp the filter fields now declared onto the vectors already made, without embedding again')
    .option('--source <source_id>', 'only the records of this source', (v) => Number(v))
    .option('--wait', 'wait until the job ends (exit 5 if it fails)')
    .addHelpText('after', '\nExample:\n  svc jobs backfill logs --wait')
    .action((datasetId: string, o: { source?: number; wait?: boolean }, cmd: Command) =>
      withService(cmd, async ({ service, emit }) => {
        let job = await service.backfillFilters({ dataset_id: datasetId, source_id: o.source });
        if (o.wait) {
          await service.waitJob(job.job_id);
          job = await service.getBackfill(job.job_id);
        }
        await emit(job);
        if (job.status === 'failed') throw new Exit(EXIT.runFailed, `filter backfill ${job.job_id} failed: ${job.error_message}`);
      }),
    );
  jobs
    .command('cancel <job_id>')
    .description('cancel a pending job, or ask a running one to stop (a data deletion can be cancelled only before it starts, a reindex only until it switches to its new generation)')
    .addHelpText('after', '\nExample:\n  svc jobs cancel job_01jd…')
    .action((id: string, _o, cmd: Command) => withService(cmd, async ({ service, emit }) => emit(await service.cancelJob(id))));
}
