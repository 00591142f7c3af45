import type { Export, ExportFormat } from '../../api/exports.js';
import type { SearchRequest } from '../../api/search.js';
import type { JobState } from '../jobs/queue.js';
import type { SqlValue } from '../sql/execute.js';
import type { Key } from '../store/db.js';
import { keys } from '../store/keys.js';

/** The blob bucket of export files, under each tenant. */
export const EXPORTS_BUCKET = 'exports';
export const EXPORT_JOB = 'export';
const DAY_MS = 86_400_000;

/** An export as stored under its tenant; its status is its job's. */
export interface ExportState {
  export_id: string;
  tenant_id: string;
  job_id: string;
  requested_by: string;
  name: string | null;
  format: ExportFormat;
  gzip: boolean;
  view_id: string | null;
  /** frozen by each attempt of the job as it starts: its file holds the records as they were then */
  search_request: SearchRequest | null;
  sql: string | null;
  params: SqlValue[];
  fields: string[] | null;
  /** rows written so far by the attempt in hand; all of them once completed */
  row_count: number;
  size_bytes: number | null;
  created_at: string;
  /** when the file was put in place */
  completed_at: string | null;
  /** the file's key in the exports bucket (`<export_id>.<ext>`); shown once the file is there */
  store_key: string;
}

export const exportKey = (t: string, id: string): Key => keys.export(t, id);
export const EXPORT_ID = /^exp_[0-9a-z]{26}$/;

export const EXTENSIONS: Record<ExportFormat, string> = { ndjson: 'ndjson', jsonl: 'jsonl', csv: 'csv', parquet: 'parquet' };
const CONTENT_TYPES: Record<ExportFormat, string> = { ndjson: 'application/x-ndjson', jsonl: 'application/jsonl', csv: 'text/csv', parquet: 'application/vnd.apache.parquet' };

export const fileExtension = (s: Pick<ExportState, 'format' | 'gzip'>) => EXTENSIONS[s.format] + (s.gzip ? '.gz' : '');
export const contentType = (s: Pick<ExportState, 'format' | 'gzip'>) => (s.gzip ? 'application/gzip' : CONTENT_TYPES[s.format]);

/** The export's status, from its job; an export whose job is gone kept its file only if it had completed. */
export function statusOf(s: ExportState, job: JobState | undefined): Export['status'] {
  if (!job) return s.completed_at ? 'completed' : 'failed';
  switch (job.status) {
    case 'succeeded':
      return s.completed_at ? 'completed' : 'failed';
    case 'pending':
      return job.attempts > 0 ? 'running' : 'pending'; // waiting to try again
    default:
      return job.status;
  }
}

/** When the export and its file go: the retention period after the job ended (null while it runs). */
export function expiresAt(s: ExportState, job: JobState | undefined, retentionDays: number): string | null {
  const ended = s.completed_at ?? (job && (job.status === 'failed' || job.status === 'cancelled') ? job.completed_at : null) ?? null;
  return ended ? new Date(Date.parse(ended) + retentionDays * DAY_MS).toISOString() : null;
}

/** The export as the API shows it; `download` when the caller can be handed a URL. */
export function describe(s: ExportState, job: JobState | undefined, retentionDays: number, download: { url: string; expires_at: string } | null = null): Export {
  const status = statusOf(s, job);
  const done = status === 'completed';
  return {
    export_id: s.export_id,
    job_id: s.job_id,
    name: s.name,
    status,
    format: s.format,
    gzip: s.gzip,
    view_id: s.view_id,
    search_request: s.search_request,
    sql: s.sql,
    row_count: s.row_count,
    size_bytes: done ? s.size_bytes : null,
    created_at: s.created_at,
    completed_at: done ? s.completed_at : null,
    download_url: done ? (download?.url ?? null) : null,
    download_expires_at: done ? (download?.expires_at ?? null) : null,
    store_bucket: done ? EXPORTS_BUCKET : null,
    store_key: done ? s.store_key : null,
    expires_at: expiresAt(s, job, retentionDays),
    error_message: status === 'failed' ? (job?.error_message ?? 'the export did not complete') : null,
  };
}
