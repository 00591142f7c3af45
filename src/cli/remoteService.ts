import { basename } from 'node:path';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Agent } from 'undici';
import type { Export } from '../api/exports.js';
import type { IngestRun } from '../api/ingest.js';
import type { Job } from '../api/jobs.js';
import type { ReindexJob } from '../api/reindex.js';
import { Conflict, Unavailable } from '../engine/errors.js';
import { responseError } from './responseError.js';
import type { ExportFile, Service } from './service.js';
import { uploadFile } from './upload.js';

const RETRIES_ON_503 = 3;
const POLL_MIN_MS = 200;
const POLL_MAX_MS = 2000;

export interface RemoteOptions {
  url: string;
  token: string;
  /** the tenant header, or how to find it: asked for by the first request that needs one */
  tenant?: string | (() => Promise<string | undefined>);
}

/** Routes that take no tenant header: who the token is, and what a platform key does for its platform. */
const UNSCOPED = /^\/v1\/(me$|platform\/)/;

/** Polls with backoff, no faster than the spec's guidance allows once a wait drags on. */
async function poll<T>(get: () => Promise<T>, done: (t: T) => boolean, onProgress?: (t: T) => void): Promise<T> {
  for (let delay = POLL_MIN_MS; ; delay = Math.min(delay * 2, POLL_MAX_MS)) {
    const value = await get();
    if (done(value)) return value;
    onProgress?.(value);
    await sleep(delay);
  }
}

const EXPORT_ENDED = ['completed', 'failed', 'cancelled'];
const JOB_ENDED = ['succeeded', 'failed', 'cancelled'];

/** The file name a download's Content-Disposition gives (only its last part: never a path), else one made from the export. */
function filenameOf(disposition: string | string[] | undefined, exp: Export): string {
  const header = Array.isArray(disposition) ? disposition[0] : disposition ?? '';
  const m = /filename\*=UTF-8''([^;]+)/i.exec(header) ?? /filename="?([^";]+)"?/i.exec(header);
  const name = m ? basename(decodeURIComponent(m[1]).replace(/\\/g, '/')) : '';
  return name && name !== '.' && name !== '..' ? name : `${exp.export_id}.${exp.format}${exp.gzip ? '.gz' : ''}`;
}

/** svc behind a server: the same calls over /v1 with undici (keep-alive, timeouts, retry on 503). */
export function remoteService(opts: RemoteOptions): Service {
  const base = opts.url.replace(/\/+$/, '');
  let tenant: Promise<string | undefined> | undefined;
  const tenantFor = (path: string) => (UNSCOPED.test(path) ? undefined : (tenant ??= typeof opts.tenant === 'function' ? opts.tenant() : Promise.resolve(opts.tenant)));
  let client: Promise<{ agent: Agent; request: typeof import('undici').request }> | undefined;
  // undici loads on the first call, so that local commands do not pay for it at start-up
  const connection = () =>
    (client ??= import('undici').then(({ Agent, request }) => ({
      agent: new Agent({ keepAliveTimeout: 10_000, headersTimeout: 120_000, bodyTimeout: 120_000, connectTimeout: 10_000 }),
      request,
    })));

  async function call<T>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown, query?: Record<string, unknown>): Promise<T> {
    const url = new URL(base + path);
    for (const [k, v] of Object.entries(query ?? {})) for (const one of [v].flat()) if (one !== undefined && one !== null) url.searchParams.append(k, String(one));
    const streaming = body !== undefined && typeof (body as AsyncIterable<Buffer>)[Symbol.asyncIterator] === 'function';
    const headers: Record<string, string> = { authorization: `Bearer ${opts.token}`, accept: 'application/json' };
    const scoped = await tenantFor(path);
    if (scoped) headers['x-service-tenant-id'] = scoped;
    if (body !== undefined) headers['content-type'] = streaming ? 'application/octet-stream' : 'application/json';
    const { agent, request } = await connection();
    for (let attempt = 0; ; attempt++) {
      let res;
      try {
        res = await request(url, {
          method,
          headers,
          body: streaming ? Readable.from(body as AsyncIterable<Buffer>) : body === undefined ? undefined : JSON.stringify(body),
          dispatcher: agent,
          bodyTimeout: streaming ? 0 : undefined,
        });
      } catch (err) {
        throw new Unavailable(`cannot reach ${base}: ${(err as Error).message}`);
      }
      const text = await res.body.text();
      const parsed = text ? JSON.parse(text) : undefined;
      if (res.statusCode < 300) return parsed as T;
      if (res.statusCode === 503 && !streaming && attempt < RETRIES_ON_503) {
        await sleep(250 * 2 ** attempt);
        continue;
      }
      throw responseError(res.statusCode, parsed);
    }
  }

  const exportPath = (id: string) => `/v1/export/${encodeURIComponent(id)}`;
  const reindexPath = (id: string) => `/v1/admin/reindex/jobs/${encodeURIComponent(id)}`;
  const connectorPath = (id: number) => `/v1/admin/connector-sources/${id}`;
  const detectionPath = (id: string) => `/v1/admin/detections/${encodeURIComponent(id)}`;

  /** The file behind a completed export's signed URL: the signature is the credential, so no token is sent. */
  async function download(id: string): Promise<ExportFile> {
    const exp = await call<Export>('GET', exportPath(id));
    if (exp.status !== 'completed' || !exp.download_url) throw new Conflict(`export '${id}' is ${exp.status}: it has no file to download${exp.status === 'failed' ? `: ${exp.error_message}` : ''}`);
    const { agent, request } = await connection();
    let res;
    try {
      res = await request(new URL(exp.download_url, base + '/'), { method: 'GET', dispatcher: agent });
    } catch (err) {
      throw new Unavailable(`cannot reach ${base}: ${(err as Error).message}`);
    }
    if (res.statusCode >= 300) {
      const body = await res.body.json().catch(() => undefined);
      throw responseError(res.statusCode, body);
    }
    const type = res.headers['content-type'];
    return { body: res.body, filename: filenameOf(res.headers['content-disposition'], exp), content_type: (Array.isArray(type) ? type[0] : type) ?? 'application/octet-stream' };
  }

  return {
    mode: 'remote',
    me: () => call('GET', '/v1/me'),
    addMember: (req) => call('POST', '/v1/admin/members', req),
    listMembers: async () => (await call<{ members: any[] }>('GET', '/v1/admin/members')).members,
    createKey: (kind, req) => (kind === 'tenant' ? call('POST', '/v1/admin/api-keys', req) : call('POST', '/v1/admin/platform-keys', { name: req.name })),
    listKeys: async (kind) =>
      kind === 'tenant'
        ? (await call<{ api_keys: any[] }>('GET', '/v1/admin/api-keys')).api_keys
        : (await call<{ platform_keys: any[] }>('GET', '/v1/admin/platform-keys')).platform_keys,
    revokeKey: (kind, id) => call('DELETE', `/v1/admin/${kind === 'tenant' ? 'api-keys' : 'platform-keys'}/${id}`),
    createTenant: (req) => call('POST', '/v1/platform/tenants', req),
    listTenants: async () => (await call<{ tenants: any[] }>('GET', '/v1/platform/tenants')).tenants,
    deleteTenant: (id) => call('DELETE', `/v1/platform/tenants/${encodeURIComponent(id)}`),
    createDataset: (req) => call('POST', '/v1/admin/datasets', req),
    listDatasets: async () => (await call<{ datasets: any[] }>('GET', '/v1/datasets')).datasets,
    getDataset: (id) => call('GET', `/v1/datasets/${encodeURIComponent(id)}`),
    deleteDataset: (id) => call('DELETE', `/v1/admin/datasets/${encodeURIComponent(id)}`),
    getDeletionJob: (id) => call('GET', `/v1/admin/data-deletion-jobs/${encodeURIComponent(id)}`),
    deleteUpload: (id) => call('DELETE', `/v1/admin/uploads/${encodeURIComponent(id)}`),
    deleteObject: (sourceId, key) => call('DELETE', '/v1/admin/objects', undefined, { source_id: sourceId, key }),
    deleteRecord: (datasetId, recordId) => call('DELETE', `/v1/admin/datasets/${encodeURIComponent(datasetId)}/records/${encodeURIComponent(recordId)}`),
    putSource: (id, req) => call('PUT', `/v1/admin/${'bucket' in req ? 'sources' : 'hosted-sources'}/${id}`, req),
    getSource: (id) => call('GET', `/v1/admin/sources/${id}`),
    listSources: async (datasetId) => (await call<{ sources: any[] }>('GET', '/v1/admin/sources', undefined, { dataset_id: datasetId })).sources,
    deleteSource: (id) => call('DELETE', `/v1/admin/sources/${id}`),
    rotateIngestToken: (id) => call('POST', `/v1/admin/sources/${id}/ingest-token`),
    revokeIngestToken: (id) => call('DELETE', `/v1/admin/sources/${id}/ingest-token`),
    ingest: (input, { dataset_id, source_key, path, size, ...options }) => {
      const source = `/v1/ingest/sources/${encodeURIComponent(source_key ?? dataset_id)}`;
      // a file has a size and can be cut into parts sent side by side; stdin goes as one stream
      return path ? uploadFile(call, source, input, { ...options, size }) : call('POST', `${source}/stream`, input, options);
    },
    getRun: (id) => call('GET', `/v1/ingest/runs/${encodeURIComponent(id)}`),
    listRuns: async (query) => (await call<{ runs: IngestRun[] }>('GET', '/v1/ingest/runs', undefined, query)).runs,
    waitRun: (id, onProgress) => poll(() => call<IngestRun>('GET', `/v1/ingest/runs/${encodeURIComponent(id)}`), (r) => r.status === 'ready' || r.status === 'failed', onProgress),
    retryRun: (id) => call('POST', `/v1/ingest/runs/${encodeURIComponent(id)}/retry`),
    listJobs: async (query) => (await call<{ jobs: Job[] }>('GET', '/v1/admin/jobs', undefined, query)).jobs,
    getJob: (id) => call('GET', `/v1/admin/jobs/${encodeURIComponent(id)}`),
    cancelJob: (id) => call('POST', `/v1/admin/jobs/${encodeURIComponent(id)}/cancel`),
    waitJob: (id, onProgress) => poll(() => call<Job>('GET', `/v1/admin/jobs/${encodeURIComponent(id)}`), (j) => JOB_ENDED.includes(j.status), onProgress),
    reindex: (req) => call('POST', '/v1/admin/reindex/jobs', req),
    reindexJob: (id) => call('GET', reindexPath(id)),
    cancelReindex: (id) => call('POST', `${reindexPath(id)}/cancel`),
    waitReindex: (id, onProgress) => poll(() => call<ReindexJob>('GET', reindexPath(id)), (j) => JOB_ENDED.includes(j.status), onProgress),
    search: (req) => call('POST', '/v1/search', req),
    backfillFilters: (req) => call('POST', '/v1/admin/semantic/filters/backfill', req),
    getBackfill: (id) => call('GET', `/v1/admin/semantic/filters/backfill/${encodeURIComponent(id)}`),
    sql: (req) => call('POST', '/v1/sql', req),
    fields: async (query) => (await call<{ fields: any[] }>('GET', '/v1/admin/fields', undefined, query)).fields,
    createEndpoint: (req) => call('POST', '/v1/admin/query-endpoints', req),
    listEndpoints: () => call('GET', '/v1/admin/query-endpoints'),
    getEndpoint: (name) => call('GET', `/v1/admin/query-endpoints/${encodeURIComponent(name)}`),
    deleteEndpoint: (name) => call('DELETE', `/v1/admin/query-endpoints/${encodeURIComponent(name)}`),
    runEndpoint: (name, params) => call('GET', `/v1/query-endpoints/${encodeURIComponent(name)}`, undefined, params),
    createDetection: (req) => call('POST', '/v1/admin/detections', req),
    listDetections: (query) => call('GET', '/v1/admin/detections', undefined, query),
    getDetection: (id) => call('GET', detectionPath(id)),
    updateDetection: (id, req) => call('PUT', detectionPath(id), req),
    deleteDetection: (id) => call('DELETE', detectionPath(id)),
    testDetection: (id, req) => call('POST', `${detectionPath(id)}/test`, req),
    detectionHits: (id, query) => call('GET', `/v1/detections/${encodeURIComponent(id)}/hits`, undefined, query),
    connectorKinds: () => call('GET', '/v1/admin/connectors'),
    putConnectorSource: (id, req) => call('PUT', connectorPath(id), req),
    getConnectorSource: (id) => call('GET', connectorPath(id)),
    connectConnectorSource: (id, req) => call('POST', `${connectorPath(id)}/connection`, req),
    syncConnectorSource: (id) => call('POST', `${connectorPath(id)}/sync`),
    connectorSyncs: (id) => call('GET', `${connectorPath(id)}/syncs`),
    connectorSync: (id, runId) => call('GET', `${connectorPath(id)}/syncs/${encodeURIComponent(runId)}`),
    createView: (req) => call('POST', '/v1/views', req),
    listViews: (query) => call('GET', '/v1/views', undefined, query),
    getView: (id) => call('GET', `/v1/views/${encodeURIComponent(id)}`),
    deleteView: (id) => call('DELETE', `/v1/views/${encodeURIComponent(id)}`),
    viewRecords: (id, query) => call('GET', `/v1/views/${encodeURIComponent(id)}/records`, undefined, query),
    createExport: (req) => call('POST', '/v1/export', req),
    listExports: (query) => call('GET', '/v1/export', undefined, query),
    getExport: (id) => call('GET', exportPath(id)),
    deleteExport: (id) => call('DELETE', exportPath(id)),
    waitExport: (id, onProgress) => poll(() => call<Export>('GET', exportPath(id)), (e) => EXPORT_ENDED.includes(e.status), onProgress),
    downloadExport: download,
    close: async () => {
      if (client) await (await client).agent.close();
    },
  };
}
