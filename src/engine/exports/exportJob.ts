import { createReadStream } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { createGzip } from 'node:zlib';
import { pipeline } from 'node:stream/promises';
import type { Caller } from '../auth/caller.js';
import type { BlobStore, StoredBlob } from '../blobs/store.js';
import type { FreeSpace } from '../diskSpace.js';
import { DiskFull, EngineError, Unavailable } from '../errors.js';
import { now } from '../ids.js';
import { Interrupted, Permanent, type JobContext, type JobState } from '../jobs/queue.js';
import type { Store } from '../store/db.js';
import type { ExportRecord } from './columns.js';
import { csvChunks } from './csvWriter.js';
import type { ExportLimits } from './limits.js';
import { ndjsonChunks } from './ndjsonWriter.js';
import { writeParquet } from './parquetWriter.js';
import type { RowSources } from './rows.js';
import { EXPORTS_BUCKET, exportKey, type ExportState } from './state.js';

/** How often the rows written so far are stored on the export while it runs. */
const PROGRESS_MS = 1000;

class Stopped extends Interrupted {}

export const workDirName = (exportId: string) => `export_${exportId}`;

/**
 * The job that writes an export's file: it reads what the export names a batch at a time, writes
 * it in its format through a temp file that is renamed into place once whole, and stores the row
 * count and size. Any attempt starts from scratch and reads the data as of its own start (a search
 * is frozen then): a rerun after a crash writes a whole, consistent file. Between batches it stops
 * when cancelled (the temp file goes) and when the server stops (the job is taken up again).
 */
export class ExportJob {
  constructor(
    private readonly store: Store,
    private readonly blobs: BlobStore,
    private readonly space: FreeSpace,
    private readonly sources: RowSources,
    private readonly limits: ExportLimits,
    private readonly stopping: () => boolean,
  ) {}

  async run(job: JobState, ctx: JobContext): Promise<Record<string, unknown> | void> {
    const t = job.tenant_id;
    const id = String(job.payload.export_id);
    const s: ExportState | undefined = this.store.meta.get(exportKey(t, id));
    if (!s) return; // deleted before it ran
    // the job reads as a member of the tenant: an export holds what its requester may read
    const caller: Caller = { user_id: s.requested_by, kind: 'local', tenant_id: t, role: 'Member' };
    let rows = 0;
    let savedAt = Date.now();
    await this.progress(t, id, 0);
    try {
      const source = await this.sources.open(caller, s);
      let stored: StoredBlob;
      try {
        const watched = this.watch(source.batches, ctx, async (n) => {
          const first = rows === 0;
          rows += n;
          if (!first && Date.now() - savedAt < PROGRESS_MS) return;
          savedAt = Date.now();
          await this.progress(t, id, rows);
        });
        const checkSpace = () => this.space.check(`export ${id}`);
        const body = s.format === 'parquet'
          ? createReadStream(await writeParquet(this.blobs.workDir(t, workDirName(id)), source.columns, watched, this.limits.parquetMemory, checkSpace))
          : s.format === 'csv' ? csvChunks(source.columns, watched) : ndjsonChunks(watched);
        stored = await this.blobs.put(t, EXPORTS_BUCKET, s.store_key, s.gzip ? gzipped(body) : body, Infinity, checkSpace);
      } finally {
        source.close();
      }
      if (ctx.cancelled() || !(await this.finish(t, id, rows, stored.size))) {
        this.blobs.remove(t, EXPORTS_BUCKET, s.store_key); // cancelled, or deleted meanwhile
        return;
      }
      return { export_id: id, row_count: rows, size_bytes: stored.size };
    } catch (err) {
      if (ctx.cancelled()) return; // the job ends cancelled; the temp file is gone with the failed write
      throw asJobError(err);
    } finally {
      this.blobs.removeWorkDir(t, workDirName(id));
    }
  }

  /** The batches as they pass, counted; between two of them a cancel or a stopping server ends the attempt. */
  private async *watch(batches: AsyncIterable<ExportRecord[]>, ctx: JobContext, counted: (n: number) => Promise<void>): AsyncGenerator<ExportRecord[]> {
    for await (const batch of batches) {
      if (ctx.cancelled()) throw new Stopped('the export was cancelled');
      if (this.stopping()) throw new Stopped('the server stopped: the export starts again when it is next up');
      await counted(batch.length);
      yield batch;
      if (this.limits.batchPauseMs > 0) await sleep(this.limits.batchPauseMs);
    }
  }

  /** Stores the rows written so far (at the start, after the first batch, then about once a second): an attempt that starts again starts from 0. */
  private async progress(t: string, id: string, rows: number): Promise<void> {
    await this.store.meta.transaction(() => {
      const cur: ExportState | undefined = this.store.meta.get(exportKey(t, id));
      if (cur) this.store.meta.put(exportKey(t, id), { ...cur, row_count: rows, size_bytes: null, completed_at: null });
    });
  }

  /** Records the file as in place; false when the export was deleted meanwhile. */
  private async finish(t: string, id: string, rows: number, size: number): Promise<boolean> {
    return this.store.meta.transaction(() => {
      const cur: ExportState | undefined = this.store.meta.get(exportKey(t, id));
      if (!cur) return false;
      this.store.meta.put(exportKey(t, id), { ...cur, row_count: rows, size_bytes: size, completed_at: now() });
      return true;
    });
  }
}

/** The bytes gzipped as they are pulled; an error on either side ends both. */
function gzipped(body: AsyncIterable<Buffer | string>): AsyncIterable<Buffer> {
  const gzip = createGzip();
  pipeline(body, gzip).catch((err) => gzip.destroy(err));
  return gzip;
}

/**
 * A failure as the queue should take it: what the export asks for that cannot be (a refused
 * statement, a search over the cap, a dataset gone) fails at once; a full disk waits for space;
 * anything else (a stopping server, an I/O error) is tried again.
 */
function asJobError(err: unknown): unknown {
  if (err instanceof DiskFull || err instanceof Unavailable || !(err instanceof EngineError)) return err;
  return new Permanent(err.message);
}
