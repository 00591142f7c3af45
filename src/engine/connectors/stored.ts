import type { ConnectorKindName, ConnectorRun, DirectoryConfig, HttpConfig, SyncCatalog } from '../../api/connectors.js';
import type { SealedCredentials } from './credentials.js';

/** What the store keeps of a connector source besides the source itself. */
export interface StoredConnector {
  tenant_id: string;
  source_id: number;
  kind: ConnectorKindName;
  config: DirectoryConfig | HttpConfig;
  credentials?: SealedCredentials;
  /** set by POST …/connection */
  connection_id: string | null;
  sync_catalog: SyncCatalog | null;
  schedule_type: 'manual' | 'cron' | null;
  cron_expression: string | null;
  cron_timezone: string;
  /** bumped by each connection: a cron job staged for an older one does nothing */
  schedule_version: number;
  next_sync_at: string | null;
  /** a sync waiting to run, and the one running: a manual sync is refused while either is set */
  queued_run_id: string | null;
  running_run_id: string | null;
  created_at: string;
  updated_at: string;
}

export type StoredConnectorRun = ConnectorRun;

/** One stream of a sync: a glob (directory) or an endpoint (HTTP), and how it is read. */
export interface StreamPlan {
  name: string;
  incremental: boolean;
  cursor_field?: string;
  primary_key?: string;
}

const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

/**
 * The streams a sync reads: the catalog's selected ones, or when it lists none the config's own
 * (a directory's include globs as one stream, an HTTP connector's url read incrementally when it
 * names a cursor field).
 */
export function streamsOf(c: StoredConnector): StreamPlan[] {
  if (c.sync_catalog?.streams.length) {
    return c.sync_catalog.streams
      .filter((s) => s.selected !== false)
      .map((s) => ({ name: s.name, incremental: s.sync_mode === 'incremental', cursor_field: one(s.cursor_field), primary_key: one(s.primary_key) }));
  }
  if (c.kind === 'directory') return [{ name: '', incremental: true }];
  const cursor = (c.config as HttpConfig).cursor_field;
  return [{ name: '', incremental: cursor !== undefined, cursor_field: cursor }];
}
