import type { ModelDir } from './modelDir.js';

/** What the onnx worker is started with. */
export interface OnnxSetup {
  model: ModelDir;
  /** onnxruntime's threads for one run */
  threads: number;
}

/** One batch to embed, prefixes already applied. */
export interface OnnxRequest {
  id: number;
  texts: string[];
}

/**
 * Vectors of a batch, row after row (`dims` each, unit length), or why there are none: `load`
 * when the model or tokenizer cannot be used at all (every batch would fail the same way).
 */
export type OnnxReply = { id: number; vectors: Float32Array; dims: number } | { id: number; error: string; load: boolean };
