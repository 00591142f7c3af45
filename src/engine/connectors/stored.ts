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
  /** new with each connection: a cron job staged for an older schedule (or an older source of this id) does nothing */
  schedule_id: string;
  next_sync_at: string | null;
  /** a sync waiting to run, and the one running: a manual sync is refused while either is set */
  queued_run_id: string | null;
  running_run_id: string | null;
  created_at: string;
  updated_at: string;
}

export type StoredConnectorRun = ConnectorRun;

/** One stream of a sync: an endpoint (HTTP), or a directory's files, and how it is read. */
export interface StreamPlan {
  /** the checkpoint's name: the endpoint, or '' for a directory (one checkpoint for all its files) */
  name: string;
  incremental: boolean;
  /** a directory's globs */
  include?: string[];
  cursor_field?: string;
  primary_key?: string;
}

const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

/**
 * The streams a sync reads. A directory's are its catalog's selected globs, else its include
 * globs, read as one stream: a file is known by its inode whichever glob takes it in, so changing
 * the globs never reads a file again. An HTTP connector's are the catalog's selected endpoints,
 * else its url (incremental when it names a cursor field).
 */
export function streamsOf(c: StoredConnector): StreamPlan[] {
  const selected = (c.sync_catalog?.streams ?? []).filter((s) => s.selected !== false);
  if (c.kind === 'directory') {
    const include = selected.length ? selected.map((s) => s.name) : (c.config as DirectoryConfig).include ?? ['*.log'];
    return [{ name: '', incremental: true, include }];
  }
  if (selected.length) return selected.map((s) => ({ name: s.name, incremental: s.sync_mode === 'incremental', cursor_field: one(s.cursor_field), primary_key: one(s.primary_key) }));
  const cursor = (c.config as HttpConfig).cursor_field;
  return [{ name: '', incremental: cursor !== undefined, cursor_field: cursor }];
}
