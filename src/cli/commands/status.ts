import type { Command } from 'commander';
import { globalsOf } from '../context.js';
import { emit, outputFormat } from '../output.js';
import { status } from '../target.js';

export function statusCommand(program: Command): void {
  program
    .command('status')
    .description('what a command would use, and from where: data dir, server URL, profile; whether a server holds the data dir')
    .addHelpText('after', '\nExamples:\n  svc status\n  SVC_URL=http://127.0.0.1:7360 svc status --output json')
    .action(async (_o, cmd: Command) => {
      const globals = globalsOf(cmd);
      await emit(outputFormat(globals), status(cmd, globals));
    });
}
