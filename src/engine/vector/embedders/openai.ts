import { setTimeout as sleep } from 'node:timers/promises';
import { type Embedder, EmbedderRejected, EmbedderUnavailable, type EmbedPurpose, normalize } from './embedder.js';
import { Limiter } from './limiter.js';

export interface OpenAIOptions {
  url: string;
  model: string;
  apiKey?: string;
  /** inputs per request */
  batch?: number;
  /** requests in flight per purpose, and how many may wait behind them */
  concurrency?: number;
  queue?: number;
  /** per request; queries get the shorter one: a search should fail fast */
  documentTimeoutMs?: number;
  queryTimeoutMs?: number;
  /** tries per request for 429, 5xx, timeouts and refused connections */
  documentAttempts?: number;
  queryAttempts?: number;
  backoffMs?: number;
}

const DEFAULTS = { batch: 64, concurrency: 4, queue: 64, documentTimeoutMs: 30_000, queryTimeoutMs: 5_000, documentAttempts: 4, queryAttempts: 2, backoffMs: 500 };

/** `http://host:port`, `…/v1` or the full `…/v1/embeddings`: all name the same endpoint. */
export function embeddingsUrl(url: string): string {
  const base = url.replace(/\/+$/, '');
  if (base.endsWith('/embeddings')) return base;
  return base.endsWith('/v1') ? `${base}/embeddings` : `${base}/v1/embeddings`;
}

/**
 * Any OpenAI-compatible `/v1/embeddings` (OpenAI, Ollama, vLLM, TEI, LM Studio). Inputs go in
 * batches, with bounded concurrency kept apart for queries and documents so that a large ingest
 * never makes searches wait behind it.
 */
export class OpenAIEmbedder implements Embedder {
  readonly id: string;
  private readonly o: typeof DEFAULTS & OpenAIOptions;
  private readonly endpoint: string;
  private readonly lanes: Record<EmbedPurpose, Limiter>;

  constructor(options: OpenAIOptions) {
    this.o = { ...DEFAULTS, ...options };
    this.endpoint = embeddingsUrl(options.url);
    this.id = `openai:${options.model}@${this.endpoint}`;
    this.lanes = { document: new Limiter(this.o.concurrency, this.o.queue), query: new Limiter(this.o.concurrency, this.o.queue) };
  }

  async embed(texts: string[], purpose: EmbedPurpose): Promise<Float32Array[]> {
    const batches: string[][] = [];
    for (let i = 0; i < texts.length; i += this.o.batch) batches.push(texts.slice(i, i + this.o.batch));
    const done = await Promise.all(batches.map((b) => this.lanes[purpose].run(() => this.call(b, purpose))));
    return done.flat();
  }

  private async call(input: string[], purpose: EmbedPurpose): Promise<Float32Array[]> {
    const attempts = purpose === 'query' ? this.o.queryAttempts : this.o.documentAttempts;
    const timeout = purpose === 'query' ? this.o.queryTimeoutMs : this.o.documentTimeoutMs;
    let last: Error = new EmbedderUnavailable('no attempt made');
    for (let attempt = 1; attempt <= attempts; attempt++) {
      let retryAfterMs = 0;
      try {
        const { request } = await import('undici'); // loaded when first used: most commands never call a provider
        const res = await request(this.endpoint, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(this.o.apiKey ? { authorization: `Bearer ${this.o.apiKey}` } : {}) },
          body: JSON.stringify({ model: this.o.model, input }),
          headersTimeout: timeout,
          bodyTimeout: timeout,
          signal: AbortSignal.timeout(timeout),
        });
        const text = await res.body.text();
        if (res.statusCode === 200) return parse(text, input.length);
        const why = `embedding provider answered ${res.statusCode}: ${text.slice(0, 200)}`;
        if (res.statusCode !== 429 && res.statusCode < 500) throw new EmbedderRejected(why);
        last = new EmbedderUnavailable(why);
        retryAfterMs = Number(res.headers['retry-after']) * 1000 || 0;
      } catch (err) {
        if (err instanceof EmbedderRejected) throw err;
        last = err instanceof EmbedderUnavailable ? err : new EmbedderUnavailable(`embedding provider unreachable: ${(err as Error).message}`);
      }
      if (attempt < attempts) await sleep(Math.min(10_000, Math.max(retryAfterMs, this.o.backoffMs * 2 ** (attempt - 1) * (0.5 + Math.random()))));
    }
    throw last;
  }
}

function parse(text: string, expected: number): Float32Array[] {
  let body: { data?: { embedding: number[]; index?: number }[] };
  try {
    body = JSON.parse(text);
  } catch {
    throw new EmbedderUnavailable('embedding provider sent a body that is not JSON');
  }
  const data = body.data;
  if (!Array.isArray(data) || data.length !== expected) throw new EmbedderUnavailable(`embedding provider sent ${data?.length ?? 0} vectors for ${expected} inputs`);
  return [...data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0)).map((d) => normalize(Float32Array.from(d.embedding)));
}
