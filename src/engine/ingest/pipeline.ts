import type { NewRecord, StoredRecord } from '../records.js';
import { parseObject } from './parse.js';
import type { CsvInput } from './parsers/csv.js';
import type { RunState } from './runs.js';
import { makeTransform } from './transform.js';
import type { Batch } from './writer.js';

export const BATCH_SIZE = 2000;

/**
 * Streams an object through parser and transform into batches, starting after `run.resume_line`.
 * A malformed line goes into the batch's errors; the run goes on.
 */
export async function* batches(input: CsvInput, run: RunState, sourceKey: string, orderedIds: boolean): AsyncGenerator<Batch> {
  const transform = makeTransform(run.transform, {
    source_key: sourceKey, bucket: run.bucket, etag: run.etag, format: run.format as never, ingested_at: Date.parse(run.ingested_at ?? run.created_at),
    ordered_ids: orderedIds,
  });
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

/** How many batches indexing may run behind committing: enough to keep both threads busy, few enough to bound memory. */
const INDEX_LAG = 4;

/**
 * Runs `commit` then `index` for each batch: the parse of batch N+1 overlaps the commit of batch N,
 * and indexing (on another thread) runs up to INDEX_LAG batches behind. Resolves once every batch
 * is committed and indexed.
 */
export async function pipelineBatches(
  source: AsyncIterable<Batch>,
  commit: (b: Batch) => Promise<StoredRecord[]>,
  index: (b: Batch, added: StoredRecord[]) => Promise<void>,
): Promise<void> {
  let committing: Promise<void> = Promise.resolve();
  const indexing: Promise<void>[] = [];
  try {
    for await (const batch of source) {
      await committing; // at most one commit in flight
      while (indexing.length >= INDEX_LAG) await indexing.shift();
      committing = commit(batch).then((added) => void indexing.push(index(batch, added)));
      committing.catch(() => {}); // observed at the next await; keeps Node from reporting it unhandled meanwhile
    }
  } catch (err) {
    // the source failed (an object that cannot be read to its end): the batches before it settle
    // first, so that the run's state is what was committed when the caller records the failure
    await committing.catch(() => {});
    await Promise.allSettled(indexing);
    throw err;
  }
  await committing;
  await Promise.all(indexing);
}
