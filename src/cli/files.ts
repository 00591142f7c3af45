import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, statSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { GlobalOptions } from './connect.js';
import { confirmDestructive, EXIT, Exit } from './context.js';
import { drained, stdoutClosed } from './stdout.js';

/** A file about to be written: a directory is refused, an existing file only overwritten when confirmed (--yes, or a prompt). */
export async function checkTarget(path: string, globals: GlobalOptions): Promise<void> {
  if (!existsSync(path)) return;
  if (statSync(path).isDirectory()) throw new Exit(EXIT.usage, `'${path}' is a directory: name a file`);
  await confirmDestructive(globals, `'${path}' exists: overwrite it?`, 'nothing written');
}

/**
 * Stops a stream that will not be written anywhere. A stream (every body svc gets) is destroyed:
 * ending an iterator never started waits for a read that never comes.
 */
export function discard(body: AsyncIterable<Buffer>): void {
  const stream = body as Partial<Readable>;
  if (typeof stream.destroy === 'function') stream.destroy();
  else void body[Symbol.asyncIterator]().return?.();
}

/**
 * Writes the stream to `path` through a file beside it, renamed once complete: a download cut short
 * leaves no truncated file under the name asked for. Answers the bytes written.
 */
export async function saveFile(body: AsyncIterable<Buffer>, path: string): Promise<number> {
  // a name of its own, made new (`wx`): never another file, nor a second download of the same name
  const part = `${path}.${randomBytes(4).toString('hex')}.part`;
  let bytes = 0;
  try {
    await pipeline(
      async function* () {
        for await (const chunk of body) {
          bytes += chunk.length;
          yield chunk;
        }
      },
      createWriteStream(part, { flags: 'wx' }),
    );
    await rename(part, path);
    return bytes;
  } catch (err) {
    await rm(part, { force: true });
    throw err;
  }
}

/** Streams to stdout, a chunk at a time as the reader takes them; stops reading once the reader has gone. */
export async function toStdout(body: AsyncIterable<Buffer>): Promise<void> {
  for await (const chunk of body) {
    if (stdoutClosed()) break;
    process.stdout.write(chunk);
    await drained();
  }
}
