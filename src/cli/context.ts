import type { Command } from 'commander';
import { BadRequest, Conflict, EngineError, Forbidden, Invalid, NotFound, Unauthenticated } from '../engine/errors.js';
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
  if (err instanceof Invalid || err instanceof BadRequest) return EXIT.usage;
  if (err instanceof Conflict || err instanceof EngineError) return EXIT.failure;
  return EXIT.failure;
}

export interface Ctx {
  service: Service;
  globals: GlobalOptions;
  format: OutputFormat;
  emit: (value: unknown, list?: { rows: Record<string, unknown>[]; columns: string[] }) => Promise<void>;
}

/** Runs a command around one connected Service, always closing it. */
export async function withService(cmd: Command, fn: (ctx: Ctx) => Promise<void>): Promise<void> {
  const globals = cmd.optsWithGlobals<GlobalOptions>();
  const format = outputFormat(globals);
  const service = await connect(globals);
  try {
    await fn({ service, globals, format, emit: (value, list) => emit(format, value, list) });
  } finally {
    await service.close();
  }
}
