import type { NewRecord, StoredRecord } from '../records.js';
import { parseObject } from './parse.js';
import type { RunState } from './runs.js';
import { makeTransform } from './transform.js';
import type { Batch } from './writer.js';

export const BATCH_SIZE = 2000;

/**
 * Streams an object through parser and transform into batches, starting after `run.resume_line`.
 * A malformed line goes into the batch's errors; the run goes on.
 */
export async function* batches(input: AsyncIterable<Buffer>, run: RunState, sourceKey: string): AsyncGenerator<Batch> {
  const transform = makeTransform(run.transform, { source_key: sourceKey, bucket: run.bucket, etag: run.etag, format: run.format as never });
  let batch: Batch = { records: [], errors: [], lastLine: run.resume_line };
  for await (const item of parseObject(input, run.format as never)) {
    if (item.line <= run.resume_line) continue;
    batch.lastLine = item.line;
    if ('error' in item) {
      batch.errors.push({ line: item.line, reason: item.error });
    } else {
      const out = transform(item.value, item.line);
      if ('error' in out) batch.errors.push({ line: item.line, reason: out.error });
      else batch.records.push(out as NewRecord);
    }
    if (batch.records.length + batch.errors.length >= BATCH_SIZE) {
      yield batch;
      batch = { records: [], errors: [], lastLine: item.line };
    }
  }
  if (batch.records.length + batch.errors.length > 0) yield batch;
}

/** Runs `commit` then `index` for each batch, letting the parse of batch N+1 overlap the commit of batch N. */
export async function pipelineBatches(
  source: AsyncIterable<Batch>,
  commit: (b: Batch) => Promise<StoredRecord[]>,
  index: (b: Batch, added: StoredRecord[]) => void,
): Promise<void> {
  let pending: Promise<void> = Promise.resolve();
  for await (const batch of source) {
    await pending; // at most one commit in flight, so memory stays bounded
    pending = commit(batch).then((added) => index(batch, added));
    pending.catch(() => {}); // observed at the next await; keeps Node from reporting it unhandled meanwhile
  }
  await pending;
}
