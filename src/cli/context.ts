import type { Command } from 'commander';
import { BadRequest, Conflict, EngineError, Forbidden, Invalid, NotFound, Refused, Unauthenticated } from '../engine/errors.js';
import { connect, type GlobalOptions } from './connect.js';
import { emit, outputFormat, type OutputFormat } from './output.js';
import type { Service } from './service.js';

export const EXIT = { ok: 0, failure: 1, usage: 2, notFound: 3, auth: 4, runFailed: 5 } as const;

/** Ends the command with an exit code and a one-line message. */
export class Exit extends Error {
  constructor(readonly code: number, message: string) {
    super(message);
  }
}

export function exitCodeOf(err: unknown): number {
  if (err instanceof Exit) return err.code;
  if (err instanceof NotFound) return EXIT.notFound;
  if (err instanceof Unauthenticated || err instanceof Forbidden) return EXIT.auth;
  // what the API answers with 400 or 422 is bad input here too, whichever door the command went through
  if (err instanceof Invalid || err instanceof BadRequest || (err instanceof Refused && (err.status === 400 || err.status === 422))) return EXIT.usage;
  if (err instanceof Conflict || err instanceof EngineError) return EXIT.failure;
  return EXIT.failure;
}

export interface Ctx {
  service: Service;
  globals: GlobalOptions;
  format: OutputFormat;
  emit: (value: unknown, list?: { rows: Record<string, unknown>[]; columns: string[] }) => Promise<void>;
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

/** Runs a command around one connected Service, always closing it. */
export async function withService(cmd: Command, fn: (ctx: Ctx) => Promise<void>): Promise<void> {
  const opts = cmd.optsWithGlobals<GlobalOptions>();
  const globals: GlobalOptions = { ...opts, dataDirGiven: Boolean(opts.dataDir) && ['cli', 'env'].includes(cmd.getOptionValueSourceWithGlobals('dataDir') ?? '') };
  const format = outputFormat(globals);
  const service = await connect(globals);
  try {
    await fn({ service, globals, format, emit: (value, list) => emit(format, value, list) });
  } finally {
    await service.close();
  }
}
