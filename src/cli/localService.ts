import { DatasetCreate } from '../api/datasets.js';
import { ExportCreate, ExportListQuery } from '../api/exports.js';
import { ApiKeyCreate, MemberCreate, PlatformKeyCreate, TenantCreate } from '../api/identity.js';
import { FieldQuery } from '../api/fields.js';
import { IngestOptions, RunListQuery } from '../api/ingest.js';
import { JobListQuery } from '../api/jobs.js';
import { ReindexCreate } from '../api/reindex.js';
import { SearchRequest } from '../api/search.js';
import { BackfillCreate } from '../api/semantic.js';
import { SqlRequest } from '../api/sql.js';
import { HostedSourcePut, SourcePut } from '../api/sources.js';
import { validate } from '../api/validate.js';
import { EndpointCreate } from '../api/endpoints.js';
import { DetectionCreate, DetectionListQuery, DetectionTest, HitListQuery } from '../api/detections.js';
import { ConnectionRequest, ConnectorSourcePut } from '../api/connectors.js';
import { ViewCreate, ViewListQuery, ViewRecordsQuery } from '../api/views.js';
import type { Caller } from '../engine/auth/caller.js';
import { NotFound } from '../engine/errors.js';
import type { Engine } from '../engine/index.js';
import type { Service } from './service.js';

const PROGRESS_INTERVAL_MS = 250;

/** Drops members left undefined by optional flags, as JSON over HTTP would. */
const strip = <T extends object>(o: T): T => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;

/** A request's nested search request stripped too (a view's, an export's). */
const stripSearch = <T extends { search_request?: SearchRequest | null }>(o: T): T => strip({ ...o, search_request: o.search_request ? strip(o.search_request) : o.search_request });

/**
 * A search id names a search kept in memory by the process that ran it; a local command is its own
 * process, so the id printed by an earlier `svc search` is gone by the time it is used here.
 */
function searchGoneLocally(err: unknown, searchId: string | undefined): unknown {
  if (!searchId || !(err instanceof NotFound) || !err.message.startsWith(`search '`)) return err;
  return new NotFound(
    `search '${searchId}' not found: in local mode a search lasts only as long as the command that ran it; give \`svc view create\` the search flags instead, or run \`svc serve\` so that search ids outlive their command`,
    err.code,
  );
}

/** The engine in this process, acting as the data dir's admin. */
export function localService(engine: Engine, caller: Caller): Service {
  return {
    mode: 'local',
    me: async () => engine.directory.me(caller),
    addMember: (req) => engine.identity.addMember(caller, validate(MemberCreate, req)),
    listMembers: async () => engine.identity.members(caller),
    createKey: (kind, req) =>
      kind === 'tenant'
        ? engine.identity.createApiKey(caller, validate(ApiKeyCreate, strip(req)))
        : engine.identity.createPlatformKey(caller, validate(PlatformKeyCreate, { name: req.name })),
    listKeys: async (kind) => (kind === 'tenant' ? engine.identity.apiKeys(caller) : engine.identity.platformKeys(caller)),
    revokeKey: (kind, id) => (kind === 'tenant' ? engine.identity.revokeApiKey(caller, id) : engine.identity.revokePlatformKey(caller, id)),
    createTenant: (req) => engine.tenants.create(caller, validate(TenantCreate, req)),
    listTenants: async () => engine.tenants.list(caller),
    deleteTenant: (id) => engine.tenants.delete(caller, id),
    createDataset: (req) => engine.datasets.create(caller, validate(DatasetCreate, strip(req))),
    listDatasets: async () => engine.datasets.list(caller),
    getDataset: async (id) => engine.datasets.get(caller, id),
    deleteDataset: (id) => engine.deletion.dataset(caller, id),
    getDeletionJob: async (id) => engine.deletion.get(caller, id),
    deleteUpload: (id) => engine.deletion.upload(caller, id),
    deleteObject: (sourceId, key) => engine.deletion.object(caller, sourceId, key),
    deleteRecord: (datasetId, recordId) => engine.deletion.record(caller, datasetId, recordId),
    putSource: (id, req) => engine.sources.put(caller, id, 'bucket' in req ? validate(SourcePut, strip(req)) : validate(HostedSourcePut, strip(req))),
    getSource: async (id) => engine.sources.get(caller.tenant_id, id),
    listSources: async (datasetId) => engine.sources.list(caller.tenant_id, datasetId),
    deleteSource: (id) => engine.deletion.source(caller, id),
    rotateIngestToken: (id) => engine.sources.rotateIngestToken(caller, id),
    revokeIngestToken: (id) => engine.sources.revokeIngestToken(caller, id),
    // the run is carried out by this process before it exits, --wait or not: say how it ended
    ingest: async (input, { dataset_id, source_key, ...options }, onProgress) => {
      const run = await engine.ingest.submit(caller, input, { ...validate(IngestOptions, strip(options), 'query'), dataset_id, source_key });
      const timer = onProgress && setInterval(() => onProgress(engine.ingest.get(caller, run.ingest_run_id)), PROGRESS_INTERVAL_MS);
      try {
        return await engine.ingest.wait(caller, run.ingest_run_id);
      } finally {
        clearInterval(timer);
      }
    },
    getRun: async (id) => engine.ingest.get(caller, id),
    listRuns: async (query) => engine.ingest.list(caller, validate(RunListQuery, strip(query), 'query')),
    waitRun: async (id, onProgress) => {
      const timer = onProgress && setInterval(() => onProgress(engine.ingest.get(caller, id)), PROGRESS_INTERVAL_MS);
      try {
        return await engine.ingest.wait(caller, id);
      } finally {
        clearInterval(timer);
      }
    },
    retryRun: (id) => engine.ingest.retry(caller, id),
    listJobs: async (query) => engine.jobs.list(caller.tenant_id, validate(JobListQuery, strip(query), 'query')),
    getJob: async (id) => engine.jobs.get(caller.tenant_id, id),
    cancelJob: (id) => engine.jobs.cancel(caller.tenant_id, id),
    waitJob: (id) => engine.jobs.settled(caller.tenant_id, id),
    reindex: (req) => engine.reindex.start(caller, validate(ReindexCreate, strip(req))),
    reindexJob: async (id) => engine.reindex.get(caller, id),
    cancelReindex: (id) => engine.reindex.cancel(caller, id),
    // the job runs in this process: waiting on it lets it run
    waitReindex: async (id, onProgress) => {
      const reindex = engine.reindex;
      const timer = onProgress && setInterval(() => onProgress(reindex.get(caller, id)), PROGRESS_INTERVAL_MS);
      try {
        await engine.jobs.settled(caller.tenant_id, reindex.get(caller, id).job_id);
        return reindex.get(caller, id);
      } finally {
        clearInterval(timer);
      }
    },
    search: (req) => engine.search.run(caller, validate(SearchRequest, strip(req))),
    backfillFilters: (req) => engine.semantic.backfill.start(caller, validate(BackfillCreate, strip(req))),
    getBackfill: async (id) => engine.semantic.backfill.get(caller, id),
    sql: (req) => engine.sql.query(caller, validate(SqlRequest, strip(req))),
    fields: async (query) => engine.fields.list(caller, validate(FieldQuery, strip(query), 'query')),
    createEndpoint: (req) => engine.endpoints.create(caller, validate(EndpointCreate, strip(req))),
    listEndpoints: async () => engine.endpoints.list(caller),
    getEndpoint: async (name) => engine.endpoints.get(caller, name),
    deleteEndpoint: (name) => engine.endpoints.remove(caller, name),
    runEndpoint: (name, params) => engine.endpoints.run(caller, name, params, 'query'),
    createDetection: (req) => engine.detections.create(caller, validate(DetectionCreate, strip(req))),
    listDetections: async (query) => engine.detections.list(caller, validate(DetectionListQuery, strip(query), 'query')),
    getDetection: async (id) => engine.detections.get(caller, id),
    updateDetection: (id, req) => engine.detections.update(caller, id, validate(DetectionCreate, strip(req))),
    deleteDetection: (id) => engine.detections.remove(caller, id),
    testDetection: (id, req) => engine.detections.test(caller, id, validate(DetectionTest, strip(req))),
    detectionHits: async (id, query) => engine.detections.hits(caller, id, validate(HitListQuery, strip(query), 'query')),
    connectorKinds: async () => engine.connectors.kinds(),
    putConnectorSource: (id, req) => engine.connectors.put(caller, id, validate(ConnectorSourcePut, strip(req))),
    getConnectorSource: async (id) => engine.connectors.get(caller, id),
    connectConnectorSource: (id, req) => engine.connectors.connect(caller, id, validate(ConnectionRequest, strip(req))),
    syncConnectorSource: (id) => engine.connectors.sync(caller, id),
    connectorSyncs: async (id) => engine.connectors.syncRuns(caller, id),
    connectorSync: async (id, runId) => engine.connectors.syncRun(caller, id, runId),
    createView: (req) => engine.views.create(caller, validate(ViewCreate, stripSearch(req))).catch((err) => Promise.reject(searchGoneLocally(err, req.from_search_id))),
    listViews: async (query) => engine.views.list(caller, validate(ViewListQuery, strip(query), 'query')),
    getView: async (id) => engine.views.get(caller, id),
    deleteView: (id) => engine.views.remove(caller, id),
    viewRecords: (id, query) => engine.views.records(caller, id, validate(ViewRecordsQuery, strip(query), 'query')),
    createExport: async (req) => engine.exports.create(caller, validate(ExportCreate, stripSearch(req))),
    listExports: async (query) => engine.exports.list(caller, validate(ExportListQuery, strip(query), 'query')),
    getExport: async (id) => engine.exports.get(caller, id),
    deleteExport: async (id) => engine.exports.delete(caller, id),
    // the export's job runs in this process: waiting on it lets it run
    waitExport: async (id, onProgress) => {
      const exports = engine.exports;
      const timer = onProgress && setInterval(() => onProgress(exports.get(caller, id)), PROGRESS_INTERVAL_MS);
      try {
        await engine.jobs.settled(caller.tenant_id, exports.get(caller, id).job_id);
        return exports.get(caller, id);
      } finally {
        clearInterval(timer);
      }
    },
    downloadExport: async (id) => engine.exports.open(caller, id),
    close: () => engine.close(),
  };
}
