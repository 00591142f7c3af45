import { Readable, pipeline } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { asBuffer } from './lines.js';

/** The two bytes every gzip member opens with (RFC 1952): compression is known by them, never by a name. */
export const GZIP_MAGIC = [0x1f, 0x8b] as const;

/** Why a run over a stored object stops for good: the object itself is at fault, so retrying cannot help. */
export class ObjectRefused extends Error {
  constructor(readonly code: string, message: string) {
    super(message);
  }
}

export const isGzip = (head: Uint8Array): boolean => head.length >= 2 && head[0] === GZIP_MAGIC[0] && head[1] === GZIP_MAGIC[1];

const MiB = 2 ** 20;
const size = (n: number) => (n >= MiB && n % MiB === 0 ? `${n / MiB} MiB` : `${n} bytes`);

/**
 * The bytes of a stored object as its parser reads them: a gzip object (one or more members, told by
 * its first two bytes) decompressed as it streams, anything else as it is. The decompressed stream
 * may hold at most `limit` bytes: past that it ends with an ObjectRefused `decompressed_too_large`,
 * so that a small object expanding without end (a zip bomb) costs neither disk nor memory. A gzip
 * stream that is corrupt or cut short ends with an ObjectRefused `corrupt_gzip` after the bytes it
 * could still decompress: the records already committed stay.
 */
export async function* inflated(input: AsyncIterable<Buffer>, limit: number): AsyncGenerator<Buffer> {
  const it = input[Symbol.asyncIterator]();
  const head: Buffer[] = [];
  let headBytes = 0;
  try {
    while (headBytes < GZIP_MAGIC.length) {
      const next = await it.next();
      if (next.done) break;
      const chunk = asBuffer(next.value);
      head.push(chunk);
      headBytes += chunk.length;
    }
  } catch (err) {
    await it.return?.();
    throw err;
  }
  const first = head.length === 1 ? head[0] : Buffer.concat(head);
  const rest = replay(head, it);
  if (!isGzip(first)) {
    yield* rest;
    return;
  }
  yield* gunzipped(rest, limit);
}

/** The chunks already read, then the rest of the iterator; ending early ends the iterator too. */
async function* replay(head: Buffer[], it: AsyncIterator<Buffer>): AsyncGenerator<Buffer> {
  let done = false;
  try {
    yield* head;
    for (;;) {
      const next = await it.next();
      if (next.done) {
        done = true;
        return;
      }
      yield asBuffer(next.value);
    }
  } finally {
    if (!done) await it.return?.();
  }
}

async function* gunzipped(input: AsyncIterable<Buffer>, limit: number): AsyncGenerator<Buffer> {
  const gunzip = createGunzip({ chunkSize: 256 * 1024 });
  // pipeline destroys both sides on an error or an early end, and keeps the gunzip's buffer bounded
  const out = pipeline(Readable.from(input, { objectMode: false }), gunzip, () => {});
  let bytes = 0;
  try {
    for await (const chunk of out as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      if (bytes > limit) {
        throw new ObjectRefused('decompressed_too_large', `the gzip object decompresses to more than ${size(limit)} (the ingest object limit); nothing past it was read`);
      }
      yield chunk;
    }
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && code.startsWith('Z_')) {
      throw new ObjectRefused('corrupt_gzip', `the gzip object is corrupt or cut short after ${bytes} decompressed bytes: ${(err as Error).message}`);
    }
    throw err;
  } finally {
    out.destroy();
  }
}
