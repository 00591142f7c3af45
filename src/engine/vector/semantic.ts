import type { Datasets } from '../datasets/datasets.js';
import { recordsDeleted } from '../deletion/records.js';
import type { Ingest } from '../ingest/ingest.js';
import type { JobQueue } from '../jobs/queue.js';
import { logProblem } from '../log.js';
import type { Sources } from '../sources/sources.js';
import type { Store } from '../store/db.js';
import { FilterBackfill } from './backfill.js';
import { EmbedWorker } from './embedJob.js';
import type { EmbedderSettings } from './embedders/embedder.js';
import { Embedders } from './embedders/embedders.js';
import { SemanticSearch } from './semanticSearch.js';
import { VectorIndexes } from './vectorIndexes.js';

/** What an operator sets for the vector side (config.ts). */
export interface SemanticConfig {
  /** the server-wide default embedder (SVC_EMBEDDER, SVC_EMBEDDER_URL, SVC_EMBEDDER_MODEL, SVC_EMBEDDER_API_KEY) */
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

/** Vectors of a data dir: embedding after ingest, the indexes, filter backfill, and the vector side of search. */
export class Semantic {
  readonly indexes: VectorIndexes;
  readonly worker: EmbedWorker;
  readonly backfill: FilterBackfill;
  readonly search: SemanticSearch;
  private readonly onDeleted: (typeof recordsDeleted)[number];

  constructor(store: Store, dataDir: string, datasets: Datasets, sources: Sources, jobs: JobQueue, ingest: Ingest, config: SemanticConfig, opts: SemanticOptions = {}) {
    const embedders = opts.embedders ?? new Embedders(config.embedder, {}, config.embeddingsFile);
    this.indexes = new VectorIndexes(store, dataDir, datasets, sources, embedders);
    this.worker = new EmbedWorker(store, datasets, jobs, this.indexes, opts.retryBaseMs ?? config.retryBaseMs);
    this.backfill = new FilterBackfill(store, jobs, datasets, sources, this.indexes);
    this.search = new SemanticSearch(store, this.indexes, jobs, config.embeddingsFile);
    ingest.follow((run, save) => this.worker.follow(run, save));
    this.indexes.onBehind = (t, d) => void this.worker.repair(t, d).catch((err) => logProblem('vector_repair_not_queued', err, { tenant_id: t, dataset_id: d }));
    this.onDeleted = (from, t, d, seqs) => {
      if (from === store) this.indexes.peek(t, d)?.remove(seqs);
    };
    recordsDeleted.push(this.onDeleted);
  }

  close(): void {
    this.indexes.snapshotAll();
    recordsDeleted.splice(recordsDeleted.indexOf(this.onDeleted), 1);
  }
}
