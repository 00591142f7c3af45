import type { ConnectionRequest, ConnectorRun, ConnectorSourcePut, DirectoryConfig, HttpConfig, Integration, IntegrationConnection } from '../../api/connectors.js';
import type { Source } from '../../api/sources.js';
import type { Caller } from '../auth/caller.js';
import { cronIssue } from '../detections/cron.js';
import { Conflict, Invalid, NotFound } from '../errors.js';
import { newId, now } from '../ids.js';
import { scanPrefix, type Store } from '../store/db.js';
import { keys } from '../store/keys.js';
import type { Sources } from '../sources/sources.js';
import type { CredentialBox } from './credentials.js';
import { checkConfig, checkCredentials, connectorKinds, kindId, kindNamed } from './kinds.js';
import { streamsOf, type StoredConnector } from './stored.js';
import { readsFrom, type Syncs } from './sync.js';
import { directoryRefusal, type DirectoryRoots } from './directory/allowed.js';

const issue = (loc: (string | number)[], msg: string) => new Invalid(msg, [{ loc: ['body', ...loc], msg, type: 'value_error' }]);

/** Connector-backed sources: their kind and config, the connection (catalog and schedule), and syncs on demand. */
export class Connectors {
  /** called when a source's connector changed or went: a server's directory followers look again */
  onChange: (tenantId: string, sourceId: number) => void = () => {};

  constructor(
    private readonly store: Store,
    private readonly sources: Sources,
    private readonly syncs: Syncs,
    private readonly box: CredentialBox,
    private readonly directories: () => DirectoryRoots,
  ) {}

  kinds() {
    return { connectors: connectorKinds() };
  }

  private stored(t: string, sourceId: number): StoredConnector {
    const c = this.syncs.connector(t, sourceId);
    if (!c || this.sources.get(t, sourceId).source_type !== 'connector') throw new NotFound(`source ${sourceId} is not a connector source`);
    return c;
  }

  /** Creates or replaces a connector source; new credentials replace the old, none keeps them. */
  async put(caller: Caller, sourceId: number, req: ConnectorSourcePut): Promise<Source> {
    const t = caller.tenant_id;
    const kind = kindNamed(req.connector_id);
    const config = checkConfig(kind, req.connector_config);
    const refused = kind === 'directory' ? directoryRefusal((config as DirectoryConfig).path, this.directories()) : null;
    if (refused) throw issue(['connector_config', 'path'], refused);
    const credentials = req.connector_credentials === undefined ? undefined : this.box.seal(checkCredentials(kind, req.connector_credentials));
    const { connector_config: _c, connector_credentials: _k, ...sourceReq } = req;
    const source = await this.sources.put(caller, sourceId, { ...sourceReq, connector_id: kindId(kind) }, () => {
      const previous = this.syncs.connector(t, sourceId);
      const at = now();
      // checkpoints belong to what was read: another kind, directory or URL starts over
      const moved = previous && (previous.kind !== kind || readsFrom(previous) !== readsFrom({ kind, config }));
      if (moved) for (const { key } of scanPrefix(this.store.meta, keys.connectorCheckpoint(t, sourceId))) this.store.meta.remove(key);
      // credentials kept from before go only where they went before: another kind or origin needs them given again
      const kept = previous?.kind === kind && kind === 'http' && sameOrigin(readsFrom(previous), readsFrom({ kind, config })) ? previous.credentials : undefined;
      const c: StoredConnector = { ...(previous ?? blankConnector(t, sourceId, at)), kind, config, credentials: credentials ?? kept, updated_at: at };
      this.store.meta.put(keys.connector(t, sourceId), c);
    });
    this.onChange(t, sourceId);
    return source;
  }

  get(caller: Caller, sourceId: number): IntegrationConnection {
    const t = caller.tenant_id;
    return this.connection(this.stored(t, sourceId), this.sources.get(t, sourceId));
  }

  /** Sets the catalog and schedule (POST …/connection); a cron schedule stages its first sync. */
  async connect(caller: Caller, sourceId: number, req: ConnectionRequest): Promise<IntegrationConnection> {
    const t = caller.tenant_id;
    const c = this.stored(t, sourceId);
    const scheduleType = req.schedule_type ?? (req.cron_expression ? 'cron' : null);
    const zone = req.cron_timezone ?? 'UTC';
    if (scheduleType === 'cron') {
      if (!req.cron_expression) throw issue(['cron_expression'], 'schedule_type "cron" needs a cron_expression');
      const bad = cronIssue(req.cron_expression, zone);
      if (bad) throw issue([bad.startsWith('unknown time zone') ? 'cron_timezone' : 'cron_expression'], bad);
    }
    checkStreams(c, req);
    await this.store.meta.transaction(() => {
      const current = this.stored(t, sourceId);
      const next: StoredConnector = {
        ...current, connection_id: current.connection_id ?? newId('conn'), sync_catalog: req.sync_catalog, schedule_type: scheduleType,
        cron_expression: req.cron_expression ?? null, cron_timezone: zone, schedule_id: newId('sched'), next_sync_at: null, updated_at: now(),
      };
      this.syncs.scheduleNext(next);
    });
    this.onChange(t, sourceId);
    return this.get(caller, sourceId);
  }

  /** Starts a sync now: 409 while one of this source waits or runs. */
  async sync(caller: Caller, sourceId: number): Promise<ConnectorRun> {
    const t = caller.tenant_id;
    const source = this.sources.get(t, sourceId);
    if (!source.enabled) throw new Conflict(`source '${source.source_key}' is disabled`);
    const run = await this.store.meta.transaction(() => {
      const c = this.stored(t, sourceId);
      const active = this.syncs.active(c);
      if (active) return new Conflict(`a sync of source ${sourceId} is already ${active.status}: ${active.connector_run_id}`);
      return this.syncs.stage(c, 'manual');
    });
    if (run instanceof Error) throw run;
    this.syncs.poke();
    return run;
  }

  /** A followed directory changed: a sync is queued unless one already waits (one that runs may have missed the change). */
  async follow(t: string, sourceId: number): Promise<void> {
    await this.store.meta.transaction(() => {
      const c = this.syncs.connector(t, sourceId);
      if (c && !this.syncs.waiting(c)) this.syncs.stage(c, 'follow');
    });
    this.syncs.poke();
  }

  syncRuns(caller: Caller, sourceId: number, limit = 20): { syncs: ConnectorRun[] } {
    const t = caller.tenant_id;
    this.stored(t, sourceId);
    return { syncs: [...scanPrefix<ConnectorRun>(this.store.meta, keys.connectorRun(t, sourceId), { reverse: true, limit })].map((e) => e.value) };
  }

  syncRun(caller: Caller, sourceId: number, runId: string): ConnectorRun {
    this.stored(caller.tenant_id, sourceId);
    const run = this.store.meta.get(keys.connectorRun(caller.tenant_id, sourceId, runId));
    if (!run) throw new NotFound(`sync '${runId}' of source ${sourceId} not found`);
    return run;
  }

  /** Every connector source of every tenant given: a server follows the directories among them. */
  *all(tenants: string[]): Generator<StoredConnector> {
    for (const t of tenants) for (const { value } of scanPrefix<StoredConnector>(this.store.meta, keys.connector(t))) yield value;
  }

  private connection(c: StoredConnector, source: Source): IntegrationConnection {
    const last = scanPrefix<ConnectorRun>(this.store.meta, keys.connectorRun(c.tenant_id, c.source_id), { reverse: true, limit: 1 }).next().value?.value ?? null;
    const integration: Integration = {
      integration_connection_id: c.connection_id ?? '',
      integration_destination_id: source.dataset_id,
      integration_source_definition_id: String(kindId(c.kind)),
      integration_source_definition_name: c.kind,
      integration_source_id: source.source_key,
      connection_status: source.enabled && c.connection_id ? 'active' : 'inactive',
      credential_status: c.credentials ? 'configured' : 'not_configured',
      destination_status: 'ready',
      oauth_mode: 'none',
      provider_key: c.kind,
      schedule_type: c.schedule_type,
      cron_expression: c.cron_expression,
      source_id: c.source_id,
      stream_config: {
        connector_config: c.config, sync_catalog: c.sync_catalog, streams: streamsOf(c), cron_timezone: c.cron_timezone, next_sync_at: c.next_sync_at, last_sync: last,
      },
    };
    return { integration, source };
  }
}

const sameOrigin = (a: string, b: string) => new URL(a).origin === new URL(b).origin;

function checkStreams(c: StoredConnector, req: ConnectionRequest): void {
  req.sync_catalog.streams.forEach((s, i) => {
    const at = ['sync_catalog', 'streams', i];
    if (c.kind === 'directory' && s.sync_mode !== 'incremental') throw issue([...at, 'sync_mode'], 'a directory stream is read incrementally (its files are tailed)');
    if (c.kind === 'directory' && (s.name.startsWith('/') || s.name.split('/').includes('..'))) throw issue([...at, 'name'], `a directory stream is a glob under the directory: '${s.name}'`);
    if (c.kind === 'http' && s.sync_mode === 'incremental' && !s.cursor_field && !(c.config as HttpConfig).cursor_field) {
      throw issue([...at, 'cursor_field'], 'an incremental HTTP stream needs a cursor_field (here or in the connector config)');
    }
  });
}

function blankConnector(t: string, sourceId: number, at: string): Omit<StoredConnector, 'kind' | 'config'> {
  return {
    tenant_id: t, source_id: sourceId, connection_id: null, sync_catalog: null, schedule_type: null, cron_expression: null, cron_timezone: 'UTC',
    schedule_id: '', next_sync_at: null, queued_run_id: null, running_run_id: null, created_at: at, updated_at: at,
  };
}

