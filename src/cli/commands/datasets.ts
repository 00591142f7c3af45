import type { Command } from 'commander';
import type { Dataset } from '../../api/datasets.js';
import { addFieldsFlag } from '../fieldsFlag.js';
import { confirmDestructive, EXIT, Exit, withService } from '../context.js';

const COLUMNS = ['dataset_id', 'name', 'record_count', 'created_at'];
const rows = (list: Dataset[]) => ({ rows: list, columns: COLUMNS });

export function datasetsCommand(program: Command): void {
  const datasets = program.command('datasets').description('create, list, inspect and delete datasets');
  datasets
    .command('create <dataset_id>')
    .description('create a dataset (and its default hosted source)')
    .option('--name <name>')
    .option('--description <text>')
    .option('--retention-days <n>', 'delete records older than this', (v) => Number(v))
    .option('--semantic-field <field>', 'embed this field for semantic search (repeatable; default: title and body)', (v: string, prev: string[] = []) => [...prev, v])
    .option('--no-semantic', 'no vectors for this dataset: text search only')
    .addHelpText('after', '\nExamples:\n  svc datasets create logs --name "Application logs"\n  svc datasets create tickets --semantic-field subject --semantic-field description\n  svc datasets create metrics --no-semantic')
    .action((id: string, o: { name?: string; description?: string; retentionDays?: number; semanticField?: string[]; semantic: boolean }, cmd: Command) =>
      withService(cmd, async ({ service, emit }) =>
        emit(
          await service.createDataset({
            dataset_id: id, name: o.name, description: o.description, retention_days: o.retentionDays,
            semantic_fields: o.semanticField, semantic: o.semantic ? undefined : false,
          }),
        ),
      ),
    );
  addFieldsFlag(datasets.command('list'))
    .description('list the datasets of the tenant')
    .addHelpText('after', '\nExample:\n  svc datasets list --output json')
    .action((_o, cmd: Command) =>
      withService(cmd, async ({ service, emit }) => {
        const list = await service.listDatasets();
        await emit({ datasets: list, next_cursor: null }, rows(list));
      }),
    );
  datasets
    .command('get <dataset_id>')
    .description('show a dataset with its record count and readiness')
    .addHelpText('after', '\nExample:\n  svc datasets get logs')
    .action((id: string, _o, cmd: Command) => withService(cmd, async ({ service, emit }) => emit(await service.getDataset(id))));
  datasets
    .command('delete <dataset_id>')
    .description('delete a dataset with all its records, sources, runs and objects (a data-deletion job)')
    .option('--wait', 'wait until the deletion job ends (exit 5 if it fails)')
    .addHelpText('after', '\nExample:\n  svc datasets delete logs --yes --wait')
    .action((id: string, o: { wait?: boolean }, cmd: Command) =>
      withService(cmd, async ({ service, emit, globals }) => {
        await confirmDestructive(globals, `Delete dataset '${id}' and all its records?`);
        let job = await service.deleteDataset(id);
        if (o.wait) job = await service.getDeletionJob((await service.waitJob(job.job_id)).job_id);
        await emit(job);
        if (job.status === 'failed') throw new Exit(EXIT.runFailed, `data-deletion job ${job.job_id} failed: ${job.error_message}`);
      }),
    );
}
