/**
 * The onnx worker: a thread that tokenises texts and runs a sentence-transformers model over them,
 * so that inference never holds the event loop. It embeds one batch at a time, in the order the
 * main thread sends them; onnxruntime uses its own threads within a batch.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import type { InferenceSession, Tensor } from 'onnxruntime-node';
import { normalize } from '../embedder.js';
import { pool } from './pooling.js';
import type { OnnxReply, OnnxRequest, OnnxSetup } from './protocol.js';
import { loadTokenizer, type TextTokenizer } from './tokenizer.js';

const setup: OnnxSetup = workerData;
const { model } = setup;

interface Loaded {
  ort: typeof import('onnxruntime-node');
  session: InferenceSession;
  tokenizer: TextTokenizer;
  /** the output read: token vectors or an already pooled vector */
  output: string;
  feedsTypes: boolean;
}

const oneLine = (err: unknown) => String((err as Error)?.message ?? err).split('\n').find((l) => l.trim() !== '') ?? 'unknown error';

/** Loads both halves, then checks that they fit each other with one run over the tokenizer's largest id. */
async function load(): Promise<Loaded> {
  const fail = (why: string) => new Error(`onnx model '${model.dir}': ${why}`);
  let ort: typeof import('onnxruntime-node');
  try {
    ort = await import('onnxruntime-node'); // loaded with the first onnx embedder: no other command pays for it
  } catch (err) {
    throw fail(`onnxruntime-node cannot be loaded: ${oneLine(err)}`);
  }
  let tokenizer: TextTokenizer;
  try {
    tokenizer = await loadTokenizer(readFileSync(model.tokenizerFile, 'utf8'), model.tokenizerConfigFile ? readFileSync(model.tokenizerConfigFile, 'utf8') : null, model.maxLength);
  } catch (err) {
    throw fail(`${basename(model.tokenizerFile)} is not a tokenizer svc can read: ${oneLine(err)}`);
  }
  let session: InferenceSession;
  try {
    // the runtime's own log lines stay quiet: its errors come back as one-line messages (below)
    session = await ort.InferenceSession.create(model.modelFile, { intraOpNumThreads: setup.threads, interOpNumThreads: 1, graphOptimizationLevel: 'all', logSeverityLevel: 4 });
  } catch (err) {
    throw fail(`${basename(model.modelFile)} is not a model onnxruntime can load: ${oneLine(err)}`);
  }
  const unknown = session.inputNames.filter((n) => !['input_ids', 'attention_mask', 'token_type_ids'].includes(n));
  if (!session.inputNames.includes('input_ids') || unknown.length > 0) {
    throw fail(`the model takes ${session.inputNames.join(', ')}; svc feeds input_ids, attention_mask and token_type_ids`);
  }
  const loaded: Loaded = { ort, session, tokenizer, output: session.outputNames[0], feedsTypes: session.inputNames.includes('token_type_ids') };
  let outputs: InferenceSession.ReturnType;
  try {
    // a tokenizer of another model yields ids past the model's embedding table: better found now than on some text later
    outputs = await session.run(feeds(loaded, [[tokenizer.maxId]]), { logSeverityLevel: 4 });
  } catch (err) {
    throw fail(`the tokenizer (ids up to ${tokenizer.maxId}) does not fit the model: ${oneLine(err)}`);
  }
  const shaped = (rank: number) => session.outputNames.find((n) => outputs[n].dims.length === rank && outputs[n].type === 'float32');
  const chosen = session.outputNames.includes('last_hidden_state') ? 'last_hidden_state' : (shaped(3) ?? shaped(2));
  if (!chosen) throw fail(`no float32 output of shape [batch, tokens, hidden] or [batch, hidden] among ${session.outputNames.join(', ')}`);
  loaded.output = chosen;
  return loaded;
}

/** Tensors of a batch of id lists, padded to the longest. */
function feeds({ ort, feedsTypes, session, tokenizer }: Loaded, batch: number[][]): Record<string, Tensor> {
  const seq = Math.max(1, ...batch.map((ids) => ids.length));
  const ids = new BigInt64Array(batch.length * seq).fill(BigInt(tokenizer.padId));
  const mask = new BigInt64Array(batch.length * seq);
  batch.forEach((row, b) => {
    for (let t = 0; t < row.length; t++) {
      ids[b * seq + t] = BigInt(row[t]);
      mask[b * seq + t] = 1n;
    }
  });
  const dims = [batch.length, seq];
  const out: Record<string, Tensor> = { input_ids: new ort.Tensor('int64', ids, dims) };
  if (session.inputNames.includes('attention_mask')) out.attention_mask = new ort.Tensor('int64', mask, dims);
  if (feedsTypes) out.token_type_ids = new ort.Tensor('int64', new BigInt64Array(batch.length * seq), dims);
  return out;
}

async function embed(m: Loaded, texts: string[]): Promise<{ vectors: Float32Array; dims: number }> {
  const input = feeds(m, texts.map((t) => m.tokenizer.encode(t)));
  const result = (await m.session.run(input, [m.output], { logSeverityLevel: 4 }))[m.output];
  const vectors = pool(result.data as Float32Array, result.dims, input.attention_mask?.data as BigInt64Array ?? new BigInt64Array(input.input_ids.size).fill(1n), model.pooling);
  // always unit length, whatever the model's own Normalize module says: svc's index keeps unit
  // vectors (int8, cosine as a dot product), and cosine ranks a vector and its unit the same
  const dims = vectors[0]?.length ?? 0;
  const flat = new Float32Array(texts.length * dims);
  vectors.forEach((v, i) => flat.set(normalize(v), i * dims));
  return { vectors: flat, dims };
}

const loading = load();
loading.catch(() => {}); // reported to each request below

parentPort!.on('message', async ({ id, texts }: OnnxRequest) => {
  let m: Loaded;
  try {
    m = await loading;
  } catch (err) {
    return parentPort!.postMessage({ id, error: (err as Error).message, load: true } satisfies OnnxReply);
  }
  try {
    const { vectors, dims } = await embed(m, texts);
    parentPort!.postMessage({ id, vectors, dims } satisfies OnnxReply, [vectors.buffer as ArrayBuffer]);
  } catch (err) {
    parentPort!.postMessage({ id, error: `onnx model '${model.dir}' failed on a batch: ${oneLine(err)}`, load: false } satisfies OnnxReply);
  }
});
