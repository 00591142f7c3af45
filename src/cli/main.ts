import { Command, CommanderError, Option } from 'commander';
import { addersFor } from './commandTable.js';
import { EXIT, exitCodeOf } from './context.js';
import { flagMessage } from './flagErrors.js';
import { OUTPUT_FORMATS } from './output.js';
import { addOutputShortFlag } from './outputFlag.js';
import { watchStdout } from './stdout.js';

watchStdout();

const program = new Command('svc')
  .description('Search and retrieval for operational data: full-text, SQL and semantic search with provenance.')
  .version('0.1.0')
  .addOption(new Option('--data-dir <dir>', 'local data dir').env('SVC_DATA_DIR'))
  .addOption(new Option('--url <url>', 'remote mode: talk to this server').env('SVC_URL'))
  .addOption(new Option('--token <token>', 'bearer token for remote mode').env('SVC_TOKEN'))
  .addOption(new Option('--tenant <id>', 'tenant to act in').env('SVC_TENANT'))
  .addOption(new Option('--profile <name>', 'saved server and token to use (see `svc login`)').env('SVC_PROFILE'))
  .addOption(new Option('--output <format>', 'output format (default: table on a terminal, json otherwise; -o after a command)').choices(OUTPUT_FORMATS))
  .option('--json', 'same as --output json')
  .option('--yes', 'never prompt')
  // commander's own errors (unknown command or option, bad choice) as one line, like svc's
  .configureOutput({ outputError: (str, write) => write(`svc: ${str.replace(/^error: /, '').trim()} (see svc --help)\n`) })
  .exitOverride();

for (const add of await addersFor(process.argv.slice(2))) add(program);
addOutputShortFlag(program);

// the command that ran, so that an error can name the flag the user typed
let ran: Command | undefined;
program.hook('preAction', (_program, action) => {
  ran = action;
});

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    process.exitCode = err.exitCode === 0 ? EXIT.ok : EXIT.usage;
  } else if ((err as Error)?.name === 'ExitPromptError') {
    // Ctrl-C at a prompt: the user's answer, not a failure to explain
    process.exitCode = 130;
  } else {
    process.stderr.write(`svc: ${flagMessage(err, ran) ?? (err as Error).message.split('\n')[0]}\n`);
    process.exitCode = exitCodeOf(err);
  }
}
