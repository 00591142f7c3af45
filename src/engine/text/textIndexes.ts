import { Worker } from 'node:worker_threads';
import type { SearchConfig } from '../../api/sources.js';
import type { Build, DerivedIndex } from '../derived/derivedIndex.js';
import { asDiskFull } from '../diskErrors.js';
import { Unavailable } from '../errors.js';
import type { RunState } from '../ingest/runs.js';
import { now } from '../ids.js';
import { logProblem } from '../log.js';
import type { StoredRecord } from '../records.js';
import { removePrefix, type Store } from '../store/db.js';
import { keys } from '../store/keys.js';
import { searchTimeout } from '../search/deadline.js';
import type { SearchOptions, Staged, Target, TextRecord, TextReply, TextRequest, TextResult } from './protocol.js';
import { textWorkerFile } from './workerFile.js';

const INDEXED_MEMBERS = new Set(['title', 'body']);
/** Records a new generation takes per message: searches queued behind it wait at most for one slice. */
const FILL_SLICE = 5000;

interface Waiting { resolve: (value: unknown) => void; reject: (err: Error) => void; timeoutMs?: number }

/**
 * The text indexes of a data dir. They live on a worker thread, so that indexing overlaps the
 * parsing and committing of the next batch on the main thread. Calls are answered one at a time,
 * in the order they were made: a search waits for the batches queued before it (at most a few)
 * and for a snapshot being written. A worker that dies is started again on the next call, and its
 * indexes come back from their snapshots and the store.
 */
export class TextIndexes implements DerivedIndex {
  readonly name = 'text';
  private worker: Worker | null = null;
  private nextId = 0;
  private readonly waiting = new Map<number, Waiting>();

  constructor(
    private readonly store: Store,
    private readonly dataDir: string,
    private readonly configOf: (tenantId: string, datasetId: string) => SearchConfig,
    /** records the in-memory segment of an index holds before it is sealed into a file */
    private readonly segmentRecords: number,
  ) {}

  /** Indexes records just committed, in sequence order: a run's text is searchable batch by batch. */
  added(t: string, d: string, records: StoredRecord[]): Promise<void> {
    const target = this.target(t, d);
    const whole = target.config.text_fields.some((f) => !INDEXED_MEMBERS.has(f.field));
    const slim = records.map((r): TextRecord => (whole ? r : { seq: r.seq, replaces: r.replaces, title: r.title, body: r.body }));
    return this.call({ op: 'add', target, records: slim });
  }

  /** Resolves once the index holds every record committed before the call. */
  catchUp(t: string, d: string): Promise<void> {
    return this.call({ op: 'catchUp', target: this.target(t, d) });
  }

  /**
   * BM25 matches; past `options.deadline` — while scoring, or still waiting behind other work of the
   * worker — it rejects with a search timeout (a late answer is then dropped).
   */
  search(t: string, d: string, text: string, options: SearchOptions, timeoutMs: number): Promise<TextResult> {
    const answer = this.call<TextResult>({ op: 'search', target: this.target(t, d), text, options }, timeoutMs);
    if (!Number.isFinite(options.deadline)) return answer; // work without a deadline (a cancellable job)
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(searchTimeout(timeoutMs)), Math.max(0, options.deadline - Date.now()));
      timer.unref();
    });
    return Promise.race([answer, late]).finally(() => clearTimeout(timer));
  }

  async follow(run: RunState, save: () => void): Promise<void> {
    await this.catchUp(run.tenant_id, run.dataset_id);
    run.documents.index_committed = run.documents.parsed;
    run.text_indexed_at = now();
    run.ready_for.text_search = true;
    run.lifecycle = { state: 'text_indexed', repairable: false, reasons: [] };
    save();
  }

  deleting(t: string, d: string, seqs: number[]): void {
    for (const seq of seqs) this.store.meta.put(keys.textTomb(t, d, seq), 1);
  }

  /** Should the worker not take them now, the tombstones make the index drop them when it next opens. */
  async removed(t: string, d: string, seqs: number[]): Promise<void> {
    await this.call({ op: 'remove', target: this.target(t, d), seqs }).catch(() => {});
  }

  async snapshot(t: string, d: string): Promise<void> {
    await this.removeTombstones(t, d, await this.call({ op: 'snapshot', target: this.target(t, d) }));
  }

  /** Closes the dataset's index and removes its snapshots and tombstones. */
  async dropDataset(t: string, d: string): Promise<void> {
    await this.call({ op: 'forget', t, d });
    const g = this.generation(t, d);
    await this.call({ op: 'discard', staged: { t, d, generation: g } });
    await this.store.meta.transaction(() => {
      removePrefix(this.store.meta, keys.textTomb(t, d));
      this.store.meta.remove(keys.textGeneration(t, d));
    });
  }

  async dropTenant(t: string): Promise<void> {
    await this.call({ op: 'forget', t });
  }

  generation(t: string, d: string): number {
    return this.store.meta.get(keys.textGeneration(t, d)) ?? 0;
  }

  /** A new generation fills on the worker a slice per message, so that searches keep their turn. */
  async build(t: string, d: string, generation: number): Promise<Build> {
    const staged: Staged = { t, d, generation };
    await this.call({ op: 'stage', target: this.target(t, d), generation });
    return {
      fill: async (upto, stop) => {
        for (let total = 0; ; ) {
          stop?.();
          const n = await this.call<number>({ op: 'fill', staged, upto, limit: FILL_SLICE });
          if (n === 0) return total;
          total += n;
        }
      },
      seal: () => this.call({ op: 'seal', staged }),
      discard: () => this.call({ op: 'discard', staged }),
    };
  }

  point(t: string, d: string, generation: number): void {
    this.store.meta.put(keys.textGeneration(t, d), generation);
  }

  promote(t: string, d: string, generation: number): Promise<void> {
    return this.call({ op: 'promote', target: this.target(t, d), generation });
  }

  /** Writes every changed index to disk and stops the worker. */
  async close(): Promise<void> {
    if (!this.worker) return;
    try {
      const written = await this.call<{ t: string; d: string; gone: number[]; error?: string }[]>({ op: 'snapshotAll' });
      for (const { t, d, gone, error } of written) {
        if (error) logProblem('text_snapshot_failed', new Error(error), { tenant_id: t, dataset_id: d });
        // tombstones a snapshot made unnecessary: harmless when they stay (the next snapshot removes them)
        else await this.removeTombstones(t, d, gone).catch((err) => logProblem('tombstones_not_removed', err, { tenant_id: t, dataset_id: d }));
      }
    } finally {
      const worker = this.worker;
      this.worker = null;
      await worker?.terminate();
    }
  }

  private async removeTombstones(t: string, d: string, seqs: number[]): Promise<void> {
    if (seqs.length === 0) return;
    await this.store.meta.transaction(() => {
      for (const seq of seqs) this.store.meta.remove(keys.textTomb(t, d, seq));
    });
  }

  private target(t: string, d: string): Target {
    return { t, d, config: this.configOf(t, d) };
  }

  private call<T>(req: TextRequest, timeoutMs?: number): Promise<T> {
    const worker = (this.worker ??= this.start());
    const id = ++this.nextId;
    if (this.waiting.size === 0) worker.ref(); // an answer is due: the process must wait for it
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (value: unknown) => void, reject, timeoutMs });
      worker.postMessage({ id, req });
    });
  }

  private start(): Worker {
    const worker = new Worker(textWorkerFile(), { workerData: { dataDir: this.dataDir, mapSize: this.store.mapSize, segmentRecords: this.segmentRecords } });
    worker.on('message', (reply: TextReply) => {
      if ('problem' in reply) return logProblem(reply.problem, new Error(reply.error), { tenant_id: reply.t, dataset_id: reply.d });
      const waiting = this.waiting.get(reply.id);
      this.waiting.delete(reply.id);
      if (this.waiting.size === 0) worker.unref();
      if ('error' in reply) waiting?.reject(reply.timeout ? searchTimeout(waiting.timeoutMs ?? 0) : (asDiskFull(Object.assign(new Error(`text index: ${reply.error}`), { code: reply.code }), 'a text index') as Error));
      else waiting?.resolve(reply.value);
    });
    worker.on('error', (err) => this.lost(worker, err));
    worker.on('exit', (code) => this.lost(worker, new Error(`exited with code ${code}`)));
    return worker;
  }

  private lost(worker: Worker, err: Error): void {
    if (this.worker !== worker) return;
    this.worker = null;
    for (const waiting of this.waiting.values()) waiting.reject(new Unavailable(`the text index worker stopped: ${err.message}`));
    this.waiting.clear();
  }
}
