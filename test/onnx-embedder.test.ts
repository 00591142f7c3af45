/**
 * The onnx embedder through its real loading and inference: a tiny model built here (test/helpers/
 * onnxModel.ts) is tokenised by @huggingface/tokenizers and run by onnxruntime in the worker.
 */
import { writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { checkEmbedder, configFromEnv } from '../src/engine/config.js';
import { EmbedderUnavailable, normalize } from '../src/engine/vector/embedders/embedder.js';
import { Embedders } from '../src/engine/vector/embedders/embedders.js';
import { OnnxModelError, readModelDir } from '../src/engine/vector/embedders/onnx/modelDir.js';
import { OnnxEmbedder, type OnnxOptions } from '../src/engine/vector/embedders/onnx/onnxEmbedder.js';
import { pool } from '../src/engine/vector/embedders/onnx/pooling.js';
import { tempDir } from './helpers/cli.js';
import { CLS, VOCAB, writeTinyModel, type TinyModelOptions } from './helpers/onnxModel.js';

const root = tempDir('svc-onnx-');
const open: OnnxEmbedder[] = [];
afterAll(async () => {
  await Promise.all(open.map((e) => e.close()));
  root.remove();
});

let made = 0;
function model(o: TinyModelOptions = {}) {
  return writeTinyModel(join(root.path, `m${++made}`), o);
}
function embedder(dir: string, o: Partial<OnnxOptions> = {}): OnnxEmbedder {
  const e = new OnnxEmbedder({ model: dir, threads: 1, ...o });
  open.push(e);
  return e;
}

/** The mean of the table rows of a text's tokens, [CLS] and [SEP] included, at unit length. */
const expectedMean = (m: ReturnType<typeof model>, text: string) => {
  const ids = m.ids(text);
  const v = new Float32Array(m.dims);
  for (const id of ids) m.row(id).forEach((x, j) => (v[j] += x / ids.length));
  return normalize(v);
};
const close = (a: Float32Array, b: Float32Array) => a.forEach((x, j) => expect(x).toBeCloseTo(b[j], 5));
const length = (v: Float32Array) => Math.hypot(...v);

describe('onnx embedder', () => {
  const m = model({ normalize: true });

  it('reads the model directory: files, pooling, max length; names the space by model hash and pooling', () => {
    const e = embedder(m.dir);
    expect(e.model).toMatchObject({ modelFile: join(m.dir, 'model.onnx'), tokenizerFile: join(m.dir, 'tokenizer.json'), pooling: 'mean', maxLength: 512 });
    expect(e.id).toMatch(/^onnx:m\d+:[0-9a-f]{12}:mean:512$/);
    expect(readModelDir(model({ pooling: 'cls', maxLength: 128, modelPath: 'onnx/model.onnx' }).dir)).toMatchObject({ pooling: 'cls', maxLength: 128 });
    // another model, another space; the same bytes elsewhere, the same hash
    const other = model({ dims: 6 });
    expect(embedder(other.dir).id.split(':')[2]).not.toBe(e.id.split(':')[2]);
    expect(embedder(model({ normalize: true }).dir).id.split(':')[2]).toBe(e.id.split(':')[2]);
  });

  it('gives unit vectors of the model dimension; equal texts, equal vectors', async () => {
    const [a, b, c] = await embedder(m.dir).embed(['disk pressure warning', 'heart attack patient', 'disk pressure warning'], 'document');
    expect(a).toHaveLength(m.dims);
    for (const v of [a, b, c]) expect(length(v)).toBeCloseTo(1, 5);
    expect([...a]).toEqual([...c]);
    expect([...a]).not.toEqual([...b]);
  });

  it('mean pooling is the mean of the table rows of the tokens, [CLS] and [SEP] included; padding is left out', async () => {
    const texts = ['disk pressure warning', 'the cat', 'stock market price is in a report of the service'];
    const vectors = await embedder(m.dir).embed(texts, 'document');
    texts.forEach((t, i) => close(vectors[i], expectedMean(m, t)));
  });

  it('unit length even when the model lists no Normalize module: the index keeps unit vectors', async () => {
    const plain = model();
    const [v] = await embedder(plain.dir).embed(['memory cache node'], 'document');
    expect(length(v)).toBeCloseTo(1, 5);
    close(v, expectedMean(plain, 'memory cache node'));
  });

  it('CLS pooling is the [CLS] row', async () => {
    const cls = model({ pooling: 'cls' });
    const e = embedder(cls.dir);
    expect(e.id).toMatch(/:cls:512$/);
    const [a, b] = await e.embed(['disk pressure', 'heart attack'], 'document');
    close(a, normalize(cls.row(CLS)));
    close(b, normalize(cls.row(CLS)));
  });

  it('feeds token_type_ids to a model that takes them, and uses an already pooled output as is', async () => {
    const typed = model({ tokenTypes: true });
    close((await embedder(typed.dir).embed(['the dog'], 'document'))[0], expectedMean(typed, 'the dog'));
    const pooled = model({ pooled: true });
    close((await embedder(pooled.dir).embed(['the dog'], 'document'))[0], expectedMean(pooled, 'the dog'));
  });

  it('puts the query prefix before queries and the document prefix before documents', async () => {
    const e = embedder(m.dir, { queryPrefix: 'query: ', documentPrefix: 'passage: ' });
    const [q] = await e.embed(['network report'], 'query');
    const [d] = await e.embed(['network report'], 'document');
    close(q, expectedMean(m, 'query : network report'));
    close(d, expectedMean(m, 'passage : network report'));
    expect(e.id).toMatch(/:doc-[0-9a-f]{8}$/);
    // without prefixes both purposes give the same vector
    const bare = embedder(m.dir);
    expect([...(await bare.embed(['network report'], 'query'))[0]]).toEqual([...(await bare.embed(['network report'], 'document'))[0]]);
  });

  it('keeps the order of more texts than a batch holds, of every length', async () => {
    const words = VOCAB.slice(4).filter((w) => !w.startsWith('##'));
    const texts = Array.from({ length: 75 }, (_, i) => Array.from({ length: 1 + ((i * 7) % 13) }, (_, k) => words[(i + k * 3) % words.length]).join(' '));
    const vectors = await embedder(m.dir, { batch: 32 }).embed(texts, 'document');
    expect(vectors).toHaveLength(75);
    texts.forEach((t, i) => close(vectors[i], expectedMean(m, t)));
  });

  it('leaves the event loop free while it embeds: tokenising and inference are in the worker', async () => {
    const texts = Array.from({ length: 3000 }, (_, i) => `${'disk pressure warning node memory cache service report '.repeat(40)} ${i}`);
    const e = embedder(m.dir);
    await e.embed(['warm'], 'document');
    let longest = 0;
    let last = performance.now();
    const timer = setInterval(() => {
      longest = Math.max(longest, performance.now() - last);
      last = performance.now();
    }, 5);
    const started = performance.now();
    await e.embed(texts, 'document');
    const took = performance.now() - started;
    clearInterval(timer);
    expect(took).toBeGreaterThan(200); // long enough for a blocked loop to show
    expect(longest).toBeLessThan(Math.max(150, took / 4));
  });

  it('cuts a text at the model length and keeps its [SEP]', async () => {
    const short = model({ maxLength: 6 });
    const [v] = await embedder(short.dir).embed(['disk pressure warning node memory cache service'], 'document');
    close(v, expectedMean(short, 'disk pressure warning node'));
  });

  it('refuses at once when its queue is full', async () => {
    const e = embedder(m.dir, { batch: 1, documentQueue: 2 });
    await expect(e.embed(['a', 'b', 'c'], 'document')).rejects.toBeInstanceOf(EmbedderUnavailable);
    await expect(e.embed(['a', 'b', 'c'], 'document')).rejects.toThrow(/queue is full/);
    expect(await e.embed(['a', 'b'], 'document')).toHaveLength(2);
  });
});

describe('onnx model errors', () => {
  const good = model();

  it('a missing directory, model or tokenizer.json is a one-line error when the embedder is made', () => {
    expect(() => embedder(join(root.path, 'nowhere'))).toThrow(/^onnx model '.*nowhere': no such directory$/);
    const noModel = model();
    rmSync(join(noModel.dir, 'model.onnx'));
    expect(() => embedder(noModel.dir)).toThrow(/no model\.onnx, onnx\/model\.onnx, model_quantized\.onnx/);
    const noTokenizer = model();
    rmSync(join(noTokenizer.dir, 'tokenizer.json'));
    expect(() => embedder(noTokenizer.dir)).toThrow(OnnxModelError);
    expect(() => embedder(noTokenizer.dir)).toThrow(/no tokenizer\.json in it/);
    const maxPooling = model();
    writeFileSync(join(maxPooling.dir, '1_Pooling', 'config.json'), JSON.stringify({ pooling_mode_max_tokens: true }));
    expect(() => embedder(maxPooling.dir)).toThrow(/pooling pooling_mode_max_tokens; svc pools by CLS token or by mean/);
  });

  it('a corrupt model fails the embed with a clear message, and again on the next try; a good model still works', async () => {
    const corrupt = model();
    writeFileSync(join(corrupt.dir, 'model.onnx'), Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 131 + 7) % 256)));
    const e = embedder(corrupt.dir);
    for (let i = 0; i < 2; i++) {
      const err = await e.embed(['disk', 'pressure'], 'document').catch((x) => x);
      expect(err).toBeInstanceOf(OnnxModelError);
      expect(err.message).toMatch(/^onnx model '.*': model\.onnx is not a model onnxruntime can load: /);
      expect(err.message).not.toContain('\n');
    }
    expect(await embedder(good.dir).embed(['disk'], 'document')).toHaveLength(1);
  });

  it('a tokenizer whose ids pass the model table is found when the model loads', async () => {
    const mismatched = model({ rows: 10 });
    const err = await embedder(mismatched.dir).embed(['network report'], 'query').catch((x) => x);
    expect(err).toBeInstanceOf(OnnxModelError);
    expect(err.message).toMatch(new RegExp(`the tokenizer \\(ids up to ${VOCAB.length - 1}\\) does not fit the model: `));
    expect(err.message).not.toContain('\n');
  });

  it('recovers once the files are fixed, without a restart', async () => {
    const later = model();
    writeFileSync(join(later.dir, 'model.onnx'), 'not a model');
    const e = embedder(later.dir);
    await expect(e.embed(['disk'], 'document')).rejects.toThrow(/not a model onnxruntime can load/);
    writeTinyModel(later.dir);
    const [v] = await e.embed(['disk'], 'document');
    close(v, expectedMean(later, 'disk'));
  });

  it('a worker that dies fails what it held as unavailable; the next embed starts a new one', async () => {
    const e = embedder(good.dir, { batch: 1 });
    await e.embed(['warm'], 'document');
    const texts = Array.from({ length: 50 }, (_, i) => `disk node ${i}`);
    const pending = e.embed(texts, 'document');
    await (e as unknown as { worker: Worker }).worker.terminate();
    const err = await pending.catch((x) => x);
    expect(err).toBeInstanceOf(EmbedderUnavailable);
    expect(err.message).toMatch(/the onnx embedder's worker exited \(code 1\); the next embed starts a new one/);
    close((await e.embed(['disk'], 'document'))[0], expectedMean(good, 'disk'));
  });
});

describe('onnx embedder settings', () => {
  const m = model();

  it('SVC_EMBEDDER=onnx needs SVC_EMBEDDER_MODEL, a model directory that is there (checked for svc serve); prefixes are read as given', () => {
    expect(() => checkEmbedder(configFromEnv({ SVC_EMBEDDER: 'onnx' }))).toThrow(/^SVC_EMBEDDER=onnx needs SVC_EMBEDDER_MODEL/);
    expect(() => checkEmbedder(configFromEnv({ SVC_EMBEDDER: 'onnx', SVC_EMBEDDER_MODEL: join(root.path, 'gone') }))).toThrow(/no such directory/);
    expect(() => checkEmbedder(configFromEnv({ SVC_EMBEDDER: 'onnx', SVC_EMBEDDER_MODEL: m.dir }))).not.toThrow();
    const settings = configFromEnv({ SVC_EMBEDDER: 'onnx', SVC_EMBEDDER_MODEL: m.dir, SVC_EMBEDDER_QUERY_PREFIX: 'query: ', SVC_EMBEDDER_DOCUMENT_PREFIX: 'passage: ' }).semantic.embedder;
    expect(settings).toEqual({ provider: 'onnx', model: m.dir, query_prefix: 'query: ', document_prefix: 'passage: ' });
  });

  it('a source naming another model does not take the server model prefixes; one embedder per settings', () => {
    const embedders = new Embedders({ provider: 'onnx', model: m.dir, query_prefix: 'query: ' }, {}, undefined, { threads: 1 });
    expect(embedders.resolve(undefined).query_prefix).toBe('query: ');
    expect(embedders.resolve({ provider: 'onnx', model: '/other' }).query_prefix).toBeUndefined();
    expect(embedders.resolve({ provider: 'onnx', model: '/other', query_prefix: 'q: ' }).query_prefix).toBe('q: ');
    const a = embedders.get(embedders.resolve(undefined));
    expect(a).toBe(embedders.get(embedders.resolve({ provider: 'onnx' })));
    expect(a.id).toMatch(/^onnx:/);
    expect(() => embedders.get({ provider: 'onnx' })).toThrow(/needs a model directory/);
    open.push(a as OnnxEmbedder);
  });
});

describe('pooling', () => {
  it('means over kept tokens only, takes the first token for CLS, and passes pooled output through', () => {
    // two texts of two tokens, hidden 2; the second text's second token is padding
    const data = Float32Array.from([1, 2, 3, 4, 10, 20, 99, 99]);
    const mask = BigInt64Array.from([1n, 1n, 1n, 0n]);
    expect(pool(data, [2, 2, 2], mask, 'mean').map((v) => [...v])).toEqual([[2, 3], [10, 20]]);
    expect(pool(data, [2, 2, 2], mask, 'cls').map((v) => [...v])).toEqual([[1, 2], [10, 20]]);
    expect(pool(Float32Array.from([1, 2, 3, 4]), [2, 2], mask, 'mean').map((v) => [...v])).toEqual([[1, 2], [3, 4]]);
  });
});
