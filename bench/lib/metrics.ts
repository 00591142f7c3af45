/** Relevant doc ids per query id. */
export type Qrels = Map<string, Set<string>>;

/** nDCG@k with binary gains: DCG of the ranking over the DCG of an ideal ranking of the judged relevant docs. */
export function ndcgAt(ranked: readonly string[], relevant: ReadonlySet<string>, k = 10): number {
  if (relevant.size === 0) return 0;
  let dcg = 0;
  for (let i = 0; i < Math.min(k, ranked.length); i++) if (relevant.has(ranked[i])) dcg += 1 / Math.log2(i + 2);
  let ideal = 0;
  for (let i = 0; i < Math.min(k, relevant.size); i++) ideal += 1 / Math.log2(i + 2);
  return dcg / ideal;
}

/** Share of the relevant docs found in the first k. */
export function recallAt(ranked: readonly string[], relevant: ReadonlySet<string>, k = 100): number {
  if (relevant.size === 0) return 0;
  let found = 0;
  for (const id of new Set(ranked.slice(0, k))) if (relevant.has(id)) found++;
  return found / relevant.size;
}

/**
 * Mean nDCG@10 and Recall@100 over every judged query; a judged query without a ranking counts 0,
 * as trec_eval does, so a search that drops queries cannot look better.
 */
export function evaluate(rankings: ReadonlyMap<string, readonly string[]>, qrels: Qrels): { ndcg10: number; recall100: number } {
  let ndcg = 0;
  let recall = 0;
  for (const [qid, relevant] of qrels) {
    const ranked = rankings.get(qid) ?? [];
    ndcg += ndcgAt(ranked, relevant, 10);
    recall += recallAt(ranked, relevant, 100);
  }
  return { ndcg10: ndcg / qrels.size, recall100: recall / qrels.size };
}
