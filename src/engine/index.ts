import type { InitResult } from '../api/identity.js';
import type { Caller, Principal } from './auth/caller.js';
import { Directory } from './auth/directory.js';
import { Identity } from './auth/identity.js';
import { IngestTokens } from './auth/ingestTokens.js';
import { Keys } from './auth/keys.js';
import { TokenCache } from './auth/tokenCache.js';
import { loadSecret } from './auth/secret.js';
import { Sessions } from './auth/sessions.js';
import { ConsoleSessions } from './auth/consoleSessions.js';
import { BlobStore } from './blobs/store.js';
import { configFromEnv, withOverrides, type EngineConfig } from './config.js';
import { Datasets } from './datasets/datasets.js';
import { DataDeletion } from './deletion/deletion.js';
import { DerivedIndexes } from './derived/derivedIndexes.js';
import { FreeSpace, type FloorOptions } from './diskSpace.js';
import { Conflict, DiskFull, Forbidden, NotFound, Unauthenticated } from './errors.js';
import { Exports } from './exports/exports.js';
import { ObjectImages } from './images/objectImages.js';
import { Fields } from './fields/fields.js';
import { Ingest } from './ingest/ingest.js';
import { JobQueue } from './jobs/queue.js';
import { Runs } from './ingest/runs.js';
import { lockDataDir } from './lock.js';
import { logProblem } from './log.js';
import { DEFAULT_SESSION_TTL } from './sessionTtl.js';
import { PlatformTenants } from './platform/tenants.js';
import { Reindexes } from './reindex/reindexes.js';
import { makePrivate } from './privateDir.js';
import { Retention, RETENTION_EVERY_MS } from './retention/retention.js';
import { dropStoredHandles, SearchHandles } from './search/handles.js';
import { Search } from './search/search.js';
import { Sources } from './sources/sources.js';
import { loadDuckDB } from './sql/duckdb.js';
import { Sql } from './sql/sql.js';
import { openStore, type Store, type StoreOptions } from './store/db.js';
import { TextIndexes } from './text/textIndexes.js';
import { Semantic, type SemanticOptions } from './vector/semantic.js';
import { Uploads } from './uploads/uploads.js';
import { Views } from './views/views.js';
import { Endpoints } from './endpoints/endpoints.js';
import { Detections } from './detections/detections.js';
import { Connectors } from './connectors/connectors.js';
import { CredentialBox } from './connectors/credentials.js';
import { DirectoryFollowers } from './connectors/followers.js';
import { Syncs } from './connectors/sync.js';

export { DEFAULT_SESSION_TTL } from './sessionTtl.js';
/** How long after the last ingest of a dataset its text index is written to disk. */
const SNAPSHOT_DELAY_MS = 2000;
/** A snapshot that could not be written (a full disk) is tried again this much later; the index stays in memory meanwhile. */
const SNAPSHOT_RETRY_MS = 60_000;

/** A rejection handler that logs a DiskFull and lets the caller go on; any other error is thrown again. */
const unlessDiskFull = (event: string) => (err: unknown) => {
  if (!(err instanceof DiskFull)) throw err;
  logProblem(event, err);
};

export interface OpenOptions extends StoreOptions, FloorOptions {
  /** how long to wait for another process holding the data dir */
  lockWaitMs?: number;
  /** a long-running process (the server): it also takes periodic upkeep jobs such as retention */
  background?: boolean;
  /** embedders and retry timing of the vector side, in place of the config's */
  semantic?: SemanticOptions;
  /**
   * the settings an entry point resolved once (configFromEnv()); default: read from the environment
   * now. `mapSize`, `minFreeBytes` and `minFreePercent` given here win over it.
   */
  config?: EngineConfig;
}

/** The whole product as a library: open a data dir, act on it as a Caller, close it. */
export class Engine {
  readonly directory: Directory;
  readonly sessions: Sessions;
  readonly console: ConsoleSessions;
  readonly keys: Keys;
  readonly identity: Identity;
  readonly tenants: PlatformTenants;
  readonly sources: Sources;
  readonly datasets: Datasets;
  readonly ingest: Ingest;
  readonly uploads: Uploads;
  readonly jobs: JobQueue;
  readonly deletion: DataDeletion;
  readonly retention: Retention;
  readonly reindex: Reindexes;
  private readonly ingestTokens: IngestTokens;
  private readonly tokenCache: TokenCache;
  readonly search: Search;
  readonly views: Views;
  readonly endpoints: Endpoints;
  readonly detections: Detections;
  readonly fields: Fields;
  readonly semantic: Semantic;
  readonly sql: Sql;
  readonly exports: Exports;
  readonly images: ObjectImages;
  readonly connectors: Connectors;
  private readonly followers: DirectoryFollowers;
  private readonly text: TextIndexes;
  /** every index derived from the records, in one list: text, vector, SQL */
  private readonly derived: DerivedIndexes;
  private readonly snapshotTimers = new Map<string, NodeJS.Timeout>();
  private closing = false;

  private constructor(readonly dataDir: string, private readonly store: Store, secret: Buffer, private readonly unlock: () => void, readonly config: EngineConfig, opts: OpenOptions = {}) {
    const blobs = new BlobStore(dataDir);
    const space = new FreeSpace(dataDir, config.disk);
    this.directory = new Directory(store);
    this.sessions = new Sessions(secret);
    this.tokenCache = new TokenCache();
    this.console = new ConsoleSessions(store, this.sessions, this.directory, secret, this.tokenCache, DEFAULT_SESSION_TTL);
    this.keys = new Keys(store, this.tokenCache);
    this.identity = new Identity(this.directory, this.keys);
    this.ingestTokens = new IngestTokens(store, this.tokenCache);
    this.sources = new Sources(store, this.ingestTokens);
    this.text = new TextIndexes(store, dataDir, (t, d) => this.sources.searchConfig(t, d), config.text.segmentRecords);
    this.jobs = new JobQueue(store, space);
    this.datasets = new Datasets(store, this.sources, (t, d) => this.semantic.indexes.ready(t, d));
    this.sql = new Sql(store, dataDir, this.datasets, this.jobs, (t) => Boolean(this.directory.tenant(t)), config.sql);
    this.semantic = new Semantic(store, dataDir, this.datasets, this.sources, this.jobs, config.semantic, opts.semantic);
    this.derived = new DerivedIndexes([this.text, this.sql.indexes, this.semantic], dataDir);
    this.tenants = new PlatformTenants(store, dataDir, this.directory, this.keys, this.derived, this.jobs);
    const runs = new Runs(store);
    this.ingest = new Ingest(store, this.datasets, this.sources, runs, blobs, this.derived, this.jobs, space, (t, d) => this.scheduleSnapshot(t, d), config.ingest);
    this.uploads = new Uploads(store, blobs, secret, this.ingest, this.jobs, space, config.uploads);
    this.retention = new Retention(store, this.jobs, this.directory, this.datasets, this.sources, this.derived);
    this.deletion = new DataDeletion(store, this.jobs, this.datasets, this.sources, runs, blobs, this.derived);
    this.reindex = new Reindexes(store, this.jobs, this.datasets, this.sources, runs, this.ingest, this.derived, config.crashAt);
    this.search = new Search(store, this.datasets, this.text, new SearchHandles(), this.semantic.search, config.search);
    this.fields = new Fields(store, this.datasets, this.sources, (t, d) => this.sql.fastFields(t, d));
    const tenants = () => this.directory.tenants().map((t) => t.tenant_id);
    this.views = new Views(store, this.search, tenants, this.derived);
    this.endpoints = new Endpoints(store, this.search, this.sql);
    this.detections = new Detections(store, this.jobs, this.datasets, this.sources, this.search, this.sql, config.crashAt);
    this.derived.onAdded(this.detections.onIngest);
    const box = new CredentialBox(secret);
    const directories = () => ({ dataDir, roots: config.connectors.directoryRoots });
    const syncs = new Syncs({ store, jobs: this.jobs, sources: this.sources, ingest: this.ingest, blobs, space, box, directories });
    this.connectors = new Connectors(store, this.sources, syncs, box, directories);
    this.followers = new DirectoryFollowers(this.connectors, syncs, this.sources);
    this.images = new ObjectImages(store, this.datasets, this.sources, blobs, secret);
    this.exports = new Exports({ store, jobs: this.jobs, blobs, search: this.search, sql: this.sql, views: this.views, secret, tenants, limits: config.exports });
    this.retention.sweeps.push(
      (nowMs) => this.views.sweep(nowMs),
      async (nowMs) => void (await this.exports.sweep(nowMs)),
      (nowMs) => this.detections.sweep(tenants(), nowMs),
      async () => void blobs.sweepTemp(), // a server that runs for months is not reopened to sweep what killed writers left
    );
  }

  static async open(dataDir: string, opts: OpenOptions = {}): Promise<Engine> {
    const config = withOverrides(opts.config ?? configFromEnv(), opts);
    makePrivate(dataDir);
    const unlock = await lockDataDir(dataDir, opts.lockWaitMs ?? 30_000);
    try {
      const engine = new Engine(dataDir, openStore(dataDir, config.store), loadSecret(dataDir), unlock, config, opts);
      // on a full disk the server still starts, to serve reads: what it could not write waits for the next start
      await dropStoredHandles(engine.store, engine.directory.tenants().map((t) => t.tenant_id)).catch(unlessDiskFull('stored_handles_not_dropped'));
      await engine.jobs.start({ background: opts.background });
      if (opts.background) {
        await engine.retention.schedule(Date.now() + RETENTION_EVERY_MS).catch(unlessDiskFull('retention_not_scheduled'));
        new BlobStore(dataDir).sweepTemp(); // objects a killed process was writing
        engine.loadTextIndexes();
        engine.catchUpDetections();
        engine.connectors.onChange = (t, s) => engine.followers.refresh(t, s);
        engine.followers.start(engine.directory.tenants().map((t) => t.tenant_id));
        // a server loads now what a local command loads on first use: a first request must not stall the others
        await Promise.all([loadDuckDB(), import('./sql/execute.js'), import('jose')]);
      }
      return engine;
    } catch (err) {
      unlock();
      throw err;
    }
  }

  /** A server loads every text index as it starts, so that its first searches do not wait for one to load. */
  private loadTextIndexes(): void {
    for (const { tenant_id: t } of this.directory.tenants()) {
      for (const d of this.datasets.ids(t)) this.text.catchUp(t, d).catch(() => {}); // a search would meet the same error, and report it
    }
  }

  /** Detections evaluate what was committed while no server ran them (or before a crash stored their hits), and each cron one has its next run waiting. */
  private catchUpDetections(): void {
    for (const { tenant_id: t } of this.directory.tenants()) {
      this.detections.ensureSchedules(t).catch((err) => logProblem('detection_schedules_not_checked', err, { tenant_id: t }));
      for (const d of this.datasets.ids(t)) this.detections.onIngest.catchUp(t, d).catch((err) => logProblem('detection_catch_up_failed', err, { tenant_id: t, dataset_id: d }));
    }
  }

  /** First run: the first tenant and its admin, and a console session for that admin. */
  async init(tenantName: string, email: string, ttlSeconds = DEFAULT_SESSION_TTL): Promise<InitResult> {
    if (this.directory.tenants().length > 0) throw new Conflict(`data dir ${this.dataDir} is already initialized`);
    const { tenant, user } = await this.directory.createTenant(tenantName, email);
    return { tenant_id: tenant.tenant_id, user_id: user.user_id, token: await this.sessions.issue(user.user_id, ttlSeconds) };
  }

  /** A bearer token (session JWT, tenant key or platform key) → who it stands for; 401 otherwise. */
  async authenticate(token: string): Promise<Principal> {
    if (Keys.isKey(token)) return this.keys.verify(token);
    if (IngestTokens.isIngestToken(token)) return this.ingestTokens.verify(token);
    const cached = this.tokenCache.get(token);
    if (cached) return cached;
    const { userId, sessionId, expiresAtMs } = await this.sessions.verify(token);
    this.console.assertNotEnded(sessionId);
    if (!this.directory.user(userId)) throw new Unauthenticated('unknown user');
    const principal: Principal = { user_id: userId, kind: 'session' };
    this.tokenCache.set(token, principal, expiresAtMs);
    return principal;
  }

  callerIn(principal: Principal, tenantId: string): Caller {
    return this.directory.callerIn(principal, tenantId);
  }

  /** An ingest token acting on its own source (named by key in the route): 403 for any other source. */
  ingestCaller(principal: Principal, sourceKey: string): Caller {
    const { tenant_id, source_id } = principal.source!;
    let own;
    try {
      own = this.sources.get(tenant_id, source_id);
    } catch (err) {
      if (!(err instanceof NotFound)) throw err; // else its source is gone: the token reaches nothing
    }
    if (!own || own.source_key !== sourceKey) throw new Forbidden('this ingest token belongs to another source');
    return { ...principal, tenant_id: own.tenant_id, role: 'Admin' };
  }

  /** A platform key acting in its own platform tenant (the /v1/platform routes take no tenant header). */
  platformCaller(principal: Principal): Caller {
    if (principal.kind !== 'platform_key' || !principal.key) throw new Forbidden('this operation needs a platform key');
    return this.directory.callerIn(principal, principal.key.tenant_id);
  }

  /** Who a command run on the data dir acts as: the first admin of the named tenant, or of the only tenant. */
  localCaller(tenantId?: string): Caller {
    const tenants = this.directory.assertInitialized();
    const tenant = tenantId ? this.directory.tenant(tenantId) : tenants[0];
    if (!tenant) throw new NotFound(`tenant '${tenantId}' not found`);
    return this.directory.callerIn(this.directory.firstAdmin(tenant.tenant_id), tenant.tenant_id);
  }

  private scheduleSnapshot(tenantId: string, datasetId: string, delayMs = SNAPSHOT_DELAY_MS): void {
    const key = `${tenantId}/${datasetId}`;
    clearTimeout(this.snapshotTimers.get(key));
    const timer = setTimeout(() => {
      this.snapshotTimers.delete(key);
      // the index stays in memory, changed; its tombstones stay; a replay on open covers a snapshot never written
      this.text.snapshot(tenantId, datasetId).catch((err) => {
        logProblem('text_snapshot_failed', err, { tenant_id: tenantId, dataset_id: datasetId });
        if (!this.closing && !this.snapshotTimers.has(key)) this.scheduleSnapshot(tenantId, datasetId, SNAPSHOT_RETRY_MS);
      });
    }, delayMs);
    timer.unref();
    this.snapshotTimers.set(key, timer);
  }

  /**
   * Writes index snapshots and releases the data dir. With `drain` (what a local command wants)
   * the jobs that are due run to their end first; without it (a server stopping) only the jobs
   * in hand finish, and the rest wait in the queue for the next open.
   */
  async close(opts: { drain?: boolean } = { drain: true }): Promise<void> {
    this.closing = true;
    this.followers.close();
    try {
      if (opts.drain) await this.jobs.drain();
      await this.jobs.stop();
      for (const timer of this.snapshotTimers.values()) clearTimeout(timer);
      this.snapshotTimers.clear();
      await this.derived.close();
    } finally {
      // whatever failed above is rebuilt from the store on the next open: the data dir is released
      await this.store.close();
      this.unlock();
    }
  }
}

export type { Caller, Principal };
