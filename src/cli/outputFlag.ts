import { Option, type Command } from 'commander';
import { OUTPUT_FORMATS } from './output.js';

/**
 * `-o FORMAT` after a command's name. It cannot be a global option: the global ones are read
 * wherever they stand, and `svc export create|download -o FILE` already names a file with it. So
 * every command that has no `-o` of its own takes it, as a second spelling of `--output`.
 */
export function addOutputShortFlag(cmd: Command): void {
  for (const sub of cmd.commands) addOutputShortFlag(sub);
  if (cmd.commands.length > 0 || !cmd.parent || cmd.options.some((o) => o.short === '-o')) return;
  cmd.addOption(new Option('-o, --output <format>', 'output format (default: table on a terminal, json otherwise)').choices(OUTPUT_FORMATS));
}
