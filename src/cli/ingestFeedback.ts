import type { IngestRun } from '../api/ingest.js';
import { progressBar, statusLine } from './progress.js';

const count = (n: number) => n.toLocaleString('en-US');
const MB = 2 ** 20;

/** What a run is ready for, in words: text always once ready, semantic when the dataset embeds. */
function readiness(run: IngestRun): string {
  const parts = [run.ready_for.text_search ? 'text ready' : 'text pending'];
  if (run.documents.semantic_total > 0 || run.ready_for.semantic_search) parts.push(run.ready_for.semantic_search ? 'semantic ready' : 'semantic pending');
  return parts.join(', ');
}

/** The one line that ends an ingest on a terminal. */
export function summaryOf(run: IngestRun, seconds: number): string {
  const d = run.documents;
  if (run.status === 'queued' || run.status === 'running') return `run ${run.ingest_run_id} ${run.status} into ${run.dataset_id} (svc runs get ${run.ingest_run_id}, or --wait)`;
  const counts = `${count(d.parsed)} records (${count(d.malformed)} malformed, ${count(d.duplicates)} duplicates) into ${run.dataset_id} in ${seconds.toFixed(1)} s`;
  return run.status === 'failed' ? `${counts} — failed: ${run.error_code}: ${run.error_message}` : `${counts} — ${readiness(run)}`;
}

/**
 * Feedback on stderr while one input is ingested, on a terminal only: the bytes sent (a bar when
 * the size is known), then the records as they commit, then one summary line.
 */
export function ingestFeedback(size: number) {
  const started = performance.now();
  const bar = size > 0 ? progressBar(size) : null;
  const line = statusLine();
  return {
    bytes: (n: number) => (bar ? bar.bytes(n) : line.update(`read ${(n / MB).toFixed(1)} MB`)),
    records: (run: IngestRun) => {
      bar?.stop();
      line.update(`${run.status} into ${run.dataset_id}: ${count(run.documents.parsed)} records`);
    },
    done: (run: IngestRun) => {
      bar?.stop();
      line.stop();
      if (process.stderr.isTTY) process.stderr.write(summaryOf(run, (performance.now() - started) / 1000) + '\n');
    },
    stop: () => {
      bar?.stop();
      line.stop();
    },
  };
}
