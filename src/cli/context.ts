import type { Command } from 'commander';
import { EXIT, exitCodeOf as engineExitCode } from '../engine/errors.js';
import { connect, type GlobalOptions } from './connect.js';
import { fieldsOf } from './fieldsFlag.js';
import { emit, outputFormat, type OutputFormat } from './output.js';
import type { Service } from './service.js';

export { EXIT };

/** Ends the command with an exit code and a one-line message. */
export class Exit extends Error {
  constructor(readonly code: number, message: string) {
    super(message);
  }
}

/** A command's own Exit keeps its code; any other error takes the one the error table gives its kind. */
export const exitCodeOf = (err: unknown): number => (err instanceof Exit ? err.code : engineExitCode(err));

export interface Ctx {
  service: Service;
  globals: GlobalOptions;
  format: OutputFormat;
  emit: (value: unknown, list?: { rows: Record<string, unknown>[]; columns: string[] }) => Promise<void>;
  /** the columns `--fields` asked for (a table's and a CSV's; emit applies them) */
  fields?: string[];
}

/**
 * Asks before destroying data: `--yes` skips the question; on a terminal it is a prompt; without a
 * terminal nobody can answer, so the command refuses rather than deleting unasked.
 */
export async function confirmDestructive(globals: GlobalOptions, question: string, declined = 'nothing deleted'): Promise<void> {
  if (globals.yes) return;
  if (!process.stdin.isTTY || !process.stdout.isTTY) throw new Exit(EXIT.usage, `${question} Pass --yes to confirm when no terminal can.`);
  const { confirm } = await import('@inquirer/prompts');
  if (!(await confirm({ message: question, default: false }))) throw new Exit(EXIT.failure, declined);
}

/** The global options as a command sees them (with its own -o). */
export function globalsOf(cmd: Command): GlobalOptions {
  const opts = cmd.optsWithGlobals<GlobalOptions>();
  return { ...opts, dataDirGiven: Boolean(opts.dataDir) && ['cli', 'env'].includes(cmd.getOptionValueSourceWithGlobals('dataDir') ?? '') };
}

/** Runs a command around one connected Service, always closing it. */
export async function withService(cmd: Command, fn: (ctx: Ctx) => Promise<void>): Promise<void> {
  const globals = globalsOf(cmd);
  const format = outputFormat(globals);
  const fields = fieldsOf(cmd);
  const service = await connect(globals);
  try {
    await fn({ service, globals, format, fields, emit: (value, list) => emit(format, value, list && fields ? { ...list, columns: fields } : list) });
  } finally {
    await service.close();
  }
}
