import { statSync } from 'node:fs';
import type { IngestOptions, IngestRun } from '../../api/ingest.js';
import type { Caller } from '../auth/caller.js';
import { newObjectKey } from '../blobs/objectKey.js';
import type { BlobStore } from '../blobs/store.js';
import type { Datasets } from '../datasets/datasets.js';
import type { FreeSpace } from '../diskSpace.js';
import { Conflict, DiskFull, NotFound } from '../errors.js';
import { Permanent, type JobQueue, type JobState } from '../jobs/queue.js';
import { now } from '../ids.js';
import { INGEST_FORMATS, type IngestFormat, type TransformConfig } from '../records.js';
import type { Sources } from '../sources/sources.js';
import type { Source } from '../../api/sources.js';
import type { Store } from '../store/db.js';
import type { DerivedIndexes } from '../derived/derivedIndexes.js';
import { checkTimeFormat } from './lineTime.js';
import { batches, pipelineBatches } from './pipeline.js';
import { distinctEtag, isTerminalRun, newRun, publicRun, Runs, waitsForSpace, type RequestedParse, type RunState } from './runs.js';
import { commitBatch } from './writer.js';
import { keys } from '../store/keys.js';
import { inflated, ObjectRefused } from './inflate.js';
import { imageBatches, sniffImage } from './image.js';

import { MAX_OBJECT_BYTES } from './objectLimit.js';
export { MAX_OBJECT_BYTES };

const EXTENSION_FORMATS: Record<string, IngestFormat> = {
  log: 'text', txt: 'text', text: 'text', ndjson: 'ndjson', jsonl: 'ndjson', json: 'json', csv: 'csv',
};

/** What the ingest of one object may do, an operator's to set (SVC_INGEST_MAX_DECOMPRESSED_BYTES). */
export interface IngestLimits {
  /** most bytes a gzip object may decompress to (default: the object limit) */
  maxDecompressedBytes: number;
}

/**
 * The format named, else the one a file name suggests, else the source's. A compression suffix
 * (`.gz`) says nothing of the format and is passed over (`app.log.gz` is text); whether the object
 * is compressed is told by its bytes alone (see inflate.ts).
 */
export function chooseFormat(named: string | undefined, filename: string | undefined, sourceFormat: string): IngestFormat {
  if (named) return EXTENSION_FORMATS[named] ?? (named as IngestFormat);
  const ext = filename?.toLowerCase().replace(/\.(gz|gzip)$/, '').match(/\.([a-z]+)$/)?.[1];
  if (ext && EXTENSION_FORMATS[ext]) return EXTENSION_FORMATS[ext];
  const fallback = sourceFormat === 'jsonl' ? 'ndjson' : sourceFormat;
  return INGEST_FORMATS.includes(fallback as IngestFormat) ? (fallback as IngestFormat) : 'ndjson';
}

export const INGEST_JOB = 'ingest';

/** How an object of `source` is parsed: its format and transform, from the source's config and what the ingest request named. */
export function parseConfig(source: Source, key: string, requested: RequestedParse): { format: IngestFormat; transform: TransformConfig } {
  const { format, filename, ...fields } = requested;
  const chosen = chooseFormat(format, filename ?? key, source.format);
  // a text line's time format comes with the source's parse_config (one stored before it was checked counts as unset); other formats take time from a field
  const named = source.parse_config.time_format;
  const timeFormat = chosen === 'text' && named !== undefined && checkTimeFormat(named) === null ? { time_format: named as string } : {};
  return {
    format: chosen,
    transform: { ...(source.transform_config as object), ...timeFormat, ...fields },
  };
}

/**
 * Ingest runs: an object goes to the blob store, a run is queued, and runs of one dataset are
 * processed one after another in this process. Unfinished runs are taken up again on open.
 */
export class Ingest {
  constructor(
    private readonly store: Store,
    private readonly datasets: Datasets,
    private readonly sources: Sources,
    readonly runs: Runs,
    private readonly blobs: BlobStore,
    private readonly derived: DerivedIndexes,
    private readonly jobs: JobQueue,
    private readonly space: FreeSpace,
    private readonly onIndexed: (tenantId: string, datasetId: string) => void,
    private readonly limits: IngestLimits = { maxDecompressedBytes: MAX_OBJECT_BYTES },
  ) {
    jobs.register(INGEST_JOB, {
      handler: (job) => this.runJob(job),
      maxAttempts: 3,
      serialKey: (job) => `${job.tenant_id}/${job.payload.dataset_id}`, // runs of one dataset go in order
    });
  }

  /** The source a request names: a source by key, or a dataset's default source. */
  source(tenantId: string, target: { dataset_id?: string; source_key?: string }): Source {
    if (target.dataset_id) this.datasets.state(tenantId, target.dataset_id);
    const source = this.sources.byKey(tenantId, target.source_key ?? target.dataset_id ?? '');
    if (target.dataset_id && source.dataset_id !== target.dataset_id) throw new NotFound(`source '${source.source_key}' does not feed dataset '${target.dataset_id}'`);
    if (this.datasets.state(tenantId, source.dataset_id).deleting) throw new Conflict(`dataset '${source.dataset_id}' is being deleted`);
    if (!source.enabled) throw new Conflict(`source '${source.source_key}' is disabled`);
    return source;
  }

  /** Stores the object and queues its run. */
  async submit(caller: Caller, input: AsyncIterable<Buffer>, opts: IngestOptions & { dataset_id?: string; source_key?: string }): Promise<IngestRun> {
    const source = this.source(caller.tenant_id, opts);
    this.space.check('ingest');
    const key = newObjectKey(source.source_key, opts.filename);
    const blob = await this.blobs.put(caller.tenant_id, source.bucket, key, input, MAX_OBJECT_BYTES, () => this.space.check('ingest'));
    try {
      return await this.startFromObject(caller, source, { key, etag: blob.etag, input_kind: 'stream' }, opts);
    } catch (err) {
      this.blobs.remove(caller.tenant_id, source.bucket, key); // no run will read it: the sender is told to send it again
      throw err;
    }
  }

  /** Queues a run over an object already in the blob store (a stream just stored, or a completed upload). */
  async startFromObject(caller: Caller, source: Source, object: { key: string; etag: string; input_kind: string; upload_session_id?: string }, opts: IngestOptions = {}): Promise<IngestRun> {
    const requested = Object.fromEntries(Object.entries({ format: opts.format, filename: opts.filename, id_field: opts.id_field, title_field: opts.title_field, body_field: opts.body_field, time_field: opts.time_field }).filter(([, v]) => v));
    const etag = opts.distinct ? distinctEtag(object.etag) : object.etag;
    const run = newRun({ tenant_id: caller.tenant_id, dataset_id: source.dataset_id, source_id: source.source_id, bucket: source.bucket, ...object, etag, ...parseConfig(source, object.key, requested), requested });
    await this.schedule(run);
    return publicRun(run);
  }

  /**
   * Parses a stored object again, here and now, with its source's current config and what its
   * first ingest named (a reindex): `run` is one `reparseRun` made, stored, and possibly half done
   * by an earlier attempt. Throws what the job that holds it should retry.
   */
  async reparse(run: RunState): Promise<RunState> {
    if (run.status === 'ready' || run.status === 'failed') return run;
    await this.process(run);
    return run;
  }

  get(caller: Caller, runId: string): IngestRun {
    return publicRun(this.runs.state(caller.tenant_id, runId));
  }

  list(caller: Caller, filter: Parameters<Runs['list']>[1]): IngestRun[] {
    return this.runs.list(caller.tenant_id, filter).map(publicRun);
  }

  /** Resolves once the run is ready or failed (one that failed for want of space waits in the queue, not here). */
  async wait(caller: Caller, runId: string): Promise<IngestRun> {
    const t = caller.tenant_id;
    const run = this.runs.state(t, runId);
    if (run.job_id && !isTerminalRun(run)) await this.jobs.settled(t, run.job_id, () => isTerminalRun(this.runs.state(t, runId)));
    return this.get(caller, runId);
  }

  /** Runs a failed run again from where it stopped, when its failure is repairable. */
  async retry(caller: Caller, runId: string): Promise<IngestRun> {
    const run = this.runs.state(caller.tenant_id, runId);
    if (run.status !== 'failed' || !run.lifecycle.repairable) throw new Conflict(`ingest run '${runId}' is ${run.status}${run.status === 'failed' ? ' and not repairable' : ''}: nothing to retry`);
    if (waitsForSpace(run)) this.space.check('the retry');
    Object.assign(run, { status: 'queued', error_code: null, error_message: null, failed_at: null, completed_at: null, queued_at: now() });
    run.lifecycle = { state: 'queued', repairable: false, reasons: [] };
    // a run waiting for space has its job still queued: that job runs now
    if (run.job_id && (await this.jobs.dueNow(run.tenant_id, run.job_id))) this.runs.put(run);
    else await this.schedule(run);
    return publicRun(run);
  }

  /**
   * Inside the caller's transaction: stores a new run with its job, so that both exist exactly when
   * what the transaction commits does (a connector's checkpoint past the run's bytes). Poke the
   * queue once it committed.
   */
  stage(run: RunState): void {
    run.job_id = this.jobs.stage(run.tenant_id, INGEST_JOB, { ingest_run_id: run.ingest_run_id, dataset_id: run.dataset_id }).job_id;
    this.store.meta.put(keys.run(run.tenant_id, run.ingest_run_id), run);
  }

  private async schedule(run: RunState): Promise<void> {
    const job = await this.jobs.enqueue(run.tenant_id, 'ingest', { ingest_run_id: run.ingest_run_id, dataset_id: run.dataset_id });
    run.job_id = job.job_id;
    try {
      this.runs.put(run);
    } catch (err) {
      // a run that could not be stored (a full disk) is refused: its job must not go looking for it
      await this.jobs.cancel(run.tenant_id, job.job_id).catch(() => undefined);
      throw err;
    }
  }

  private async runJob(job: JobState): Promise<Record<string, unknown>> {
    const run = this.runs.state(job.tenant_id, String(job.payload.ingest_run_id));
    if (isTerminalRun(run) && !waitsForSpace(run)) return { status: run.status };
    if (waitsForSpace(run)) {
      Object.assign(run, { status: 'queued', error_code: null, error_message: null, failed_at: null, completed_at: null });
      run.lifecycle = { state: 'queued', repairable: false, reasons: [] };
    }
    try {
      await this.process(run);
    } catch (err) {
      // what the store holds, not `run`: a batch whose commit failed counted itself in `run` already
      let stored: RunState;
      try {
        stored = this.runs.committed(run.tenant_id, run.ingest_run_id);
      } catch {
        throw err; // the run went with its dataset
      }
      if (err instanceof DiskFull) {
        this.fail(stored, 'disk_full', err.message, true);
        throw err; // the job waits for space, then resumes the run after its last committed line
      }
      const last = job.attempts >= job.max_attempts;
      if (last) this.fail(stored, 'ingest_error', (err as Error).message, true);
      else this.save(Object.assign(stored, { status: 'queued', lifecycle: { state: 'queued', repairable: true, reasons: [`attempt ${job.attempts} failed: ${(err as Error).message}`] } }));
      throw err;
    }
    if (run.status === 'failed') throw new Permanent(`${run.error_code}: ${run.error_message}`);
    return { status: run.status, parsed: run.documents.parsed };
  }

  private async process(run: RunState): Promise<void> {
    const t = run.tenant_id;
    try {
      const source = this.sources.get(t, run.source_id);
      run.status = 'running';
      run.started_at ??= now();
      run.lifecycle.state = 'running';
      run.documents.index_committed = run.documents.parsed;
      this.runs.put(run);
      if (statSync(this.blobs.path(t, run.bucket, run.key)).size === 0) {
        return this.fail(run, 'empty_object', 'the object is empty (0 bytes)', false);
      }
      // an image (by its magic bytes, never its name) is one record, not lines of text
      const image = sniffImage(this.blobs.path(t, run.bucket, run.key));
      const orderedIds = this.datasets.state(t, run.dataset_id).ordered_ids === true;
      await pipelineBatches(
        // the one place a run reads its object: a gzip object (by its bytes) is decompressed here, for every way in
        image
          ? imageBatches(image, run, source.source_key, orderedIds)
          : batches(() => inflated(this.blobs.read(t, run.bucket, run.key), this.limits.maxDecompressedBytes), run, source.source_key, orderedIds),
        async (batch) => {
          this.space.check('ingest'); // a run stops at the floor, before the disk fills
          return commitBatch(this.store, run, batch);
        },
        // a failed add is made up for by each index's catch-up when the run is followed: that reads the store
        (batch, added) => this.derived.added(t, run.dataset_id, added).then(() => void (run.documents.index_committed += batch.records.length), () => {}),
      );
    } catch (err) {
      if (err instanceof NotFound) return this.fail(run, 'not_found', err.message, false);
      // the object cannot be read to its end: what was committed before stays, and a retry would fail the same way
      if (err instanceof ObjectRefused) return this.fail(run, err.code, err.message, false);
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return this.fail(run, 'object_missing', 'the stored object is missing', false);
      throw err; // the job retries with backoff, then fails the run as repairable
    }
    const docs = run.documents;
    if (docs.parsed === 0) {
      const first = run.errors[0];
      const why = first ? `all ${docs.malformed} lines were malformed (line ${first.line}: ${first.reason})` : 'the object holds no records';
      return this.fail(run, docs.malformed > 0 ? 'no_valid_records' : 'no_records', why, false);
    }
    // a follow that throws makes the job retry the run from where it stopped (its records are stored)
    await this.derived.follow(run, () => this.runs.put(run));
    Object.assign(run, { status: 'ready', completed_at: now() });
    // a follower may leave work behind the run (vectors): the run is ready, its state says what is still pending
    const state = run.lifecycle.state === 'text_indexed' ? 'ready' : run.lifecycle.state;
    run.lifecycle = { state, repairable: false, reasons: docs.malformed > 0 ? [`${docs.malformed} malformed lines skipped`] : [] };
    this.runs.put(run);
    this.onIndexed(t, run.dataset_id);
  }

  private fail(run: RunState, code: string, message: string, repairable: boolean): void {
    const at = now();
    Object.assign(run, { status: 'failed', error_code: code, error_message: message, failed_at: at, completed_at: at });
    run.lifecycle = { state: 'failed', repairable, reasons: [message] };
    this.save(run);
  }

  /** Stores a run's state on its way out of a job; on a full disk readers still see it (see Runs.put). */
  private save(run: RunState): void {
    try {
      this.runs.put(run);
    } catch {
      // the dataset and its runs may be gone, or the disk full: nothing more can be recorded now
    }
  }
}
