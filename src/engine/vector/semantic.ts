import type { Datasets } from '../datasets/datasets.js';
import type { Build, DerivedIndex } from '../derived/derivedIndex.js';
import type { RunState } from '../ingest/runs.js';
import type { JobQueue } from '../jobs/queue.js';
import { logProblem } from '../log.js';
import type { Sources } from '../sources/sources.js';
import { removePrefix, type Store } from '../store/db.js';
import { keys } from '../store/keys.js';
import { removeGenerations } from '../layout.js';
import { FilterBackfill } from './backfill.js';
import { EmbedWorker } from './embedJob.js';
import type { EmbedderSettings } from './embedders/embedder.js';
import { Embedders } from './embedders/embedders.js';
import { SemanticSearch } from './semanticSearch.js';
import { VectorIndex } from './vectorIndex.js';
import { VectorIndexes, type Generation } from './vectorIndexes.js';

/** What an operator sets for the vector side (config.ts). */
export interface SemanticConfig {
  /** the server-wide default embedder (SVC_EMBEDDER, SVC_EMBEDDER_URL, SVC_EMBEDDER_MODEL, SVC_EMBEDDER_API_KEY, SVC_EMBEDDER_QUERY_PREFIX, SVC_EMBEDDER_DOCUMENT_PREFIX) */
  embedder: EmbedderSettings;
  /** the builtin embedder's word vectors (SVC_EMBEDDINGS_FILE) */
  embeddingsFile: string;
  /** first delay before embedding is tried again after the provider failed; it doubles up to a minute (SVC_EMBED_RETRY_MS) */
  retryBaseMs: number;
}

/** What a caller of `Engine.open` (a test) may put in place of the configured embedders and retry timing. */
export interface SemanticOptions {
  /** embedders by settings; default: the configured embedder */
  embedders?: Embedders;
  /** default: `SemanticConfig.retryBaseMs` */
  retryBaseMs?: number;
}

/**
 * Vectors of a data dir — embedding after ingest, the indexes, filter backfill, and the vector side
 * of search — and, as the derived index `vector`, how they follow the records.
 */
export class Semantic implements DerivedIndex {
  readonly name = 'vector';
  readonly indexes: VectorIndexes;
  readonly worker: EmbedWorker;
  readonly backfill: FilterBackfill;
  readonly search: SemanticSearch;

  constructor(private readonly store: Store, private readonly dataDir: string, private readonly datasets: Datasets, sources: Sources, jobs: JobQueue, config: SemanticConfig, opts: SemanticOptions = {}) {
    const embedders = opts.embedders ?? new Embedders(config.embedder, {}, config.embeddingsFile);
    this.indexes = new VectorIndexes(store, dataDir, datasets, sources, embedders);
    this.worker = new EmbedWorker(store, datasets, jobs, this.indexes, opts.retryBaseMs ?? config.retryBaseMs);
    this.backfill = new FilterBackfill(store, jobs, datasets, sources, this.indexes);
    this.search = new SemanticSearch(store, this.indexes, jobs, config.embeddingsFile);
    this.indexes.onBehind = (t, d) => void this.worker.repair(t, d).catch((err) => logProblem('vector_repair_not_queued', err, { tenant_id: t, dataset_id: d }));
  }

  async added(): Promise<void> {} // embedding waits until a run's text is searchable

  follow(run: RunState, save: () => void): Promise<void> {
    return this.worker.follow(run, save);
  }

  /** Opening the index queues the embedding of whatever records it lacks. */
  async catchUp(t: string, d: string): Promise<void> {
    const space = this.indexes.space(t, d);
    if (space) this.indexes.get(t, d, space);
  }

  deleting(): void {} // an index that opens drops the vectors of records no longer stored

  async removed(t: string, d: string, seqs: number[]): Promise<void> {
    if (this.store.meta.get(keys.dataset(t, d))?.deleting) return; // the whole index goes at the end
    this.indexes.peek(t, d)?.remove(seqs);
    this.indexes.building.get(`${t}/${d}`)?.index.remove(seqs);
  }

  async dropDataset(t: string, d: string): Promise<void> {
    this.forget(t, d);
    removeGenerations(this.dataDir, t, d, 'vector', []);
    await this.store.meta.transaction(() => {
      this.store.meta.remove(keys.vectorGeneration(t, d));
      this.store.meta.remove(keys.vectorJob(t, d));
      removePrefix(this.store.meta, keys.vectorPending(t, d));
    });
  }

  async dropTenant(t: string): Promise<void> {
    this.forget(t);
  }

  generation(t: string, d: string): number | null {
    try {
      if (!this.indexes.space(t, d)) return null;
    } catch {
      return null; // its embedder cannot be made here: there are no vectors to rebuild
    }
    return (this.store.meta.get(keys.vectorGeneration(t, d)) as Generation | undefined)?.generation ?? 1;
  }

  async build(t: string, d: string, g: number): Promise<Build> {
    const space = this.indexes.space(t, d)!;
    const index = new VectorIndex(this.indexes.base(t, d, g), space.hash);
    index.destroy(); // what a crashed attempt left
    this.indexes.building.set(`${t}/${d}`, { generation: g, index, config: space.hash });
    return {
      fill: async (upto, stop) => {
        let n = 0;
        for (let batch = this.worker.batch(t, d, index.seq, upto); batch.length > 0; batch = this.worker.batch(t, d, index.seq, upto)) {
          stop?.();
          await this.worker.embedInto(index, space, batch);
          n += batch.length;
        }
        return n;
      },
      seal: async () => {
        index.markDirty();
        index.snapshot();
      },
      discard: async () => {
        if (this.indexes.building.get(`${t}/${d}`)?.index === index) this.indexes.building.delete(`${t}/${d}`);
        index.destroy();
      },
    };
  }

  /** Names the configuration the generation was built with: an embedder changed since makes the next open start afresh. */
  point(t: string, d: string, g: number): void {
    const built = this.indexes.building.get(`${t}/${d}`);
    const ds = this.store.meta.get(keys.dataset(t, d));
    if (!built || built.generation !== g || !ds) throw new Error(`generation ${g} of the vectors of '${d}' is not built`);
    this.store.meta.put(keys.vectorGeneration(t, d), { generation: g, config: built.config, incarnation: ds.created_at } satisfies Generation);
  }

  /** The built index serves; records committed since its last fill are embedded by the dataset's job, as after any restart. */
  async promote(t: string, d: string, g: number): Promise<void> {
    const built = this.indexes.building.get(`${t}/${d}`)?.index;
    this.indexes.building.delete(`${t}/${d}`);
    this.indexes.forget(t, d);
    if (built) {
      // a record deleted while its batch was being embedded got in after the deletion looked
      const gone = [...built.seqs()].filter((seq) => !this.store.records.doesExist([t, d, seq]));
      if (gone.length > 0) built.remove(gone);
      this.indexes.adopt(t, d, built);
    }
    removeGenerations(this.dataDir, t, d, 'vector', [g]);
    await this.catchUp(t, d);
    if (built && built.seq < this.datasets.state(t, d).seq) await this.worker.repair(t, d);
  }

  async snapshot(t: string, d: string): Promise<void> {
    this.indexes.peek(t, d)?.snapshot();
  }

  async close(): Promise<void> {
    this.indexes.snapshotAll();
  }

  private forget(t: string, d?: string): void {
    this.indexes.forget(t, d);
    for (const key of [...this.indexes.building.keys()]) if (d ? key === `${t}/${d}` : key.startsWith(`${t}/`)) this.indexes.building.delete(key);
  }
}
