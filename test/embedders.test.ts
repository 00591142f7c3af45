import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configFromEnv } from '../src/engine/config.js';
import type { StoredRecord } from '../src/engine/records.js';
import { documentTexts, MAX_CHUNKS, split } from '../src/engine/vector/chunks.js';
import { BuiltinEmbedder } from '../src/engine/vector/embedders/builtin.js';
import { EmbedderRejected, EmbedderUnavailable } from '../src/engine/vector/embedders/embedder.js';
import { Embedders } from '../src/engine/vector/embedders/embedders.js';
import { embeddingsUrl, OpenAIEmbedder } from '../src/engine/vector/embedders/openai.js';
import { wordVectors, type WordVectors } from '../src/engine/vector/embedders/wordVectors.js';
import { fakeEmbeddings, fakeVector } from './helpers/fakeEmbeddings.js';

const cos = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i], 0);

describe('builtin embedder', () => {
  let words: WordVectors;
  let embedder: BuiltinEmbedder;
  beforeAll(async () => {
    words = await wordVectors();
    embedder = new BuiltinEmbedder(words);
  });

  it('reads real word vectors: neighbours in meaning are near, unrelated words are not', () => {
    expect(words.dims).toBe(100);
    expect(words.count).toBeGreaterThan(100_000);
    const near = words.cosine(words.row('doctor'), words.row('physician'));
    const far = words.cosine(words.row('doctor'), words.row('banana'));
    expect(near).toBeGreaterThan(0.6);
    expect(near).toBeGreaterThan(far + 0.3);
  });

  it('pools a document into a unit vector that sides with texts about the same thing', async () => {
    const [heart, cardiac, stock] = await embedder.embed(['heart attack in elderly patients', 'myocardial infarction among older adults', 'quarterly stock market earnings report']);
    expect(Math.hypot(...heart)).toBeCloseTo(1, 5);
    // no word in common, yet nearer than a text about something else: it is not a hash of the text
    expect(cos(heart, cardiac)).toBeGreaterThan(cos(heart, stock) + 0.2);
  });

  it('is deterministic, and gives a zero vector when no word is known', async () => {
    const [a] = await embedder.embed(['white matter diffusion']);
    const [b] = await embedder.embed(['white matter diffusion']);
    expect([...a]).toEqual([...b]);
    const [none] = await embedder.embed(['qqqzzzxxyy']);
    expect([...none].every((x) => x === 0)).toBe(true);
  });
});

describe('chunks', () => {
  const rec = (title: string, body: string) => ({ id: '1', seq: 1, title, body, time: null, metadata: {} }) as unknown as StoredRecord;

  it('cuts at whitespace into pieces of at most max_chars', () => {
    const pieces = split('alpha beta gamma delta epsilon', 12);
    expect(pieces).toEqual(['alpha beta', 'gamma delta', 'epsilon']);
    expect(split('x'.repeat(25), 10)).toEqual(['x'.repeat(10), 'x'.repeat(10), 'x'.repeat(5)]);
  });

  it('chunks long text into more vectors: the first joins the title with the start of the body', () => {
    const texts = documentTexts(rec('Title here', 'one two three four five six'), [
      { field: 'title', max_chars: 100 },
      { field: 'body', max_chars: 10 },
    ]);
    expect(texts).toEqual(['Title here\none two', 'three four', 'five six']);
  });

  it('keeps at most MAX_CHUNKS chunks, and none for a record without text', () => {
    expect(documentTexts(rec('', 'word '.repeat(1000)), [{ field: 'body', max_chars: 20 }])).toHaveLength(MAX_CHUNKS);
    expect(documentTexts(rec('', ''), [{ field: 'body', max_chars: 20 }])).toEqual([]);
  });
});

describe('openai-compatible embedder', () => {
  let fake: Awaited<ReturnType<typeof fakeEmbeddings>>;
  beforeAll(async () => {
    fake = await fakeEmbeddings();
  });
  afterAll(() => fake.close());
  const make = (o: Partial<ConstructorParameters<typeof OpenAIEmbedder>[0]> = {}) =>
    new OpenAIEmbedder({ url: fake.url, model: 'fake-model', batch: 4, backoffMs: 5, documentTimeoutMs: 300, queryTimeoutMs: 300, ...o });

  it('names the endpoint the same way from a host, a /v1 base or the full path', () => {
    expect(embeddingsUrl('http://h:1')).toBe('http://h:1/v1/embeddings');
    expect(embeddingsUrl('http://h:1/v1/')).toBe('http://h:1/v1/embeddings');
    expect(embeddingsUrl('http://h:1/v1/embeddings')).toBe('http://h:1/v1/embeddings');
  });

  it('sends inputs in batches and keeps their order', async () => {
    fake.set('ok');
    const before = fake.state.requests;
    const texts = Array.from({ length: 10 }, (_, i) => `text number ${i}`);
    const vectors = await make().embed(texts, 'document');
    expect(fake.state.requests - before).toBe(3);
    expect(fake.state.lastModel).toBe('fake-model');
    const expected = fakeVector('text number 7');
    const n = Math.hypot(...expected);
    expect(vectors[7][0]).toBeCloseTo(expected[0] / n, 5);
  });

  it('retries 429 and 500 with backoff, then gives up as unavailable', async () => {
    for (const mode of ['rate429', 'error500'] as const) {
      fake.set(mode);
      const before = fake.state.requests;
      await expect(make({ documentAttempts: 3 }).embed(['a'], 'document')).rejects.toBeInstanceOf(EmbedderUnavailable);
      expect(fake.state.requests - before).toBe(3);
    }
  });

  it('times out a provider that does not answer, and reports a reset connection', async () => {
    for (const mode of ['hang', 'reset'] as const) {
      fake.set(mode);
      const started = Date.now();
      await expect(make({ queryAttempts: 1 }).embed(['a'], 'query')).rejects.toBeInstanceOf(EmbedderUnavailable);
      expect(Date.now() - started).toBeLessThan(5000);
    }
  });

  it('does not retry a 400: the input is refused for good', async () => {
    fake.set('bad400');
    const before = fake.state.requests;
    await expect(make().embed(['a'], 'document')).rejects.toBeInstanceOf(EmbedderRejected);
    expect(fake.state.requests - before).toBe(1);
  });

  it('refuses at once when its queue is full instead of piling up requests', async () => {
    fake.set('hang');
    const embedder = make({ concurrency: 1, queue: 1, queryAttempts: 1 });
    const first = embedder.embed(['a'], 'query');
    const second = embedder.embed(['b'], 'query');
    await expect(embedder.embed(['c'], 'query')).rejects.toThrow(/queue is full/);
    await expect(first).rejects.toBeInstanceOf(EmbedderUnavailable);
    await expect(second).rejects.toBeInstanceOf(EmbedderUnavailable);
  });
});

describe('embedder settings', () => {
  it('takes the server default from the environment and lets a source override provider, model and URL', () => {
    const settingsFromEnv = (env: Record<string, string>) => configFromEnv(env).semantic.embedder;
    const defaults = settingsFromEnv({ SVC_EMBEDDER: 'openai', SVC_EMBEDDER_URL: 'http://x', SVC_EMBEDDER_MODEL: 'm', SVC_EMBEDDER_API_KEY: 'k' });
    expect(defaults).toEqual({ provider: 'openai', url: 'http://x', model: 'm', api_key: 'k' });
    expect(settingsFromEnv({}).provider).toBe('builtin');
    expect(() => settingsFromEnv({ SVC_EMBEDDER: 'magic' })).toThrow(/builtin, openai or onnx/);
    const embedders = new Embedders(defaults);
    expect(embedders.resolve({ provider: 'openai', model: 'other' })).toEqual({ provider: 'openai', url: 'http://x', model: 'other', api_key: 'k' });
    expect(embedders.resolve({ provider: 'builtin' }).provider).toBe('builtin');
    expect(embedders.get(embedders.resolve(undefined)).id).toMatch(/^openai:m@http:\/\/x\/v1\/embeddings$/);
    expect(() => embedders.get({ provider: 'onnx' })).toThrow(/needs a model directory/);
  });
});
