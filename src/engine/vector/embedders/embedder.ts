/** What a vector is made for: some providers embed queries and documents differently. */
export type EmbedPurpose = 'document' | 'query';

/** Turns texts into vectors of one space. */
export interface Embedder {
  /**
   * Names the vector space: provider, model and pooling. Vectors of two embedders with different
   * ids never meet in one index; changing it rebuilds the index as a new generation.
   */
  readonly id: string;
  embed(texts: string[], purpose: EmbedPurpose): Promise<Float32Array[]>;
}

/** The provider cannot answer now (down, timing out, rate-limited, or our own queue is full): try later. */
export class EmbedderUnavailable extends Error {}

/** The provider refused these inputs for good (a 4xx other than 429): trying again cannot help. */
export class EmbedderRejected extends Error {}

/** Which embedder a source asks for; members left out come from the server's environment. */
export interface EmbedderSettings {
  provider: 'builtin' | 'openai' | 'onnx';
  url?: string;
  model?: string;
  api_key?: string;
  /** put before a query's text or a document's text, for models trained with them (e5: `query: `, `passage: `); onnx only */
  query_prefix?: string;
  document_prefix?: string;
}

/** Unit length in place (a zero vector stays zero): cosine then is a dot product. */
export function normalize(v: Float32Array): Float32Array {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i] * v[i];
  n = Math.sqrt(n);
  if (n > 0) for (let i = 0; i < v.length; i++) v[i] /= n;
  return v;
}
