/**
 * The keys of the `meta` table, one function each: every key begins with its tenant, then a
 * kind that says what it holds.
 */
export const keys = {
  dataset: (t: string, d: string) => [t, 'dataset', d],
  run: (t: string, runId: string) => [t, 'run', runId],
  job: (t: string, jobId: string) => [t, 'job', jobId],
  source: (t: string, sourceId: number) => [t, 'source', sourceId],
  /** a discovered field's count and sample, per value type */
  field: (t: string, d: string, path: string, type: string) => [t, 'field', d, path, type],
  /** a deleted record the text index may still hold */
  textTomb: (t: string, d: string, seq: number) => [t, 'tomb', d, seq],
  /** a deleted record the SQL table may still hold */
  sqlTomb: (t: string, d: string, seq: number) => [t, 'sqltomb', d, seq],
  /** the generation of each derived index that serves the dataset: written together, in the transaction that promotes */
  textGeneration: (t: string, d: string) => [t, 'tgen', d],
  sqlGeneration: (t: string, d: string) => [t, 'sqlgen', d],
  vectorGeneration: (t: string, d: string) => [t, 'vgen', d],
};

/** The prefix every key of one kind (and dataset) shares, for scans and removals. */
export const kindOf = (t: string, kind: 'run' | 'job' | 'field' | 'tomb' | 'sqltomb' | 'vpend', d?: string) => (d === undefined ? [t, kind] : [t, kind, d]);
