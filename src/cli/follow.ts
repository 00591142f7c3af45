import { basename, dirname, resolve } from 'node:path';
import { Readable } from 'node:stream';
import type { IngestRun } from '../api/ingest.js';
import { LIMITS } from '../api/limits.js';
import type { Checkpoints } from '../engine/connectors/directory/tail.js';
import type { IngestTarget, Service } from './service.js';

/** A file name as a glob that matches it alone. */
const literalGlob = (name: string) => name.replace(/[*?[\]{}()!+@\\]/g, '\\$&');

/**
 * `svc ingest DATASET FILE --follow`: the file from its start, then its lines as they are written
 * (rotation and truncation as the directory connector sees them), each read its own run, until
 * `signal` aborts. What was read is remembered only while the command runs.
 */
export async function followFile(service: Service, file: string, target: IngestTarget, onRun: (run: IngestRun) => void, signal: AbortSignal): Promise<void> {
  const { tailDirectory } = await import('../engine/connectors/directory/tail.js');
  const { watchDirectory } = await import('../engine/connectors/directory/watch.js');
  const root = dirname(resolve(file));
  const include = [literalGlob(basename(file))];
  const opts = { maxChunkBytes: LIMITS.connectorChunkBytes, maxFiles: 16, maxDecompressedBytes: 2 ** 30 };
  let checkpoints: Checkpoints = {};
  // a change seen while a pass reads is not lost: the next pass starts at once
  let changed = false;
  let wake: () => void = () => void (changed = true);
  const watcher = watchDirectory(root, () => wake(), { pollMs: 1000, debounceMs: 50, deep: false });
  try {
    while (!signal.aborted) {
      const chunks = tailDirectory(root, include, [], checkpoints, opts);
      for (let next = await chunks.next(); ; next = await chunks.next()) {
        if (next.done) {
          checkpoints = next.value.checkpoints;
          break;
        }
        onRun(await service.ingest(Readable.from([next.value.bytes]), { ...target, filename: basename(file), distinct: true }));
        checkpoints = next.value.checkpoints;
      }
      if (!changed) {
        await new Promise<void>((ok) => {
          wake = ok;
          signal.addEventListener('abort', () => ok(), { once: true });
        });
      }
      changed = false;
      wake = () => void (changed = true);
    }
  } finally {
    watcher.close();
  }
}
