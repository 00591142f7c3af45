import type { RunState } from '../ingest/runs.js';
import { scanPrefix, type Store } from '../store/db.js';
import { keys } from '../store/keys.js';

/** One object a reindex parses again, if its source's config has changed since it was parsed. */
export interface ManifestObject {
  source_id: number;
  bucket: string;
  key: string;
  /** the object's last ready run: what it was parsed with */
  run_id: string;
  status: 'pending' | 'done' | 'failed';
  /** the run that parses it again, once made */
  reparse_run_id?: string;
  /** done without parsing: the current config makes what it made */
  unchanged?: boolean;
}

/** The objects of the dataset (or of one of its sources) whose records are in: the last ready run of each, oldest first. */
export function manifest(store: Store, t: string, d: string, sourceId: number | null): ManifestObject[] {
  const last = new Map<string, RunState>();
  for (const { value: run } of scanPrefix<RunState>(store.meta, keys.run(t))) {
    if (run.dataset_id !== d || run.status !== 'ready' || (sourceId !== null && run.source_id !== sourceId)) continue;
    const held = last.get(run.key);
    if (!held || held.created_at <= run.created_at) last.set(run.key, run);
  }
  return [...last.values()]
    .sort((a, b) => a.created_at.localeCompare(b.created_at))
    .map((run) => ({ source_id: run.source_id, bucket: run.bucket, key: run.key, run_id: run.ingest_run_id, status: 'pending' }));
}
