import type { Command } from 'commander';
import { addFieldsFlag } from '../fieldsFlag.js';
import { withService } from '../context.js';

export function fieldsCommand(program: Command): void {
  addFieldsFlag(program.command('fields'))
    .description('fields discovered in the records, with their types and counts')
    .option('-d, --dataset <id>', 'only this dataset')
    .option('--prefix <path>', 'only field paths starting with this')
    .addHelpText('after', '\nExample:\n  svc fields --dataset logs --prefix server_zones.')
    .action((o: { dataset?: string; prefix?: string }, cmd: Command) =>
      withService(cmd, async ({ service, emit }) => {
        const fields = await service.fields({ dataset_id: o.dataset, prefix: o.prefix });
        // a path seen with several types shows them all (i64|str); json keeps each variant whole
        const rows = fields.map((f) => (f.variants.length > 1 ? { ...f, type: f.variants.map((v) => v.value_type).join('|') } : f));
        await emit({ fields }, { rows, columns: ['dataset_id', 'field_path', 'type', 'seen_count', 'indexed'] });
      }),
    );
}
