import { randomBytes } from 'node:crypto';
import type { IngestRun } from '../../api/ingest.js';
import { DiskFull, NotFound } from '../errors.js';
import { newId, now } from '../ids.js';
import { type IngestFormat, type TransformConfig, TRANSFORM_VERSION } from '../records.js';
import { scanPrefix, type Store } from '../store/db.js';
import { keys } from '../store/keys.js';

export const MAX_REPORTED_ERRORS = 100;

/** What the store keeps of a run: the API shape plus what a resumed run needs. */
export interface RunState extends IngestRun {
  transform: TransformConfig;
  /** last source line whose record is committed: a resumed run skips up to here */
  resume_line: number;
  /** when the object was first ingested, for a run that parses it again: a text line's time without a year is read near it */
  ingested_at?: string;
  /** the job that processes the run */
  job_id?: string;
  /** what the ingest request named over the source's config (format, fields): a reindex parses the object again with them */
  requested?: RequestedParse;
  /**
   * Set on a run that parses an object again (a reindex): the dataset's last seq before it began.
   * Each record it makes is written anew, and the object's records at or below this seq that it
   * did not make again are removed when it ends.
   */
  reparse_from_seq?: number;
  /** the dataset's last seq when the reindex listed its objects: a record another object made after it is theirs, and stays */
  reparse_manifest_seq?: number;
  /** the transform version the run's records were made with (absent: version 1) */
  transform_version?: number;
}

export interface RequestedParse { format?: string; filename?: string; id_field?: string; title_field?: string; body_field?: string; time_field?: string }

/**
 * The etag a run reads its object under when its lines must be records of their own: a record's
 * id otherwise comes from the object's content and line, and equal bytes sent again are the same records.
 */
export const distinctEtag = (etag: string) => `${etag}-${randomBytes(8).toString('hex')}`;

export const isTerminalRun = (run: IngestRun) => run.status === 'ready' || run.status === 'failed';

export function newRun(fields: {
  tenant_id: string;
  dataset_id: string;
  source_id: number;
  bucket: string;
  key: string;
  etag: string;
  format: IngestFormat;
  input_kind: string;
  upload_session_id?: string | null;
  transform: TransformConfig;
  requested?: RequestedParse;
}): RunState {
  const at = now();
  return {
    ingest_run_id: newId('run'),
    ...fields,
    transform_version: TRANSFORM_VERSION,
    upload_session_id: fields.upload_session_id ?? null,
    connector_run_id: null,
    ingest_failure_id: null,
    reindex_job_id: null,
    status: 'queued',
    error_code: null,
    error_message: null,
    documents: {
      expected: 0, parsed: 0, schema_observed: 0, index_committed: 0,
      semantic_embedded: 0, semantic_failed: 0, semantic_total: 0, malformed: 0, duplicates: 0,
    },
    errors: [],
    lifecycle: { reasons: [], repairable: false, state: 'queued' },
    ready_for: { text_search: false, sql_search: false, semantic_search: false },
    created_at: at,
    queued_at: at,
    started_at: null,
    completed_at: null,
    failed_at: null,
    text_indexed_at: null,
    semantic_ready_at: null,
    updated_at: at,
    resume_line: 0,
  };
}

/** A copy of the run as the API shows it: the live run goes on changing while a reply is written. */
export function publicRun(run: RunState): IngestRun {
  const { transform: _t, resume_line: _r, job_id: _j, ingested_at: _i, transform_version: _v, ...pub } = run;
  // a format named by a synonym (jsonl for ndjson) is echoed as it was given
  const named = run.requested?.format;
  return structuredClone(named && named !== run.format ? { ...pub, format: named } : pub);
}

/** A run that failed for want of disk space: its job brings it back once there is room. */
export const waitsForSpace = (run: IngestRun) => run.status === 'failed' && run.error_code === 'disk_full';

export class Runs {
  /**
   * Failed runs whose failure could not be stored (the disk was full), by `tenant/run`: readers see
   * it — a run that failed for want of space says so — until a later write of the run succeeds.
   */
  private readonly unsaved = new Map<string, RunState>();

  constructor(private readonly store: Store) {}

  state(tenantId: string, runId: string): RunState {
    const unsaved = this.unsaved.get(`${tenantId}/${runId}`);
    if (unsaved) return structuredClone(unsaved);
    return this.committed(tenantId, runId);
  }

  /** The run, or undefined when there is none by that id. */
  find(tenantId: string, runId: string): RunState | undefined {
    try {
      return this.state(tenantId, runId);
    } catch (err) {
      if (err instanceof NotFound) return undefined;
      throw err;
    }
  }

  /** The run as the store holds it: counters of committed batches only. */
  committed(tenantId: string, runId: string): RunState {
    const run = this.store.meta.get(keys.run(tenantId, runId));
    if (!run) throw new NotFound(`ingest run '${runId}' not found`);
    return run;
  }

  /** Stores the run, unless its dataset is gone (deleted while the run went on). */
  put(run: RunState): void {
    run.updated_at = now();
    const key = `${run.tenant_id}/${run.ingest_run_id}`;
    try {
      this.store.meta.transactionSync(() => {
        if (this.store.meta.get(keys.dataset(run.tenant_id, run.dataset_id))) this.store.meta.put(keys.run(run.tenant_id, run.ingest_run_id), run);
      });
    } catch (err) {
      if (err instanceof DiskFull && run.status === 'failed') this.unsaved.set(key, structuredClone(run));
      throw err;
    }
    this.unsaved.delete(key);
  }

  list(tenantId: string, filter: { dataset_id?: string; source_id?: number; status?: string; limit?: number }): RunState[] {
    const out: RunState[] = [];
    for (let { value } of scanPrefix<RunState>(this.store.meta, keys.run(tenantId), { reverse: true })) {
      value = this.unsaved.get(`${tenantId}/${value.ingest_run_id}`) ?? value;
      if (filter.dataset_id !== undefined && value.dataset_id !== filter.dataset_id) continue;
      if (filter.source_id !== undefined && value.source_id !== filter.source_id) continue;
      if (filter.status !== undefined && value.status !== filter.status) continue;
      out.push(value);
      if (out.length >= (filter.limit ?? 50)) break;
    }
    return out;
  }
}
