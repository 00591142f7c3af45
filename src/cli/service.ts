import type { Dataset, DatasetCreate } from '../api/datasets.js';
import type { Field, FieldQuery } from '../api/fields.js';
import type { ApiKey, ApiKeyCreate, Me, Member, MemberCreate, PlatformKey, Tenant, TenantCreate } from '../api/identity.js';
import type { Export, ExportCreate, ExportList, ExportListQuery } from '../api/exports.js';
import type { DataDeletionJob, Job, JobListQuery } from '../api/jobs.js';
import type { IngestOptions, IngestRun, RunListQuery } from '../api/ingest.js';
import type { ReindexCreate, ReindexJob } from '../api/reindex.js';
import type { SearchEnvelope, SearchRequest } from '../api/search.js';
import type { BackfillCreate, BackfillJob } from '../api/semantic.js';
import type { SqlEnvelope, SqlRequest } from '../api/sql.js';
import type { HostedSourcePut, IngestTokenMinted, Source, SourcePut } from '../api/sources.js';
import type { Endpoint, EndpointCreate, EndpointList } from '../api/endpoints.js';
import type { Detection, DetectionCreate, DetectionList, DetectionListQuery, DetectionTest, DetectionTestResult, HitList, HitListQuery } from '../api/detections.js';
import type { SearchEnvelope as EndpointSearchAnswer } from '../api/search.js';
import type { SqlEnvelope as EndpointSqlAnswer } from '../api/sql.js';
import type { ConnectionRequest, ConnectorList, ConnectorRun, ConnectorSourcePut, IntegrationConnection } from '../api/connectors.js';
import type { View, ViewCreate, ViewList, ViewListQuery, ViewRecords, ViewRecordsQuery } from '../api/views.js';

/** A completed export's file, as a stream to read once. */
export interface ExportFile {
  body: AsyncIterable<Buffer>;
  filename: string;
  content_type: string;
}

export type KeyKind = 'tenant' | 'platform';

/** `path` and `size` are set when the input is a file: remote mode then sends it as a multipart upload. */
export type IngestTarget = IngestOptions & { dataset_id: string; source_key?: string; path?: string; size?: number };

/** What every command can ask of svc, whether the engine runs in this process or behind a server. */
export interface Service {
  readonly mode: 'local' | 'remote';
  me(): Promise<Me>;
  addMember(req: MemberCreate): Promise<Member>;
  listMembers(): Promise<Member[]>;
  createKey(kind: KeyKind, req: ApiKeyCreate): Promise<ApiKey | PlatformKey>;
  listKeys(kind: KeyKind): Promise<(ApiKey | PlatformKey)[]>;
  revokeKey(kind: KeyKind, id: number): Promise<ApiKey | PlatformKey>;
  createTenant(req: TenantCreate): Promise<Tenant>;
  listTenants(): Promise<Tenant[]>;
  deleteTenant(tenantId: string): Promise<DataDeletionJob>;
  createDataset(req: DatasetCreate): Promise<Dataset>;
  listDatasets(): Promise<Dataset[]>;
  getDataset(datasetId: string): Promise<Dataset>;
  deleteDataset(datasetId: string): Promise<DataDeletionJob>;
  getDeletionJob(jobId: string): Promise<DataDeletionJob>;
  /** the records of one completed upload, and its object */
  deleteUpload(uploadSessionId: string): Promise<DataDeletionJob>;
  /** the records of one object a source ingested, and the object */
  deleteObject(sourceId: number, key: string): Promise<DataDeletionJob>;
  deleteRecord(datasetId: string, recordId: string): Promise<DataDeletionJob>;
  putSource(sourceId: number, req: SourcePut | HostedSourcePut): Promise<Source>;
  getSource(sourceId: number): Promise<Source>;
  listSources(datasetId?: string): Promise<Source[]>;
  deleteSource(sourceId: number): Promise<DataDeletionJob>;
  rotateIngestToken(sourceId: number): Promise<IngestTokenMinted>;
  revokeIngestToken(sourceId: number): Promise<Source>;
  /** the run as accepted (remote), or as it ended (local: this process carries it out) */
  /** the run as accepted (remote), or as it ended (local: this process carries it out, telling `onProgress` on the way) */
  ingest(input: AsyncIterable<Buffer>, target: IngestTarget, onProgress?: (run: IngestRun) => void): Promise<IngestRun>;
  getRun(runId: string): Promise<IngestRun>;
  listRuns(query: RunListQuery): Promise<IngestRun[]>;
  /** Resolves when the run is ready or failed; `onProgress` sees it on the way. */
  waitRun(runId: string, onProgress?: (run: IngestRun) => void): Promise<IngestRun>;
  retryRun(runId: string): Promise<IngestRun>;
  listJobs(query: JobListQuery): Promise<Job[]>;
  getJob(jobId: string): Promise<Job>;
  cancelJob(jobId: string): Promise<Job>;
  /** Resolves when the job has ended; `onProgress` sees it on the way. */
  waitJob(jobId: string, onProgress?: (job: Job) => void): Promise<Job>;
  /** the reindex job as accepted: it builds a new generation of the dataset's indexes and switches to it */
  reindex(req: ReindexCreate): Promise<ReindexJob>;
  reindexJob(jobId: string): Promise<ReindexJob>;
  cancelReindex(jobId: string): Promise<ReindexJob>;
  /** Resolves with the reindex job once it has ended; `onProgress` sees it on the way. */
  waitReindex(jobId: string, onProgress?: (job: ReindexJob) => void): Promise<ReindexJob>;
  search(req: SearchRequest): Promise<SearchEnvelope>;
  backfillFilters(req: BackfillCreate): Promise<BackfillJob>;
  getBackfill(jobId: string): Promise<BackfillJob>;
  sql(req: SqlRequest): Promise<SqlEnvelope>;
  fields(query: FieldQuery): Promise<Field[]>;
  createEndpoint(req: EndpointCreate): Promise<Endpoint>;
  listEndpoints(): Promise<EndpointList>;
  getEndpoint(name: string): Promise<Endpoint>;
  deleteEndpoint(name: string): Promise<Endpoint>;
  /** runs a query endpoint with its parameters as texts, as a query string carries them */
  runEndpoint(name: string, params: Record<string, string | string[]>): Promise<EndpointSearchAnswer | EndpointSqlAnswer>;
  createDetection(req: DetectionCreate): Promise<Detection>;
  listDetections(query: DetectionListQuery): Promise<DetectionList>;
  getDetection(id: string): Promise<Detection>;
  /** replaces the whole definition (secrets included: the view never shows them) */
  updateDetection(id: string, req: DetectionCreate): Promise<Detection>;
  deleteDetection(id: string): Promise<Detection>;
  /** a dry run over the records already there: what it would fire, nothing stored, no action called */
  testDetection(id: string, req: DetectionTest): Promise<DetectionTestResult>;
  detectionHits(id: string, query: HitListQuery): Promise<HitList>;
  connectorKinds(): Promise<ConnectorList>;
  putConnectorSource(sourceId: number, req: ConnectorSourcePut): Promise<Source>;
  getConnectorSource(sourceId: number): Promise<IntegrationConnection>;
  connectConnectorSource(sourceId: number, req: ConnectionRequest): Promise<IntegrationConnection>;
  /** the sync as queued: a job runs it */
  syncConnectorSource(sourceId: number): Promise<ConnectorRun>;
  connectorSyncs(sourceId: number): Promise<{ syncs: ConnectorRun[] }>;
  connectorSync(sourceId: number, runId: string): Promise<ConnectorRun>;
  createView(req: ViewCreate): Promise<View>;
  listViews(query: ViewListQuery): Promise<ViewList>;
  getView(viewId: string): Promise<View>;
  deleteView(viewId: string): Promise<View>;
  viewRecords(viewId: string, query: ViewRecordsQuery): Promise<ViewRecords>;
  /** the export as accepted: its job writes the file */
  createExport(req: ExportCreate): Promise<Export>;
  listExports(query: ExportListQuery): Promise<ExportList>;
  getExport(exportId: string): Promise<Export>;
  deleteExport(exportId: string): Promise<Export>;
  /** Resolves with the export once it is completed, failed or cancelled; `onProgress` sees it on the way. */
  waitExport(exportId: string, onProgress?: (exp: Export) => void): Promise<Export>;
  /** the file of a completed export */
  downloadExport(exportId: string): Promise<ExportFile>;
  close(): Promise<void>;
}
