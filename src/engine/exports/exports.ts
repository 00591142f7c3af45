import { createReadStream, statSync } from 'node:fs';
import type { Readable } from 'node:stream';
import type { DownloadQuery, Export, ExportCreate, ExportList, ExportListQuery } from '../../api/exports.js';
import type { Caller } from '../auth/caller.js';
import { safeName } from '../blobs/objectKey.js';
import type { BlobStore } from '../blobs/store.js';
import { Conflict, Invalid, NotFound } from '../errors.js';
import { newId, now } from '../ids.js';
import { isTerminal, type JobQueue, type JobState } from '../jobs/queue.js';
import type { Search } from '../search/search.js';
import type { Sql } from '../sql/sql.js';
import { newestFirst, scanPrefix, type Store } from '../store/db.js';
import { checkFields } from './columns.js';
import { downloadQuery, verifyDownload } from './downloadSigning.js';
import { ExportJob, workDirName } from './exportJob.js';
import type { ExportLimits } from './limits.js';
import { RowSources, type ViewSource } from './rows.js';
import { contentType, describe, EXPORT_ID, EXPORT_JOB, exportKey, expiresAt, EXPORTS_BUCKET, fileExtension, statusOf, type ExportState } from './state.js';
import { keys } from '../store/keys.js';

/** An export's file, opened for reading. */
export interface OpenedExport { body: Readable; content_type: string; filename: string; size: number }

export interface ExportsDeps {
  store: Store;
  jobs: JobQueue;
  blobs: BlobStore;
  search: Search;
  sql: Sql;
  /** the data dir's secret: it signs download URLs */
  secret: Buffer;
  /** every tenant's id, for the retention sweep */
  tenants: () => string[];
  /** the views an export may name */
  views: ViewSource;
  limits: ExportLimits;
}

const SOURCES = ['view_id', 'search_request', 'sql'] as const;
const DEFAULT_LIST = 50;
/** An export still without a job this long after it was made never gets one: the sweep removes it. */
const ORPHAN_MS = 3600_000;

/**
 * Exports: a search's records, a view's or a statement's rows written whole to one file in the
 * tenant's blob store by a durable job, then handed out by a signed URL of this server (or opened
 * directly by a local command). The export lives under its tenant (`[tenant, 'export', id]`); its
 * status is its job's. Files go with their export, their tenant, and after the retention period.
 */
export class Exports {
  readonly limits: ExportLimits;
  private readonly store: Store;
  private readonly jobs: JobQueue;
  private readonly blobs: BlobStore;

  constructor(private readonly deps: ExportsDeps) {
    ({ store: this.store, jobs: this.jobs, blobs: this.blobs } = deps);
    this.limits = deps.limits;
    const sources = new RowSources(deps.search, deps.sql, deps.views, () => deps.sql.indexes.limits.timeoutMs * this.limits.sqlTimeoutFactor);
    const job = new ExportJob(deps.store, deps.blobs, deps.jobs.space, sources, this.limits, () => deps.jobs.stopping);
    // one export at a time: a long one must leave the queue's other slot to ingestion and upkeep
    deps.jobs.register(EXPORT_JOB, { handler: (j, ctx) => job.run(j, ctx), maxAttempts: 5, serialKey: () => EXPORT_JOB });
  }

  /**
   * Checks what the export names — a statement as a query would check it, a search's q and
   * datasets, a view's existence — before any job is made, and queues the job. A search is frozen
   * by each attempt of the job, not here: records re-ingested before it runs have new seqs.
   */
  async create(caller: Caller, req: ExportCreate): Promise<Export> {
    const t = caller.tenant_id;
    const format = req.format ?? 'ndjson';
    checkRequest(req, format);
    if (req.sql !== undefined) await this.deps.sql.check(caller, req.sql, req.params ?? []);
    else if (req.search_request !== undefined) {
      this.deps.search.check(req.search_request);
      this.deps.search.freeze(caller, req.search_request); // 404 for a dataset that does not exist; the job freezes it again
    } else this.deps.views.get(caller, req.view_id!);
    const id = newId('exp');
    const gzip = req.gzip ?? false;
    const s: ExportState = {
      export_id: id, tenant_id: t, job_id: '', requested_by: caller.user_id, name: req.name ?? null, format, gzip,
      view_id: req.view_id ?? null, search_request: req.search_request ?? null, sql: req.sql ?? null, params: req.params ?? [],
      fields: req.fields ?? null, row_count: 0, size_bytes: null, created_at: now(), completed_at: null,
      store_key: `${id}.${fileExtension({ format, gzip })}`,
    };
    // the export first: its job finds it however soon it runs
    await this.store.meta.put(exportKey(t, id), s);
    let job: JobState;
    try {
      job = await this.jobs.enqueue(t, EXPORT_JOB, { export_id: id });
    } catch (err) {
      // no job will ever run it; what this cannot remove (a full disk) the sweep removes
      await this.store.meta.remove(exportKey(t, id)).catch(() => {});
      throw err;
    }
    const linked = await this.store.meta.transaction(() => {
      const cur: ExportState | undefined = this.store.meta.get(exportKey(t, id));
      if (cur) this.store.meta.put(exportKey(t, id), { ...cur, job_id: job.job_id });
      return cur ? { ...cur, job_id: job.job_id } : { ...s, job_id: job.job_id };
    });
    return describe(linked, this.jobOf(linked), this.limits.retentionDays);
  }

  /** The tenant's exports, newest first (with download URLs of `origin` as `get` gives them); `next_cursor` continues after the last one listed. */
  list(caller: Caller, q: ExportListQuery, origin?: string): ExportList {
    const t = caller.tenant_id;
    if (q.cursor !== undefined && !EXPORT_ID.test(q.cursor)) {
      throw new Invalid('invalid cursor', [{ loc: ['query', 'cursor'], msg: 'not a cursor of this list', type: 'value_error', input: q.cursor }]);
    }
    const page = newestFirst<ExportState>(this.store.meta, keys.export(t), q.cursor, q.limit ?? DEFAULT_LIST);
    return { exports: page.values.map((s) => this.described(s, origin)), next_cursor: page.next };
  }

  /** One export; once completed, with a download URL of `origin` (this server) when one is given. */
  get(caller: Caller, exportId: string, origin?: string): Export {
    return this.described(this.state(caller.tenant_id, exportId), origin);
  }

  /** Deletes an export and its file; a job still running is cancelled first (it removes what it was writing). */
  async delete(caller: Caller, exportId: string): Promise<Export> {
    const t = caller.tenant_id;
    const s = this.state(t, exportId);
    let job = this.jobOf(s);
    if (job && !isTerminal(job.status)) {
      try {
        job = await this.jobs.cancel(t, job.job_id);
      } catch (err) {
        if (!(err instanceof Conflict)) throw err;
        job = this.jobOf(s); // it ended meanwhile
      }
    }
    await this.remove(s);
    return describe(s, job, this.limits.retentionDays);
  }

  /** The file of a completed export, for a caller of its tenant (a local command's download). */
  open(caller: Caller, exportId: string): OpenedExport {
    return this.opened(this.state(caller.tenant_id, exportId));
  }

  /** The file a signed download URL names: 403 when the signature fails or has expired, 404 when the export is gone. */
  download(exportId: string, q: DownloadQuery): OpenedExport {
    const { tenant } = verifyDownload(this.deps.secret, exportId, q);
    return this.opened(this.state(tenant, exportId));
  }

  /**
   * Removes the exports (and files) whose retention period is over, and those left without a job
   * an hour after they were made (the process died, or the disk was full, before their job was
   * queued): nothing would ever run them. Returns how many went.
   */
  async sweep(nowMs = Date.now()): Promise<number> {
    let removed = 0;
    for (const t of this.deps.tenants()) {
      const due: ExportState[] = [];
      for (const { value } of scanPrefix(this.store.meta, keys.export(t))) {
        const s = value as ExportState;
        const job = this.jobOf(s);
        const at = expiresAt(s, job, this.limits.retentionDays);
        const orphan = !job && !s.completed_at && Date.parse(s.created_at) + ORPHAN_MS <= nowMs;
        if (orphan || (at !== null && Date.parse(at) <= nowMs && (!job || isTerminal(job.status)))) due.push(s);
      }
      for (const s of due) await this.remove(s);
      removed += due.length;
    }
    return removed;
  }

  private async remove(s: ExportState): Promise<void> {
    await this.store.meta.remove(exportKey(s.tenant_id, s.export_id));
    this.blobs.remove(s.tenant_id, EXPORTS_BUCKET, s.store_key);
    this.blobs.removeWorkDir(s.tenant_id, workDirName(s.export_id));
  }

  private opened(s: ExportState): OpenedExport {
    const status = statusOf(s, this.jobOf(s));
    if (status !== 'completed') throw new Conflict(`export '${s.export_id}' is ${status}: it has no file to download`);
    const path = this.blobs.path(s.tenant_id, EXPORTS_BUCKET, s.store_key);
    let size: number;
    try {
      size = statSync(path).size;
    } catch {
      throw new NotFound(`the file of export '${s.export_id}' is gone`);
    }
    const filename = `${safeName(s.name ?? undefined, s.export_id)}.${fileExtension(s)}`;
    return { body: createReadStream(path, { highWaterMark: 1 << 20 }), content_type: contentType(s), filename, size };
  }

  private described(s: ExportState, origin?: string): Export {
    const job = this.jobOf(s);
    return describe(s, job, this.limits.retentionDays, origin && statusOf(s, job) === 'completed' ? this.downloadUrl(s, job, origin) : null);
  }

  /** A URL valid for the configured time, never past the export's own end. */
  private downloadUrl(s: ExportState, job: JobState | undefined, origin: string): { url: string; expires_at: string } {
    const end = expiresAt(s, job, this.limits.retentionDays);
    const expires = Math.min(Math.ceil(Date.now() / 1000) + this.limits.urlSeconds, end ? Math.floor(Date.parse(end) / 1000) : Infinity);
    const query = downloadQuery(this.deps.secret, { tenant: s.tenant_id, export_id: s.export_id, expires });
    return { url: `${origin}/v1/export/${s.export_id}/download?${query}`, expires_at: new Date(expires * 1000).toISOString() };
  }

  private state(t: string, exportId: string): ExportState {
    const s: ExportState | undefined = EXPORT_ID.test(exportId) ? this.store.meta.get(exportKey(t, exportId)) : undefined;
    if (!s) throw new NotFound(`export '${exportId}' not found`);
    return s;
  }

  private jobOf(s: ExportState): JobState | undefined {
    return s.job_id ? this.store.meta.get(keys.job(s.tenant_id, s.job_id)) : undefined;
  }
}

/** Exactly one source; parameters only with a statement; columns only for CSV and Parquet of records. */
function checkRequest(req: ExportCreate, format: string): void {
  const chosen = SOURCES.filter((k) => req[k] !== undefined);
  if (chosen.length !== 1) {
    const msg = `exactly one of view_id, search_request and sql is required; ${chosen.length === 0 ? 'none was' : `${chosen.join(' and ')} were`} given`;
    throw new Invalid(msg, (chosen.length === 0 ? [...SOURCES] : chosen).map((k) => ({ loc: ['body', k], msg, type: 'value_error' })));
  }
  if (req.params !== undefined && req.sql === undefined) throw invalid('params', 'params are the parameters of sql: give them with sql only', req.params);
  if (req.fields === undefined) return;
  if (req.sql !== undefined) throw invalid('fields', "the columns of a sql export are the statement's own: select them in the statement", req.fields);
  if (format === 'ndjson' || format === 'jsonl') throw invalid('fields', `fields select the columns of a csv or parquet export; ${format} writes whole records`, req.fields);
  checkFields(req.fields);
}

const invalid = (member: string, msg: string, input: unknown) => new Invalid(msg, [{ loc: ['body', member], msg, type: 'value_error', input }]);
