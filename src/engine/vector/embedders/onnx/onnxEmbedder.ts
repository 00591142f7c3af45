import { createHash } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { basename } from 'node:path';
import { Worker } from 'node:worker_threads';
import { type Embedder, EmbedderUnavailable, type EmbedPurpose } from '../embedder.js';
import { modelHash, OnnxModelError, readModelDir, type ModelDir } from './modelDir.js';
import type { OnnxReply, OnnxSetup } from './protocol.js';
import { onnxWorkerFile } from './workerFile.js';

export interface OnnxOptions {
  /** the model directory (SVC_EMBEDDER_MODEL, or a source's semantic_config.embedder.model) */
  model: string;
  queryPrefix?: string;
  documentPrefix?: string;
  /** texts per model run */
  batch?: number;
  /** batches that may wait per purpose; past that an embed is refused at once */
  documentQueue?: number;
  queryQueue?: number;
  /** onnxruntime's threads: half the cores, the rest for requests, ingest and the text worker */
  threads?: number;
}

interface Batch {
  texts: string[];
  resolve: (v: Float32Array[]) => void;
  reject: (err: Error) => void;
}

/**
 * How model errors surface. A model directory that is missing or lacks a file throws when the
 * embedder is made (at `svc serve` start for SVC_EMBEDDER_MODEL, else where a dataset's space is
 * resolved: the run says "no vectors: …" and a semantic search answers 503 with the reason). A
 * model or tokenizer the worker cannot load or use fails every batch with a plain Error, not
 * EmbedderRejected: the embedding job counts the records failed, says why in the run's lifecycle
 * and tries again with a growing delay, so once the files are fixed the records get their vectors
 * (EmbedderRejected would mark them refused for good). Each new attempt starts a fresh worker.
 * A worker that dies, or a full queue, is EmbedderUnavailable: try later.
 */
export class OnnxEmbedder implements Embedder {
  readonly id: string;
  readonly model: ModelDir;
  private readonly o: Required<Omit<OnnxOptions, 'queryPrefix' | 'documentPrefix'>> & Pick<OnnxOptions, 'queryPrefix' | 'documentPrefix'>;
  private worker: Worker | null = null;
  private readonly waiting: Record<EmbedPurpose, Batch[]> = { query: [], document: [] };
  private current: { id: number; batch: Batch } | null = null;
  private nextId = 1;

  constructor(options: OnnxOptions) {
    this.o = { batch: 32, documentQueue: 256, queryQueue: 64, threads: Math.max(1, Math.floor(availableParallelism() / 2)), ...options };
    this.model = readModelDir(options.model);
    // the document prefix is part of every stored vector; the query prefix is not, and may change freely
    const prefix = options.documentPrefix ? `:doc-${createHash('sha1').update(options.documentPrefix).digest('hex').slice(0, 8)}` : '';
    this.id = `onnx:${basename(this.model.dir)}:${modelHash(this.model)}:${this.model.pooling}:${this.model.maxLength}${prefix}`;
  }

  async embed(texts: string[], purpose: EmbedPurpose): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    const prefix = (purpose === 'query' ? this.o.queryPrefix : this.o.documentPrefix) ?? '';
    // texts of like length share a batch, so little of a run is padding; vectors go back in the callers' order
    const order = texts.map((_, i) => i).sort((a, b) => texts[a].length - texts[b].length);
    const groups: number[][] = [];
    for (let i = 0; i < order.length; i += this.o.batch) groups.push(order.slice(i, i + this.o.batch));
    const queue = this.waiting[purpose];
    if (queue.length + groups.length > (purpose === 'query' ? this.o.queryQueue : this.o.documentQueue)) {
      throw new EmbedderUnavailable('the onnx embedding queue is full');
    }
    const done = groups.map((g) => new Promise<Float32Array[]>((resolve, reject) => queue.push({ texts: g.map((i) => prefix + texts[i]), resolve, reject })));
    this.pump();
    const out = new Array<Float32Array>(texts.length);
    (await Promise.all(done)).forEach((vectors, k) => groups[k].forEach((i, j) => (out[i] = vectors[j])));
    return out;
  }

  /** Ends the worker; batches waiting fail as unavailable. The next embed starts a new one. */
  async close(): Promise<void> {
    const w = this.worker;
    this.failAll(new EmbedderUnavailable('the onnx embedder was closed'));
    await w?.terminate();
  }

  /** Sends the next batch, queries first: a search never waits behind a whole ingest. */
  private pump(): void {
    if (this.current) return;
    const batch = this.waiting.query.shift() ?? this.waiting.document.shift();
    if (!batch) {
      this.worker?.unref(); // an idle worker does not keep a finished command alive
      return;
    }
    let worker: Worker;
    try {
      worker = this.worker ?? this.start();
    } catch (err) {
      batch.reject(new EmbedderUnavailable(`the onnx embedder's worker cannot start: ${(err as Error).message}`));
      return this.pump();
    }
    worker.ref();
    this.current = { id: this.nextId++, batch };
    worker.postMessage({ id: this.current.id, texts: batch.texts });
  }

  private start(): Worker {
    const setup: OnnxSetup = { model: this.model, threads: this.o.threads };
    const worker = new Worker(onnxWorkerFile(), { workerData: setup });
    this.worker = worker;
    worker.on('message', (reply: OnnxReply) => this.answered(worker, reply));
    worker.on('error', (err) => this.died(worker, `failed: ${err.message.split('\n')[0]}`));
    worker.on('exit', (code) => this.died(worker, `exited (code ${code})`));
    return worker;
  }

  private answered(worker: Worker, reply: OnnxReply): void {
    if (worker !== this.worker || reply.id !== this.current?.id) return;
    const { batch } = this.current;
    this.current = null;
    if ('error' in reply) {
      const err = new OnnxModelError(reply.error);
      batch.reject(err);
      if (reply.load) {
        // every batch would fail the same way; a fresh worker on the next embed reads the files again
        this.failAll(err);
        void worker.terminate();
      }
    } else {
      batch.resolve(Array.from({ length: batch.texts.length }, (_, i) => reply.vectors.subarray(i * reply.dims, (i + 1) * reply.dims)));
    }
    this.pump();
  }

  /** The worker is gone (crashed, killed, or ended by us): what it held fails as unavailable. */
  private died(worker: Worker, how: string): void {
    if (worker !== this.worker) return;
    this.failAll(new EmbedderUnavailable(`the onnx embedder's worker ${how}; the next embed starts a new one`));
  }

  private failAll(err: Error): void {
    this.worker = null;
    const pending = [...(this.current ? [this.current.batch] : []), ...this.waiting.query.splice(0), ...this.waiting.document.splice(0)];
    this.current = null;
    for (const b of pending) b.reject(err);
  }
}
