import type { DataDeletionJob } from '../../api/jobs.js';
import type { Datasets } from '../datasets/datasets.js';
import { Conflict, NotFound } from '../errors.js';
import { now } from '../ids.js';
import type { Runs } from '../ingest/runs.js';
import type { Sources } from '../sources/sources.js';
import type { Store } from '../store/db.js';
import { sessionKey, type SessionState } from '../uploads/state.js';

export type Scope = 'dataset' | 'source' | 'object' | 'hosted_upload' | 'record';
export type Item = DataDeletionJob['items'][number];

/** What a data-deletion job removes, as its payload keeps it. */
export interface Target {
  scope: Scope;
  dataset_id: string;
  source_id: number | null;
  source_key: string | null;
  /** object and hosted_upload: the one object whose records go, and which goes with them */
  bucket?: string;
  key?: string;
  upload_session_id?: string;
  record_id?: string;
}

/** Same-tenant lookups only: another tenant's upload, object or record is as unknown as a missing one. */
export class Targets {
  constructor(
    private readonly store: Store,
    private readonly datasets: Datasets,
    private readonly sources: Sources,
    private readonly runs: Runs,
  ) {}

  source(t: string, sourceId: number): Target {
    const source = this.sources.get(t, sourceId);
    return { scope: 'source', dataset_id: source.dataset_id, source_id: sourceId, source_key: source.source_key };
  }

  /** An object the source ingested: a run of it says so (a stored blob alone was never indexed). */
  object(t: string, sourceId: number, key: string): Target {
    const source = this.sources.get(t, sourceId);
    this.writable(t, source.dataset_id);
    if (!this.objectRuns(t, sourceId, key)) throw new NotFound(`object '${key}' of source ${sourceId} not found`);
    return { scope: 'object', dataset_id: source.dataset_id, source_id: sourceId, source_key: source.source_key, bucket: source.bucket, key };
  }

  upload(t: string, sessionId: string): Target {
    const s: SessionState | undefined = this.store.meta.get(sessionKey(t, sessionId));
    if (!s) throw new NotFound(`upload session '${sessionId}' not found`);
    if (s.status !== 'completed') throw new Conflict(`upload session '${sessionId}' is ${s.status}: only a completed upload has records to delete (abort an open one)`);
    let source;
    try {
      source = this.sources.get(t, s.source_id);
    } catch {
      throw new NotFound(`upload session '${sessionId}' not found: its source was deleted with its data`);
    }
    this.writable(t, source.dataset_id);
    if (!this.objectRuns(t, s.source_id, s.key)) throw new NotFound(`upload session '${sessionId}' not found: its object was already deleted`);
    return {
      scope: 'hosted_upload', dataset_id: source.dataset_id, source_id: s.source_id, source_key: source.source_key,
      bucket: s.bucket, key: s.key, upload_session_id: sessionId,
    };
  }

  record(t: string, datasetId: string, recordId: string): Target {
    this.writable(t, datasetId);
    if (this.store.ids.get([t, datasetId, recordId]) === undefined) throw new NotFound(`record '${recordId}' not found in dataset '${datasetId}'`);
    return { scope: 'record', dataset_id: datasetId, source_id: null, source_key: null, record_id: recordId };
  }

  /** One item per object whose records go (removed with them), or one for a single record. */
  items(t: string, target: Target): Item[] {
    const at = now();
    const item = (i: number, type: string, of: Record<string, unknown>): Item => ({
      item_id: i + 1, item_type: type, status: 'pending', attempt_count: 0, next_attempt_at: null, started_at: null,
      completed_at: null, created_at: at, updated_at: at, error_message: null, target: { dataset_id: target.dataset_id, ...of }, result: {},
    });
    if (target.scope === 'record') return [item(0, 'record', { record_id: target.record_id })];
    if (target.key !== undefined) return [item(0, 'object_document', { bucket: target.bucket, key: target.key })];
    const objects = new Set(
      this.runs.list(t, { dataset_id: target.dataset_id, source_id: target.source_id ?? undefined, limit: Number.MAX_SAFE_INTEGER }).map((r) => `${r.bucket}\n${r.key}`),
    );
    return [...objects].map((object, i) => {
      const [bucket, key] = object.split('\n');
      return item(i, 'object_document', { bucket, key });
    });
  }

  /** 404 for an unknown dataset; 409 while the whole dataset is being deleted. */
  private writable(t: string, datasetId: string): void {
    if (this.datasets.state(t, datasetId).deleting) throw new Conflict(`dataset '${datasetId}' is being deleted`);
  }

  private objectRuns(t: string, sourceId: number, key: string): boolean {
    return this.runs.list(t, { source_id: sourceId, limit: Number.MAX_SAFE_INTEGER }).some((r) => r.key === key);
  }
}
