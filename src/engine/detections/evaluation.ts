import type { JobQueue } from '../jobs/queue.js';
import type { Key, Store } from '../store/db.js';
import { keys } from '../store/keys.js';
import type { StoredHit } from './hits.js';
import { MemoryGroups, type NewHit, withId } from './rules.js';
import type { StoredDetection } from './stored.js';
import type { Webhooks } from './webhooks.js';

/** What evaluating one detection over some records came to, waiting to be stored. */
export interface Outcome {
  det: StoredDetection;
  hits: NewHit[];
  groups: MemoryGroups;
  /** the key that says how far the detection got, and its new value */
  progress: [key: Key, value: unknown];
}

/** A group's matches, as the store keeps them. */
export function storedGroups(store: Store, t: string, detectionId: string): MemoryGroups {
  return new MemoryGroups((g) => store.meta.get(keys.detectionGroup(t, detectionId, g)));
}

/**
 * Stores outcomes in one transaction: the hits, the groups, how far each detection got, and a
 * delivery job per hit and action. A detection updated or deleted meanwhile keeps none of it.
 * Either all of it is stored or none: a crash before the commit evaluates the same records again.
 */
export async function commitOutcomes(store: Store, jobs: JobQueue, webhooks: Webhooks, t: string, outcomes: Outcome[]): Promise<StoredHit[]> {
  const stored: StoredHit[] = [];
  const touched = Date.now();
  await store.meta.transaction(() => {
    for (const o of outcomes) {
      const current: StoredDetection | undefined = store.meta.get(keys.detection(t, o.det.detection_id));
      if (current?.version !== o.det.version) continue;
      store.meta.put(o.progress[0], o.progress[1]);
      for (const [g, state] of o.groups.touched) store.meta.put(keys.detectionGroup(t, o.det.detection_id, g), { ...state, touched });
      for (const h of o.hits) {
        const hit = withId(h);
        store.meta.put(keys.hit(t, hit.detection_id, hit.hit_id), hit);
        webhooks.stage(t, current, hit);
        stored.push(hit);
      }
    }
  });
  if (outcomes.some((o) => o.hits.length > 0 && o.det.actions.length > 0)) jobs.poke();
  return stored;
}
