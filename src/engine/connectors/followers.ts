import type { DirectoryConfig } from '../../api/connectors.js';
import { logProblem } from '../log.js';
import type { Sources } from '../sources/sources.js';
import type { Connectors } from './connectors.js';
import { watchDirectory } from './directory/watch.js';
import type { Syncs } from './sync.js';
import { reachesDown } from './directory/tail.js';
import { streamsOf } from './stored.js';

/** a burst of writes within this makes one sync */
const FOLLOW_DEBOUNCE_MS = 50;

/**
 * Under `svc serve`, each enabled directory source with `follow: true` is watched: a change queues
 * a sync (one waits at most; a sync reads everything new since its checkpoint).
 */
export class DirectoryFollowers {
  private readonly watchers = new Map<string, { path: string; close(): void }>();
  private closed = false;

  constructor(
    private readonly connectors: Connectors,
    private readonly syncs: Syncs,
    private readonly sources: Sources,
  ) {}

  start(tenants: string[]): void {
    for (const c of this.connectors.all(tenants)) this.refresh(c.tenant_id, c.source_id);
  }

  /** Watches the source's directory, or stops watching it, as its connector now says. */
  refresh(t: string, sourceId: number): void {
    if (this.closed) return;
    const id = `${t}/${sourceId}`;
    const path = this.followed(t, sourceId);
    const current = this.watchers.get(id);
    if (current?.path === path) return;
    current?.close();
    this.watchers.delete(id);
    if (path === null) return;
    const sync = () => {
      if (this.followed(t, sourceId) === null) return this.refresh(t, sourceId); // the source went or stopped following
      this.connectors.follow(t, sourceId).catch((err) => logProblem('connector_follow_failed', err, { tenant_id: t, source_id: sourceId }));
    };
    const c = this.syncs.connector(t, sourceId)!;
    this.watchers.set(id, { path, ...watchDirectory(path, sync, { debounceMs: FOLLOW_DEBOUNCE_MS, deep: reachesDown(streamsOf(c)[0].include ?? []) }) });
    sync(); // what was written while nobody watched
  }

  close(): void {
    this.closed = true;
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
  }

  /** The directory to watch, or null when the source is not a followed, enabled directory connector. */
  private followed(t: string, sourceId: number): string | null {
    const c = this.syncs.connector(t, sourceId);
    if (c?.kind !== 'directory' || !(c.config as DirectoryConfig).follow) return null;
    try {
      const source = this.sources.get(t, sourceId);
      return source.enabled && source.source_type === 'connector' ? (c.config as DirectoryConfig).path : null;
    } catch {
      return null;
    }
  }
}
