import type { ExportRecord } from './columns.js';

/** One JSON record per line, a buffer per batch: pulled one batch at a time, so only that batch is in memory. */
export async function* ndjsonChunks(batches: AsyncIterable<ExportRecord[]>): AsyncGenerator<Buffer> {
  for await (const batch of batches) {
    if (batch.length > 0) yield Buffer.from(batch.map((rec) => JSON.stringify(rec)).join('\n') + '\n');
  }
}
