import { createReadStream } from 'node:fs';
import { PassThrough, type Readable } from 'node:stream';
import type { BlobStore, StoredBlob } from '../blobs/store.js';
import { Refused } from '../errors.js';
import { UPLOADS_BUCKET } from './state.js';

/**
 * Streams one part into its own file (temp + rename, md5 as it goes, at most `maxBytes`).
 * The input is piped through a stream of its own so that a refusal ends that stream, not the
 * input: the rest of the input is then read and dropped, and whoever sent it can still be
 * answered (a 413 rather than a reset connection).
 */
export async function writePart(blobs: BlobStore, tenantId: string, file: string, input: Readable, maxBytes: number): Promise<StoredBlob> {
  const body = new PassThrough({ highWaterMark: 1 << 20 });
  const interrupted = (err?: Error) => {
    if (!input.readableEnded) body.destroy(err ?? new Error('the part upload was interrupted'));
  };
  input.on('error', interrupted);
  input.once('close', interrupted);
  input.pipe(body);
  try {
    return await blobs.put(tenantId, UPLOADS_BUCKET, file, body, maxBytes);
  } catch (err) {
    input.unpipe(body);
    if (!input.destroyed) input.resume();
    throw err instanceof Refused && err.status === 413 ? partTooLarge(maxBytes) : err;
  } finally {
    input.off('error', interrupted);
    input.off('close', interrupted);
  }
}

export const partTooLarge = (maxBytes: number) => new Refused(`a part holds at most ${maxBytes} bytes`, 'part_too_large', 413);

/** The parts' bytes one after another, a file at a time: what complete stores as the object. */
export async function* concatenated(paths: string[]): AsyncGenerator<Buffer> {
  for (const path of paths) yield* createReadStream(path, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>;
}
