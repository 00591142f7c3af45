import type { Pooling } from './modelDir.js';

/**
 * One vector per text from a model's output. `[batch, seq, hidden]` (token vectors) is pooled:
 * the mean over the tokens the attention mask keeps, or the first ([CLS]) token's vector.
 * `[batch, hidden]` is already pooled by the model (a `sentence_embedding` output) and is used as is.
 */
export function pool(data: Float32Array, shape: readonly number[], mask: BigInt64Array, pooling: Pooling): Float32Array[] {
  if (shape.length === 2) {
    const [batch, hidden] = shape;
    return Array.from({ length: batch }, (_, b) => data.slice(b * hidden, (b + 1) * hidden));
  }
  if (shape.length !== 3) throw new Error(`the model's output has shape [${shape.join(', ')}]; svc reads [batch, tokens, hidden] or [batch, hidden]`);
  const [batch, seq, hidden] = shape;
  const out: Float32Array[] = [];
  for (let b = 0; b < batch; b++) {
    const v = new Float32Array(hidden);
    if (pooling === 'cls') {
      v.set(data.subarray(b * seq * hidden, b * seq * hidden + hidden));
    } else {
      let kept = 0;
      for (let t = 0; t < seq; t++) {
        if (mask[b * seq + t] === 0n) continue;
        kept++;
        const off = (b * seq + t) * hidden;
        for (let j = 0; j < hidden; j++) v[j] += data[off + j];
      }
      if (kept > 0) for (let j = 0; j < hidden; j++) v[j] /= kept;
    }
    out.push(v);
  }
  return out;
}
