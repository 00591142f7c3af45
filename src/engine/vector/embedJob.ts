import { setTimeout as sleep } from 'node:timers/promises';
import type { Datasets } from '../datasets/datasets.js';
import { now } from '../ids.js';
import { INGEST_JOB } from '../ingest/ingest.js';
import type { RunState } from '../ingest/runs.js';
import type { JobQueue, JobState } from '../jobs/queue.js';
import { MAX_KEY, scanPrefix, type Store } from '../store/db.js';
import type { StoredRecord } from '../records.js';
import { documentTexts } from './chunks.js';
import { EmbedderRejected } from './embedders/embedder.js';
import { extractStamps } from './stamps.js';
import type { VectorIndex } from './vectorIndex.js';
import type { Space, VectorIndexes } from './vectorIndexes.js';
import { addVocabulary } from './vocabulary.js';
import { keys } from '../store/keys.js';

/** Records per embedding call: large enough for a provider's batching, small enough to report progress. */
const BATCH = 256;
export const EMBED_JOB = 'semantic_embed';
/** How long a batch waits at most for an ingest running in this process: text first, vectors after. */
const INGEST_FIRST_MS = 1000;

/** A run waiting for its vectors: `[tenant, 'vpend', dataset, run id]`. */
interface Pending {
  run_id: string;
  /** object key of the run: its records carry it */
  key: string;
  /** the dataset's last seq when the run's text was indexed: its records are at or below it */
  upto: number;
  estimate: number;
  embedded: number;
  /** seqs whose last embedding attempt failed and will be tried again */
  failed: number[];
  /** records the provider refused for good */
  rejected: number;
}

/** `[tenant, 'vjob', dataset]`: the embedding job waiting for the dataset, and failures in a row. */
interface JobMark { job_id: string; failures: number }

/**
 * Embedding, off the request path and off the text path: an ingest run whose text is indexed
 * registers itself as pending and leaves `ready` with `lifecycle.state: semantic_pending`; one
 * durable job per dataset then embeds records in sequence order, fills the run's `semantic_*`
 * counters as it goes, and sets `semantic_ready_at` and `ready_for.semantic_search` when the run's
 * records all have vectors. When the provider fails, what failed is counted and the job comes
 * back with a growing delay until it succeeds: no record is left without a vector.
 */
export class EmbedWorker {
  constructor(
    private readonly store: Store,
    private readonly datasets: Datasets,
    private readonly jobs: JobQueue,
    private readonly indexes: VectorIndexes,
    private readonly retryBaseMs: number,
  ) {
    // a local command does not wait for vectors on its way out: a semantic search builds what it needs first
    jobs.register(EMBED_JOB, { handler: (job) => this.run(job), maxAttempts: 5, background: true, serialKey: (job) => `${job.tenant_id}/${job.payload.dataset_id}/semantic` });
  }

  /** The ingest follower: registers the run and wakes the job. Quick: nothing is embedded here. */
  async follow(run: RunState, save: () => void): Promise<void> {
    const t = run.tenant_id;
    const d = run.dataset_id;
    let space;
    try {
      space = this.indexes.space(t, d);
    } catch (err) {
      // a misconfigured embedder must not fail a run whose text is fine
      run.lifecycle = { ...run.lifecycle, reasons: [...run.lifecycle.reasons, `no vectors: ${(err as Error).message}`] };
      return save();
    }
    if (!space) return;
    const estimate = Math.max(0, run.documents.parsed - run.documents.duplicates);
    const pending: Pending = { run_id: run.ingest_run_id, key: run.key, upto: this.datasets.state(t, d).seq, estimate, embedded: 0, failed: [], rejected: 0 };
    Object.assign(run.documents, { semantic_total: estimate, semantic_embedded: 0, semantic_failed: 0 });
    run.ready_for.semantic_search = false;
    run.semantic_ready_at = null;
    run.lifecycle = { ...run.lifecycle, state: 'semantic_pending' };
    await this.store.meta.put(keys.vectorPending(t, d, run.ingest_run_id), pending);
    save();
    await this.kick(t, d);
  }

  /** Makes sure an embedding job for the dataset is waiting (one is enough). */
  async kick(tenantId: string, datasetId: string, dueMs = Date.now(), failures = 0, again = false): Promise<void> {
    const mark: JobMark | undefined = this.store.meta.get(keys.vectorJob(tenantId, datasetId));
    if (mark && failures === 0 && !again) {
      try {
        if (this.jobs.get(tenantId, mark.job_id).status === 'pending') return;
      } catch {
        // the job is gone with its tenant
      }
    }
    const job = await this.jobs.enqueue(tenantId, EMBED_JOB, { dataset_id: datasetId }, dueMs);
    await this.store.meta.put(keys.vectorJob(tenantId, datasetId), { job_id: job.job_id, failures } satisfies JobMark);
  }

  /** Queues the embedding of whatever records of the dataset the index lacks (after a lost snapshot). */
  async repair(tenantId: string, datasetId: string): Promise<void> {
    const upto = this.datasets.state(tenantId, datasetId).seq;
    const pending: Pending = { run_id: '', key: '', upto, estimate: 0, embedded: 0, failed: [], rejected: 0 };
    await this.store.meta.put(keys.vectorPending(tenantId, datasetId, ''), pending);
    await this.kick(tenantId, datasetId);
  }

  private pendings(t: string, d: string): Pending[] {
    return [...scanPrefix<Pending>(this.store.meta, keys.vectorPending(t, d))].map((e) => e.value);
  }

  private async run(job: JobState): Promise<Record<string, unknown>> {
    const t = job.tenant_id;
    const d = String(job.payload.dataset_id);
    const pendings = this.pendings(t, d);
    if (!this.store.meta.get(keys.dataset(t, d))) {
      await this.store.meta.transaction(() => {
        for (const p of pendings) this.store.meta.remove(keys.vectorPending(t, d, p.run_id));
        this.store.meta.remove(keys.vectorJob(t, d));
      });
      return { embedded: 0 };
    }
    const space = this.indexes.space(t, d);
    if (!space) {
      await this.finish(t, d, pendings, null);
      return { embedded: 0 };
    }
    const index = this.indexes.get(t, d, space);
    const target = Math.max(0, ...pendings.map((p) => p.upto));
    const byKey = new Map(pendings.filter((p) => p.key).map((p) => [p.key, p]));
    let embedded = 0;
    let failure: Error | null = null;
    try {
      for (let batch = this.batch(t, d, index.seq, target); batch.length > 0; batch = this.batch(t, d, index.seq, target)) {
        await this.ingestFirst();
        const failed = await this.embedBatch(index, space, batch, byKey);
        if (failed) {
          failure = failed;
          for (const rec of batch) {
            const p = byKey.get(rec.key);
            if (p && !p.failed.includes(rec.seq)) p.failed.push(rec.seq);
          }
          break;
        }
        embedded += batch.length;
        await this.progress(t, d, pendings);
        if (this.jobs.stopping) break; // the process is stopping: a job queued now goes on where this one ends
      }
    } finally {
      index.snapshot();
    }
    if (failure) {
      const mark: JobMark | undefined = this.store.meta.get(keys.vectorJob(t, d));
      const failures = (mark?.failures ?? 0) + 1;
      const delay = Math.min(60_000, this.retryBaseMs * 2 ** (failures - 1));
      await this.progress(t, d, pendings, `embedding failed: ${failure.message}; retrying in ${Math.round(delay / 100) / 10} s`);
      await this.kick(t, d, Date.now() + delay, failures);
      return { embedded, failed: failure.message, retry_in_ms: delay };
    }
    if (this.jobs.stopping && index.seq < target) {
      await this.kick(t, d, Date.now(), 0, true);
      return { embedded, interrupted: true };
    }
    await this.finish(t, d, pendings, index);
    return { embedded };
  }

  /** Embeds records into an index no run waits on (a new generation being built); throws when the provider fails. */
  async embedInto(index: VectorIndex, space: Space, batch: StoredRecord[]): Promise<void> {
    const failed = await this.embedBatch(index, space, batch, new Map());
    if (failed) throw failed;
  }

  /** Lets an ingest running in this process have the CPU: a batch waits for it, up to a second, so embedding slows down without stopping. */
  private async ingestFirst(): Promise<void> {
    const until = Date.now() + INGEST_FIRST_MS;
    while (this.jobs.isRunning(INGEST_JOB) && !this.jobs.stopping && Date.now() < until) await sleep(50);
  }

  /** The next records after `from` up to `to`, in sequence order. */
  batch(t: string, d: string, from: number, to: number): StoredRecord[] {
    return [...this.store.records.getRange({ start: [t, d, from + 1], end: [t, d, to, MAX_KEY], limit: BATCH })].map((e) => e.value);
  }

  /** Embeds one batch into the index; returns the error when the provider could not answer. */
  private async embedBatch(index: VectorIndex, space: Space, batch: StoredRecord[], byKey: Map<string, Pending>): Promise<Error | null> {
    const texts = batch.map((rec) => documentTexts(rec, space.semantic.bySource.get(rec.source_key)?.fields ?? []));
    let vectors: Float32Array[][];
    try {
      vectors = await this.embedAll(space, texts);
    } catch (err) {
      return err as Error;
    }
    batch.forEach((rec, i) => {
      const own = space.semantic.bySource.get(rec.source_key);
      const p = byKey.get(rec.key);
      if (rec.replaces !== undefined) index.remove([rec.replaces]);
      const v = vectors[i];
      if (v === REJECTED) {
        index.skip(rec.seq, true);
        if (p) p.rejected++;
      } else if (v.length === 0) {
        index.skip(rec.seq);
        if (p) p.estimate = Math.max(0, p.estimate - 1);
      } else {
        index.add(rec.seq, v, extractStamps(rec, own?.filters));
        addVocabulary(index, rec, own?.vocabulary);
        if (p) p.embedded++;
      }
      if (p) p.failed = p.failed.filter((s) => s !== rec.seq);
    });
    index.stamped = new Set([...space.semantic.filterFields].filter((f) => !index.stamped || index.stamped.has(f)));
    return null;
  }

  /** Vectors per record; a record the provider refuses for good is marked, and the rest still go in. */
  private async embedAll(space: Space, texts: string[][]): Promise<Float32Array[][]> {
    const flat = texts.flat();
    try {
      const vectors = flat.length > 0 ? await space.embedder.embed(flat, 'document') : [];
      let at = 0;
      return texts.map((t) => vectors.slice(at, (at += t.length)));
    } catch (err) {
      if (!(err instanceof EmbedderRejected) || texts.length === 1) {
        if (err instanceof EmbedderRejected) return [REJECTED];
        throw err;
      }
      const out: Float32Array[][] = [];
      for (const t of texts) out.push(...(await this.embedAll(space, [t])));
      return out;
    }
  }

  /** Writes the counters (and a reason, when the provider failed) into each run that is past its text stage. */
  private async progress(t: string, d: string, pendings: Pending[], reason?: string): Promise<void> {
    await this.store.meta.transaction(() => {
      for (const p of pendings) {
        this.store.meta.put(keys.vectorPending(t, d, p.run_id), p);
        this.updateRun(t, p, (run) => {
          if (reason) run.lifecycle = { state: 'semantic_pending', repairable: true, reasons: [reason] };
        });
      }
    });
  }

  /** Closes every run whose records are all embedded (or refused), or has no semantic config any more. */
  private async finish(t: string, d: string, pendings: Pending[], index: VectorIndex | null): Promise<void> {
    let early = false;
    await this.store.meta.transaction(() => {
      this.store.meta.put(keys.vectorJob(t, d), { ...(this.store.meta.get(keys.vectorJob(t, d)) ?? {}), failures: 0 });
      for (const p of pendings) {
        if (index && p.upto > index.seq) continue;
        p.estimate = p.embedded + p.rejected + p.failed.length;
        const done = this.updateRun(t, p, (run) => {
          const reasons = run.lifecycle.reasons.filter((r) => !r.startsWith('embedding failed'));
          if (p.rejected > 0) reasons.push(`${p.rejected} records were refused by the embedding provider`);
          run.semantic_ready_at = now();
          run.ready_for.semantic_search = index !== null;
          run.lifecycle = { state: 'ready', repairable: false, reasons };
        });
        if (done || !p.run_id) this.store.meta.remove(keys.vectorPending(t, d, p.run_id));
        else early = true;
      }
    });
    // a run registered a moment before its ingest job stored it as ready: look again shortly
    if (early) await this.kick(t, d, Date.now() + 200);
  }

  /** Applies `change` and the counters to a stored run that has left its ingest job; false when it has not yet. */
  private updateRun(t: string, p: Pending, change: (run: RunState) => void): boolean {
    if (!p.run_id) return true;
    const run: RunState | undefined = this.store.meta.get(keys.run(t, p.run_id));
    if (!run) return true;
    if (run.status !== 'ready') return false;
    const failed = p.failed.length + p.rejected;
    Object.assign(run.documents, { semantic_embedded: p.embedded, semantic_failed: failed, semantic_total: Math.max(p.estimate, p.embedded + failed) });
    change(run);
    run.updated_at = now();
    this.store.meta.put(keys.run(t, p.run_id), run);
    return true;
  }
}

const REJECTED: Float32Array[] = [];
