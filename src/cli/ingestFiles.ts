import { createReadStream, statSync } from 'node:fs';
import { basename } from 'node:path';
import type { IngestRun } from '../api/ingest.js';
import { kindOf, type EngineError } from '../engine/errors.js';
import type { IngestTarget, Service } from './service.js';

/** How one file of a `svc ingest` of several went. */
export interface FileOutcome {
  path: string;
  /** null when the file was refused before a run started (the reason is in error_*) */
  ingest_run_id: string | null;
  status: 'ready' | 'failed';
  records: number;
  malformed: number;
  error_code: string | null;
  error_message: string | null;
}

/** What `svc ingest` of several files prints at the end. */
export interface IngestSummary {
  files: number;
  runs: number;
  records: number;
  malformed: number;
  failures: number;
  results: FileOutcome[];
}

/**
 * What a refusal of one file can be: too large, or the server busy or at fault. Any other refusal
 * (credentials, a dataset or source missing or disabled, options, a full disk) would be the same
 * for every file, so it ends the command at once, with its own exit code.
 */
const PER_FILE = new Set(['too_large', 'unavailable', 'internal']);

const outcome = (path: string, run: IngestRun): FileOutcome => ({
  path,
  ingest_run_id: run.ingest_run_id,
  status: run.status === 'ready' ? 'ready' : 'failed',
  records: run.documents.parsed,
  malformed: run.documents.malformed,
  error_code: run.error_code,
  error_message: run.error_message,
});

/**
 * Ingests each file as its own object and run, in order, through the service (local or remote
 * alike), then waits for every run to end. A file whose run fails, or that the service refuses on
 * its own account (see PER_FILE), is counted as a failure and the others go on. `onFile` hears of each file as it is sent.
 */
export async function ingestFiles(service: Service, files: string[], target: IngestTarget, onFile?: (i: number, path: string) => void): Promise<IngestSummary> {
  const started: { path: string; run?: IngestRun; error?: FileOutcome }[] = [];
  for (const [i, path] of files.entries()) {
    onFile?.(i, path);
    try {
      const size = statSync(path).size;
      const run = await service.ingest(createReadStream(path, { highWaterMark: 1 << 20 }), { ...target, filename: basename(path), path, size });
      started.push({ path, run });
    } catch (err) {
      const kind = kindOf(err).kind;
      if (!PER_FILE.has(kind)) throw err;
      const code = (err as EngineError).code ?? kind;
      started.push({ path, error: { path, ingest_run_id: null, status: 'failed', records: 0, malformed: 0, error_code: code, error_message: (err as Error).message } });
    }
  }
  const results: FileOutcome[] = [];
  for (const { path, run, error } of started) {
    if (error) results.push(error);
    // local runs have ended already; a remote one is waited for here
    else results.push(outcome(path, run!.status === 'ready' || run!.status === 'failed' ? run! : await service.waitRun(run!.ingest_run_id)));
  }
  const failed = results.filter((r) => r.status === 'failed');
  return {
    files: files.length,
    runs: results.filter((r) => r.ingest_run_id !== null).length,
    records: results.reduce((n, r) => n + r.records, 0),
    malformed: results.reduce((n, r) => n + r.malformed, 0),
    failures: failed.length,
    results,
  };
}
