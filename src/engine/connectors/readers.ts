import type { ConnectorCredentials, DirectoryConfig, HttpConfig } from '../../api/connectors.js';
import { LIMITS } from '../../api/limits.js';
import type { RequestedParse } from '../ingest/runs.js';
import { MAX_OBJECT_BYTES } from '../ingest/objectLimit.js';
import { Permanent, type JobContext } from '../jobs/queue.js';
import { tailDirectory, type Checkpoints } from './directory/tail.js';
import { httpPages, HttpSyncError, streamUrl, type HttpStreamState } from './http/pages.js';
import type { StoredConnector, StreamPlan } from './stored.js';

/** What a connector read: bytes for one object (none: only the checkpoint moves), and the checkpoint past them. */
export interface Piece {
  stream: string;
  /** a file name for the object (its extension picks the format) */
  name: string;
  bytes: Buffer;
  checkpoint: unknown;
  requested: RequestedParse;
  /**
   * Lines of this piece are records of their own even where equal bytes were read before (a log
   * repeats itself): a record's id otherwise comes from the object's content and line.
   */
  distinct?: boolean;
  problems: { ref: string; reason: string }[];
}

const HTTP_RETRIES = 3;
const HTTP_RETRY_BASE_MS = 500;

/** The pieces of one stream from `checkpoint` on, each to be committed before the next is read. */
export function readStream(c: StoredConnector, stream: StreamPlan, checkpoint: unknown, credentials: ConnectorCredentials, ctx: JobContext): AsyncIterable<Piece> {
  return c.kind === 'directory' ? directoryPieces(c.config as DirectoryConfig, stream, checkpoint as Checkpoints | undefined) : httpPieces(c.config as HttpConfig, stream, checkpoint as HttpStreamState | undefined, credentials, ctx);
}

async function* directoryPieces(config: DirectoryConfig, stream: StreamPlan, checkpoint: Checkpoints | undefined): AsyncGenerator<Piece> {
  const include = stream.include ?? config.include ?? ['*.log'];
  const opts = { maxChunkBytes: LIMITS.connectorChunkBytes, maxFiles: LIMITS.connectorFiles, maxDecompressedBytes: MAX_OBJECT_BYTES };
  const chunks = tailDirectory(config.path, include, config.exclude ?? [], checkpoint ?? {}, opts);
  try {
    for (;;) {
      const next = await chunks.next();
      if (next.done) {
        // what no chunk carried (files gone, gzip files passed over) is stored too
        const problems = next.value.problems.map((p) => ({ ref: p.path, reason: p.reason }));
        return yield { stream: stream.name, name: '', bytes: Buffer.alloc(0), checkpoint: next.value.checkpoints, requested: {}, problems };
      }
      const chunk = next.value;
      yield { stream: stream.name, name: chunk.path, bytes: chunk.bytes, checkpoint: chunk.checkpoints, requested: { filename: chunk.path }, distinct: true, problems: [] };
    }
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EACCES') throw new Permanent(`directory '${config.path}' cannot be read (${code})`);
    throw err;
  }
}

async function* httpPieces(config: HttpConfig, stream: StreamPlan, state: HttpStreamState | undefined, credentials: ConnectorCredentials, ctx: JobContext): AsyncGenerator<Piece> {
  const abort = new AbortController();
  const watch = setInterval(() => ctx.cancelled() && abort.abort(), 250);
  const target = { url: streamUrl(config, stream.name || undefined), incremental: stream.incremental, cursor_field: stream.cursor_field ?? config.cursor_field };
  const requested: RequestedParse = { format: 'ndjson', filename: 'page.ndjson', ...(stream.primary_key ? { id_field: stream.primary_key } : {}) };
  try {
    for await (const page of httpPages(config, target, credentials, state ?? {}, { maxPageBytes: LIMITS.connectorPageBytes, retries: HTTP_RETRIES, retryBaseMs: HTTP_RETRY_BASE_MS, signal: abort.signal })) {
      const bytes = page.records.length === 0 ? Buffer.alloc(0) : Buffer.from(page.records.map((r) => JSON.stringify(r)).join('\n') + '\n');
      const problems = page.errors.map((e) => ({ ref: `${page.url} record ${e.line}`, reason: e.reason }));
      yield { stream: stream.name, name: 'page.ndjson', bytes, checkpoint: page.state, requested, problems };
    }
  } catch (err) {
    if (err instanceof HttpSyncError) throw new Permanent(err.message);
    throw err;
  } finally {
    clearInterval(watch);
  }
}
