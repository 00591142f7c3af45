import type { Command } from 'commander';
import { addFieldsFlag } from '../fieldsFlag.js';
import { withService } from '../context.js';

const COLUMNS = ['ingest_run_id', 'dataset_id', 'status', 'format', 'created_at'];

export function runsCommand(program: Command): void {
  const runs = program.command('runs').description('ingest runs');
  runs
    .command('get <ingest_run_id>')
    .description('show an ingest run: status, counters, malformed lines, readiness')
    .addHelpText('after', '\nExample:\n  svc runs get run_01jd…')
    .action((id: string, _o, cmd: Command) => withService(cmd, async ({ service, emit }) => emit(await service.getRun(id))));
  runs
    .command('retry <ingest_run_id>')
    .description('run a failed run again from where it stopped (repairable failures only)')
    .addHelpText('after', '\nExample:\n  svc runs retry run_01jd…')
    .action((id: string, _o, cmd: Command) => withService(cmd, async ({ service, emit }) => emit(await service.retryRun(id))));
  addFieldsFlag(runs.command('list'))
    .description('recent ingest runs, newest first')
    .option('-d, --dataset <id>')
    .option('--status <status>', 'queued, running, ready or failed')
    .option('-n, --limit <n>', 'at most this many', (v) => Number(v), 50)
    .addHelpText('after', '\nExample:\n  svc runs list --status failed')
    .action((o: { dataset?: string; status?: 'queued' | 'running' | 'ready' | 'failed'; limit: number }, cmd: Command) =>
      withService(cmd, async ({ service, emit }) => {
        const list = await service.listRuns({ dataset_id: o.dataset, status: o.status, limit: o.limit });
        await emit({ runs: list, next_cursor: null }, { rows: list, columns: COLUMNS });
      }),
    );
}
