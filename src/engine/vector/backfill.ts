import { setImmediate as yieldNow } from 'node:timers/promises';
import type { BackfillCreate, BackfillJob } from '../../api/semantic.js';
import type { Caller } from '../auth/caller.js';
import type { Datasets } from '../datasets/datasets.js';
import { Conflict, NotFound } from '../errors.js';
import { Permanent, type JobQueue, type JobState } from '../jobs/queue.js';
import type { Sources } from '../sources/sources.js';
import type { Store } from '../store/db.js';
import type { DatasetSemantic } from './config.js';
import { extractStamps } from './stamps.js';
import { addVocabulary } from './vocabulary.js';
import type { VectorIndexes } from './vectorIndexes.js';

const TYPE = 'semantic_filter_backfill';
const PROGRESS_EVERY = 2000;

interface Progress { sources_processed: number; objects_processed: number; records_restamped: number; filter_fields: string[] }

/**
 * Filter backfill: applies filter fields declared after records were embedded. Each record's
 * filter values are read again from the record and stamped onto its existing vectors; nothing is
 * embedded. Scoped to a dataset, or to one of its sources. Vocabulary fields are read again on the
 * way, so a newly declared vocabulary takes effect the same way.
 */
export class FilterBackfill {
  constructor(
    private readonly store: Store,
    private readonly jobs: JobQueue,
    private readonly datasets: Datasets,
    private readonly sources: Sources,
    private readonly indexes: VectorIndexes,
  ) {
    jobs.register(TYPE, { handler: (job) => this.run(job), maxAttempts: 3, serialKey: (job) => `${job.tenant_id}/${job.payload.dataset_id}/semantic` });
  }

  async start(caller: Caller, req: BackfillCreate): Promise<BackfillJob> {
    const t = caller.tenant_id;
    this.datasets.state(t, req.dataset_id);
    if (req.source_id != null && this.sources.get(t, req.source_id).dataset_id !== req.dataset_id) {
      throw new NotFound(`source ${req.source_id} does not feed dataset '${req.dataset_id}'`);
    }
    if (!this.indexes.space(t, req.dataset_id)) throw new Conflict(`dataset '${req.dataset_id}' has no vectors to stamp: no source of it embeds any field`);
    const job = await this.jobs.enqueue(t, TYPE, { dataset_id: req.dataset_id, source_id: req.source_id ?? null });
    return view(job);
  }

  get(caller: Caller, jobId: string): BackfillJob {
    const job = this.jobs.get(caller.tenant_id, jobId);
    if (job.type !== TYPE) throw new NotFound(`filter backfill job '${jobId}' not found`);
    return view(job);
  }

  private async run(job: JobState): Promise<Record<string, unknown>> {
    const t = job.tenant_id;
    const d = String(job.payload.dataset_id);
    const sourceId = job.payload.source_id as number | null;
    const space = this.indexes.space(t, d);
    if (!space) throw new Permanent(`dataset '${d}' has no vectors`);
    const index = this.indexes.get(t, d, space);
    const keys = new Set((sourceId != null ? [this.sources.get(t, sourceId)] : this.sources.ofDataset(t, d)).map((s) => s.source_key));
    const objects = new Set<string>();
    const seen = new Set<string>();
    const progress: Progress = { sources_processed: 0, objects_processed: 0, records_restamped: 0, filter_fields: declaredFilters(space.semantic, keys) };
    const report = async () => {
      Object.assign(progress, { sources_processed: seen.size, objects_processed: objects.size });
      job.result = { ...progress };
      await this.jobs.update(job);
    };
    const whole = sourceId == null || this.sources.ofDataset(t, d).length === 1;
    if (whole) index.vocabulary.clear();
    let n = 0;
    for (const seq of [...index.seqs()]) {
      const rec = this.store.records.get([t, d, seq]);
      if (!rec || !keys.has(rec.source_key)) continue;
      const own = space.semantic.bySource.get(rec.source_key);
      index.restamp(seq, extractStamps(rec, own?.filters));
      addVocabulary(index, rec, own?.vocabulary);
      objects.add(rec.key);
      seen.add(rec.source_key);
      progress.records_restamped++;
      if (++n % PROGRESS_EVERY === 0) {
        await report();
        await yieldNow(); // searches go on between slices
      }
    }
    // every vector now carries the current filter fields, unless only some sources were restamped
    if (whole) index.stamped = new Set(space.semantic.filterFields);
    index.markDirty();
    index.snapshot();
    await report();
    return { ...progress };
  }
}

/**
 * The filter fields the job stamps: every field a restamped source declares (the union), though a
 * field only some sources declare is not one the vector search can pick candidates by alone.
 */
function declaredFilters(semantic: DatasetSemantic, sourceKeys: Set<string>): string[] {
  const fields = new Set<string>();
  for (const key of sourceKeys) for (const f of semantic.bySource.get(key)?.filters ?? []) fields.add(f.field);
  return [...fields];
}

function view(job: JobState): BackfillJob {
  const p = (job.result ?? {}) as Partial<Progress>;
  return {
    job_id: job.job_id,
    tenant_id: job.tenant_id,
    status: job.status as BackfillJob['status'],
    dataset_id: String(job.payload.dataset_id),
    source_id: (job.payload.source_id as number | null) ?? null,
    filter_fields: p.filter_fields ?? [],
    sources_processed: p.sources_processed ?? 0,
    objects_processed: p.objects_processed ?? 0,
    records_restamped: p.records_restamped ?? 0,
    error_message: job.error_message,
    created_at: job.created_at,
    started_at: job.started_at,
    completed_at: job.completed_at,
    updated_at: job.updated_at,
  };
}
