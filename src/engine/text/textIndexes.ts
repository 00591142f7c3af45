import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { SearchConfig } from '../../api/sources.js';
import type { Store } from '../store/db.js';
import { TextIndex } from './textIndex.js';

/** The open text indexes of a data dir, opened on first use and snapshotted on close. */
export class TextIndexes {
  private readonly open = new Map<string, TextIndex>();

  constructor(
    private readonly store: Store,
    private readonly dataDir: string,
    private readonly configOf: (tenantId: string, datasetId: string) => SearchConfig,
  ) {}

  private dir(tenantId: string, datasetId: string): string {
    return join(this.dataDir, 'indexes', tenantId, datasetId);
  }

  get(tenantId: string, datasetId: string, generation = 1): TextIndex {
    const key = `${tenantId}/${datasetId}`;
    let index = this.open.get(key);
    if (!index) {
      const path = join(this.dir(tenantId, datasetId), `text-${generation}.json`);
      index = new TextIndex(this.store, tenantId, datasetId, path, this.configOf(tenantId, datasetId)).open();
      this.open.set(key, index);
    }
    return index;
  }

  drop(tenantId: string, datasetId: string): void {
    this.open.delete(`${tenantId}/${datasetId}`);
    rmSync(this.dir(tenantId, datasetId), { recursive: true, force: true });
  }

  dropTenant(tenantId: string): void {
    for (const key of [...this.open.keys()]) if (key.startsWith(`${tenantId}/`)) this.open.delete(key);
  }

  snapshotAll(): void {
    for (const index of this.open.values()) index.snapshot();
  }
}
