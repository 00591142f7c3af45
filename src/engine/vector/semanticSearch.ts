import type { SearchRequest, WhereItem } from '../../api/search.js';
import { Conflict, Refused, Unavailable } from '../errors.js';
import type { JobQueue } from '../jobs/queue.js';
import type { StoredRecord } from '../records.js';
import type { Store } from '../store/db.js';
import { wordVectors } from './embedders/wordVectors.js';
import { FUSION, fuseAdaptive, type Scored } from './fusion.js';
import { stampFilter } from './stamps.js';
import { EMBED_JOB } from './embedJob.js';
import type { VectorIndex } from './vectorIndex.js';
import type { VectorIndexes } from './vectorIndexes.js';
import { EXPANSION, expandQuery } from './vocabulary.js';

/** Vector hits a semantic search ranks (more when a page asks for more). */
export const SEMANTIC_DEPTH = 100;

/** A query made ready for the vector side: its vector per dataset, and expansion terms for the text side. */
export interface PreparedQuery {
  mode: 'semantic' | 'hybrid';
  /** per dataset of the search (same order); null where the dataset has no vectors */
  targets: ({ index: VectorIndex; vector: Float32Array } | null)[];
  /** words from the datasets' vocabularies near the query's words, for hybrid's text list */
  expansion?: { terms: string[]; weight: number };
}

export interface Hit extends Scored { rec?: StoredRecord }

export const semanticRequired = () => new Refused('semantic vector search requires non-empty text', 'semantic_query_text_required', 422);

export const capacityExhausted = (why: string) =>
  new Unavailable(`semantic search capacity is temporarily exhausted (${why}); retry shortly — text search is unaffected`, 'semantic_search_capacity_exhausted');

/** The vector side of semantic and hybrid search. */
export class SemanticSearch {
  constructor(
    private readonly store: Store,
    private readonly indexes: VectorIndexes,
    private readonly jobs: JobQueue,
    /** the builtin word vectors, which expand a hybrid query's words */
    private readonly wordsFile: string,
  ) {}

  /** In a local command, embeds the records of these datasets still waiting for vectors (a server has them in hand). */
  async catchUp(t: string, datasetIds: string[]): Promise<void> {
    await this.jobs.runDeferred((job) => job.type === EMBED_JOB && job.tenant_id === t && datasetIds.includes(String(job.payload.dataset_id)));
  }

  /**
   * Embeds the query once per embedder among the datasets. A 409 when none of them has vectors;
   * a 503 with `semantic_search_capacity_exhausted` when the embedder cannot answer now.
   */
  async prepare(t: string, datasetIds: string[], req: SearchRequest, mode: 'semantic' | 'hybrid'): Promise<PreparedQuery> {
    const text = req.text?.trim() ?? '';
    if (!text) throw semanticRequired();
    const spaces = datasetIds.map((d) => {
      let space;
      try {
        space = this.indexes.space(t, d);
      } catch (err) {
        throw capacityExhausted((err as Error).message);
      }
      if (!space) return null;
      const index = this.indexes.get(t, d, space);
      return index.size > 0 ? { space, index } : null;
    });
    if (spaces.every((s) => s === null)) {
      const names = datasetIds.map((d) => `'${d}'`).join(', ') || 'none';
      throw new Conflict(`semantic search needs vectors, and no dataset searched (${names}) has any: give a source semantic_config.document_embeddings, or wait for its records to be embedded`);
    }
    const byEmbedder = new Map<string, Promise<Float32Array>>();
    for (const s of spaces) {
      if (s && !byEmbedder.has(s.space.embedder.id)) byEmbedder.set(s.space.embedder.id, s.space.embedder.embed([text], 'query').then((v) => v[0]));
    }
    let vectors: Map<string, Float32Array>;
    try {
      vectors = new Map(await Promise.all([...byEmbedder].map(async ([id, v]) => [id, await v] as const)));
    } catch (err) {
      throw capacityExhausted((err as Error).message);
    }
    const terms = mode === 'hybrid' && EXPANSION.weight > 0 ? await this.expansion(text, spaces, req.max_expansion_terms ?? 50) : [];
    const expansion = terms.length > 0 ? { terms, weight: EXPANSION.weight } : undefined;
    return { mode, targets: spaces.map((s) => (s ? { index: s.index, vector: vectors.get(s.space.embedder.id)! } : null)), expansion };
  }

  private async expansion(text: string, spaces: ({ index: VectorIndex } | null)[], max: number): Promise<string[]> {
    const withVocabulary = spaces.filter((s) => s && s.index.vocabulary.size > 0);
    if (withVocabulary.length === 0 || max === 0) return [];
    const words = await wordVectors(this.wordsFile);
    return [...new Set(withVocabulary.flatMap((s) => expandQuery(text, s!.index, words, max)))].slice(0, max);
  }

  /**
   * Vector hits of every dataset, best first, that `accept` takes (the whole of `where`, `time`
   * and `q`, on the record). Filter fields stamped on the vectors pick candidates without reading
   * records, so a selective filter is answered by an exact search over its few records.
   */
  vectorHits(t: string, datasetIds: string[], prepared: PreparedQuery, o: { k: number; where?: WhereItem[]; accept?: (rec: StoredRecord) => boolean; minScore?: number | null }): Hit[] {
    const hits: Hit[] = [];
    prepared.targets.forEach((target, ds) => {
      if (!target) return;
      const d = datasetIds[ds];
      const { index, vector } = target;
      const stampOk = stampFilter(o.where, index.stamped);
      const records = new Map<number, StoredRecord | undefined>();
      const keep = (seq: number) => {
        if (stampOk && !stampOk(index.stamps.get(seq))) return false;
        if (!o.accept) return true;
        const rec = this.store.records.get([t, d, seq]);
        records.set(seq, rec);
        return rec !== undefined && o.accept(rec);
      };
      const candidates = stampOk ? [...index.seqs()].filter((seq) => stampOk(index.stamps.get(seq))) : undefined;
      for (const h of index.search(vector, o.k, stampOk || o.accept ? keep : undefined, candidates)) {
        if (o.minScore != null && h.score < o.minScore) continue;
        hits.push({ ds, seq: h.seq, score: h.score, rec: records.get(h.seq) });
      }
    });
    return hits.sort((a, b) => b.score - a.score).slice(0, o.k);
  }

  /** Text hits and vector hits (best first) as one list, scored on the fusion's scale. */
  fuse(text: Hit[], vector: Hit[]): Hit[] {
    return fuseAdaptive([...text].sort((a, b) => b.score - a.score), vector);
  }
}

export const FUSION_NAME = FUSION.name;
