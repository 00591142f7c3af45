import type { Datasets } from '../datasets/datasets.js';
import { logProblem } from '../log.js';
import type { Sources } from '../sources/sources.js';
import { layout, removeGenerations } from '../layout.js';
import { scanPrefix, type Store } from '../store/db.js';
import { keys } from '../store/keys.js';
import { datasetSemantic, spaceHash, type DatasetSemantic } from './config.js';
import type { Embedder } from './embedders/embedder.js';
import type { Embedders } from './embedders/embedders.js';
import { VectorIndex } from './vectorIndex.js';

/** A dataset's vector space: how its vectors are made and which index holds them. */
export interface Space {
  semantic: DatasetSemantic;
  embedder: Embedder;
  hash: string;
}

export interface Generation { generation: number; config: string; incarnation: string }

/**
 * The open vector indexes of a data dir, one per dataset, each of the generation its current
 * configuration names (`[tenant, 'vgen', dataset]`). A change of embedder starts a new, empty
 * generation that the embedding job fills from the records; the old generation's files go.
 */
export class VectorIndexes {
  private readonly open = new Map<string, { incarnation: string; index: VectorIndex }>();
  /** new generations a reindex is building, by `tenant/dataset` */
  readonly building = new Map<string, { generation: number; index: VectorIndex; config: string }>();
  /** Called when an index opens behind its dataset with no run waiting on it (a new generation, a lost snapshot). */
  onBehind: (tenantId: string, datasetId: string) => void = () => {};

  constructor(
    private readonly store: Store,
    private readonly dataDir: string,
    private readonly datasets: Datasets,
    private readonly sources: Sources,
    private readonly embedders: Embedders,
  ) {}

  /** Null when no source of the dataset embeds anything. */
  space(tenantId: string, datasetId: string): Space | null {
    const semantic = datasetSemantic(this.sources.ofDataset(tenantId, datasetId));
    if (!semantic) return null;
    const embedder = this.embedders.get(this.embedders.resolve(semantic.embedder));
    return { semantic, embedder, hash: spaceHash(embedder.id) };
  }

  /** The index of the dataset's current space, opened on first use; records deleted meanwhile leave it. */
  get(tenantId: string, datasetId: string, space: Space): VectorIndex {
    const key = `${tenantId}/${datasetId}`;
    // a dataset deleted and created again under the same id must not meet its old index
    const incarnation = this.datasets.state(tenantId, datasetId).created_at;
    const held = this.open.get(key);
    if (held && held.incarnation === incarnation && held.index.config === space.hash) return held.index;
    if (held?.incarnation === incarnation) held.index.snapshot();

    let pointer: Generation | undefined = this.store.meta.get(keys.vectorGeneration(tenantId, datasetId));
    if (pointer && pointer.incarnation !== incarnation) pointer = undefined; // left by a deleted dataset of that name
    let generation = pointer?.generation ?? 1;
    if (pointer && pointer.config !== space.hash) {
      new VectorIndex(this.base(tenantId, datasetId, generation), pointer.config).destroy();
      generation++;
      if (this.building.get(key)?.generation === generation) generation++; // that one is a reindex's
    }
    if (!pointer || pointer.config !== space.hash) {
      if (!pointer) new VectorIndex(this.base(tenantId, datasetId, generation), '').destroy();
      this.store.meta.putSync(keys.vectorGeneration(tenantId, datasetId), { generation, config: space.hash, incarnation } satisfies Generation);
    }
    const index = new VectorIndex(this.base(tenantId, datasetId, generation), space.hash).open();
    // what a crashed or cancelled reindex left: every generation but this one and one being built
    const building = this.building.get(key)?.generation;
    removeGenerations(this.dataDir, tenantId, datasetId, 'vector', building === undefined ? [generation] : [generation, building]);
    const gone = [...index.seqs()].filter((seq) => !this.store.records.doesExist([tenantId, datasetId, seq]));
    if (gone.length > 0) index.remove(gone);
    this.open.set(key, { incarnation, index });
    if (index.seq < this.datasets.state(tenantId, datasetId).seq && !this.pending(tenantId, datasetId)) this.onBehind(tenantId, datasetId);
    return index;
  }

  /** Serves an index built as a new generation (the dataset's pointer names it already). */
  adopt(tenantId: string, datasetId: string, index: VectorIndex): void {
    this.open.set(`${tenantId}/${datasetId}`, { incarnation: this.datasets.state(tenantId, datasetId).created_at, index });
  }

  /** The index already open for a dataset, if any (deletions only need to reach an open one). */
  peek(tenantId: string, datasetId: string): VectorIndex | undefined {
    return this.open.get(`${tenantId}/${datasetId}`)?.index;
  }

  forget(tenantId: string, datasetId?: string): void {
    for (const key of [...this.open.keys()]) if (datasetId ? key === `${tenantId}/${datasetId}` : key.startsWith(`${tenantId}/`)) this.open.delete(key);
  }

  /** True when the dataset has vectors and no run waits for its records to be embedded. */
  ready(tenantId: string, datasetId: string): boolean {
    let space;
    try {
      space = this.space(tenantId, datasetId);
    } catch {
      return false; // its embedder cannot be made here: no vectors are ready, and the dataset still shows
    }
    if (!space) return false;
    const pointer: Generation | undefined = this.store.meta.get(keys.vectorGeneration(tenantId, datasetId));
    return pointer?.config === space.hash && !this.pending(tenantId, datasetId);
  }

  /** Whether some run still waits for the dataset's records to be embedded. */
  private pending(tenantId: string, datasetId: string): boolean {
    for (const _ of scanPrefix(this.store.meta, keys.vectorPending(tenantId, datasetId), { limit: 1 })) return true;
    return false;
  }

  /** Snapshots of the indexes whose dataset is still there (a deleted one's directory is gone). */
  snapshotAll(): void {
    for (const [key, { incarnation, index }] of this.open) {
      const [t, d] = key.split('/');
      try {
        if (this.store.meta.get(keys.dataset(t, d))?.created_at === incarnation) index.snapshot();
      } catch (err) {
        // the vectors past the last snapshot are embedded again from the records when it next opens
        logProblem('vector_snapshot_failed', err, { tenant_id: t, dataset_id: d });
      }
    }
  }

  base(tenantId: string, datasetId: string, generation: number): string {
    return layout.vectorBase(this.dataDir, tenantId, datasetId, generation);
  }
}
