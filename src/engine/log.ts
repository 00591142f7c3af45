/**
 * Problems met off the request path (a snapshot that could not be written, a job whose outcome
 * could not be stored, an unhandled rejection): one JSON line on stderr each, so that nothing fails
 * in silence. Requests have their own log on stdout.
 */
export function logProblem(event: string, err: unknown, fields: Record<string, unknown> = {}): void {
  const e = err as { message?: string; code?: unknown; stack?: string } | null;
  const line = {
    time: new Date().toISOString(),
    level: 'error',
    event,
    ...fields,
    error: e?.message ?? String(err),
    code: e?.code,
    stack: e?.stack,
  };
  try {
    process.stderr.write(JSON.stringify(line) + '\n');
  } catch {
    // stderr itself is gone: nothing left to tell
  }
}
