import { statSync } from 'node:fs';
import type { IngestOptions, IngestRun } from '../../api/ingest.js';
import type { Caller } from '../auth/caller.js';
import type { BlobStore } from '../blobs/store.js';
import type { Datasets } from '../datasets/datasets.js';
import { NotFound } from '../errors.js';
import { now } from '../ids.js';
import { INGEST_FORMATS, type IngestFormat } from '../records.js';
import type { Sources } from '../sources/sources.js';
import type { Store } from '../store/db.js';
import type { TextIndexes } from '../text/textIndexes.js';
import { batches, pipelineBatches } from './pipeline.js';
import { newRun, publicRun, Runs, type RunState } from './runs.js';
import { commitBatch } from './writer.js';

/** Largest object one ingest accepts. */
export const MAX_OBJECT_BYTES = 10 * 2 ** 30;

const EXTENSION_FORMATS: Record<string, IngestFormat> = {
  log: 'text', txt: 'text', text: 'text', ndjson: 'ndjson', jsonl: 'ndjson', json: 'json', csv: 'csv',
};

/** The format named, else the one a file name suggests, else the source's. */
export function chooseFormat(named: string | undefined, filename: string | undefined, sourceFormat: string): IngestFormat {
  if (named) return named as IngestFormat;
  const ext = filename?.toLowerCase().match(/\.([a-z]+)$/)?.[1];
  if (ext && EXTENSION_FORMATS[ext]) return EXTENSION_FORMATS[ext];
  const fallback = sourceFormat === 'jsonl' ? 'ndjson' : sourceFormat;
  return INGEST_FORMATS.includes(fallback as IngestFormat) ? (fallback as IngestFormat) : 'ndjson';
}

/**
 * Ingest runs: an object goes to the blob store, a run is queued, and runs of one dataset are
 * processed one after another in this process. Unfinished runs are taken up again on open.
 */
export class Ingest {
  private readonly chains = new Map<string, Promise<void>>();
  private readonly done = new Map<string, Promise<void>>();

  constructor(
    private readonly store: Store,
    private readonly datasets: Datasets,
    private readonly sources: Sources,
    readonly runs: Runs,
    private readonly blobs: BlobStore,
    private readonly text: TextIndexes,
    private readonly onIndexed: (tenantId: string, datasetId: string) => void,
  ) {}

  /** Stores the object and queues its run; the target is a source by key, or a dataset's default source. */
  async submit(caller: Caller, input: AsyncIterable<Buffer>, opts: IngestOptions & { dataset_id?: string; source_key?: string }): Promise<IngestRun> {
    const t = caller.tenant_id;
    if (opts.dataset_id) this.datasets.state(t, opts.dataset_id);
    const source = this.sources.byKey(t, opts.source_key ?? opts.dataset_id ?? '');
    if (opts.dataset_id && source.dataset_id !== opts.dataset_id) throw new NotFound(`source '${source.source_key}' does not feed dataset '${opts.dataset_id}'`);
    const datasetId = source.dataset_id;
    const format = chooseFormat(opts.format, opts.filename, source.format);
    const run = newRun({
      tenant_id: t, dataset_id: datasetId, source_id: source.source_id, bucket: source.bucket, key: '', etag: '',
      format, input_kind: 'stream',
      transform: {
        ...(source.transform_config as object),
        ...Object.fromEntries(Object.entries({ id_field: opts.id_field, title_field: opts.title_field, body_field: opts.body_field, time_field: opts.time_field }).filter(([, v]) => v)),
      },
    });
    run.key = `${source.source_key}/${run.ingest_run_id}/${(opts.filename ?? 'stream').replace(/[^\w.-]+/g, '_')}`;
    const blob = await this.blobs.put(t, run.bucket, run.key, input, MAX_OBJECT_BYTES);
    run.etag = blob.etag;
    run.queued_at = now();
    this.runs.put(run);
    this.schedule(run);
    return publicRun(run);
  }

  get(caller: Caller, runId: string): IngestRun {
    return publicRun(this.runs.state(caller.tenant_id, runId));
  }

  list(caller: Caller, filter: Parameters<Runs['list']>[1]): IngestRun[] {
    return this.runs.list(caller.tenant_id, filter).map(publicRun);
  }

  /** Resolves once the run is ready or failed. */
  async wait(caller: Caller, runId: string): Promise<IngestRun> {
    const run = this.runs.state(caller.tenant_id, runId);
    await this.done.get(run.ingest_run_id);
    return this.get(caller, runId);
  }

  resume(tenantIds: string[]): void {
    for (const run of this.runs.unfinished(tenantIds)) this.schedule(run);
  }

  /** Waits for every scheduled run to end. */
  async drain(): Promise<void> {
    while (this.done.size > 0) await Promise.all(this.done.values());
  }

  private schedule(run: RunState): void {
    const key = `${run.tenant_id}/${run.dataset_id}`;
    const next = (this.chains.get(key) ?? Promise.resolve()).then(() => this.process(run));
    this.chains.set(key, next);
    this.done.set(run.ingest_run_id, next);
    next.finally(() => {
      this.done.delete(run.ingest_run_id);
      if (this.chains.get(key) === next) this.chains.delete(key);
    });
  }

  private async process(run: RunState): Promise<void> {
    const t = run.tenant_id;
    try {
      const source = this.sources.get(t, run.source_id);
      const index = this.text.get(t, run.dataset_id, source.search_config);
      run.status = 'running';
      run.started_at ??= now();
      run.lifecycle.state = 'running';
      run.documents.index_committed = run.documents.parsed;
      this.runs.put(run);
      if (statSync(this.blobs.path(t, run.bucket, run.key)).size === 0) {
        return this.fail(run, 'empty_object', 'the object is empty (0 bytes)', false);
      }
      await pipelineBatches(
        batches(this.blobs.read(t, run.bucket, run.key), run, source.source_key),
        (batch) => commitBatch(this.store, run, batch),
        (batch, added) => {
          index.add(added);
          run.documents.index_committed += batch.records.length;
        },
      );
    } catch (err) {
      if (err instanceof NotFound) return this.fail(run, 'not_found', err.message, false);
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return this.fail(run, 'object_missing', 'the stored object is missing', false);
      return this.fail(run, 'ingest_error', (err as Error).message, true);
    }
    const docs = run.documents;
    if (docs.parsed === 0) {
      const first = run.errors[0];
      const why = first ? `all ${docs.malformed} lines were malformed (line ${first.line}: ${first.reason})` : 'the object holds no records';
      return this.fail(run, docs.malformed > 0 ? 'no_valid_records' : 'no_records', why, false);
    }
    const at = now();
    Object.assign(run, { status: 'ready', completed_at: at, text_indexed_at: at });
    run.ready_for.text_search = true;
    run.lifecycle = { state: 'ready', repairable: false, reasons: docs.malformed > 0 ? [`${docs.malformed} malformed lines skipped`] : [] };
    this.runs.put(run);
    this.onIndexed(t, run.dataset_id);
  }

  private fail(run: RunState, code: string, message: string, repairable: boolean): void {
    const at = now();
    Object.assign(run, { status: 'failed', error_code: code, error_message: message, failed_at: at, completed_at: at });
    run.lifecycle = { state: 'failed', repairable, reasons: [message] };
    try {
      this.runs.put(run);
    } catch {
      // the dataset and its runs may be gone; nothing left to record
    }
  }
}
