import { NotFound } from '../errors.js';
import type { DatasetState } from '../datasets/datasets.js';
import { LIMITS } from '../../api/limits.js';
import { FieldBudget, TOO_MANY_FIELDS } from '../fields/budget.js';
import { countFields, recordFields, recordFieldsBuffer, type ValueType } from '../fields/discover.js';
import { now } from '../ids.js';
import { storedRecord, type NewRecord, type StoredRecord } from '../records.js';
import type { Store } from '../store/db.js';
import { MAX_REPORTED_ERRORS, type RunState } from './runs.js';
import { keys } from '../store/keys.js';
import { unseenIds } from './unseenIds.js';

const ID_TOO_LONG = `an id longer than ${LIMITS.recordId} bytes`;
const PATH_TOO_LONG = `a field path longer than ${LIMITS.fieldPath} characters`;

export interface Batch {
  records: NewRecord[];
  errors: { line: number; reason: string }[];
  /** the last source line this batch covers */
  lastLine: number;
}

const sameContent = (a: StoredRecord, b: NewRecord) =>
  a.body === b.body && a.title === b.title && a.time === b.time && JSON.stringify(a.metadata) === JSON.stringify(b.metadata) &&
  JSON.stringify(a.names ?? null) === JSON.stringify(b.names ?? null);

/** Keeps `time_ordered` true while each record's time is at or after the one before it. */
function followTimeOrder(ds: DatasetState, time: string | null): void {
  const ms = time === null ? NaN : Date.parse(time);
  if (Number.isNaN(ms) || ms < (ds.last_time ?? -Infinity)) {
    ds.time_ordered = false;
    delete ds.last_time;
  } else {
    ds.last_time = ms;
  }
}

/**
 * Commits one batch — its records, the dataset's sequence and counts, the fields it shows, and the
 * run's counters — in one LMDB transaction, so that after a crash either all of it is there or none.
 * A record that would take its dataset past the field limit is not stored: it moves to the batch's
 * errors (so the batch then says what was stored and what was refused). Returns the records that
 * were added or replaced, in sequence order.
 */
export async function commitBatch(store: Store, run: RunState, batch: Batch): Promise<StoredRecord[]> {
  const t = run.tenant_id;
  const d = run.dataset_id;
  const fields = new Map<string, Map<ValueType, { count: number; sample: unknown }>>();
  const createdAt = now();

  return store.meta.transaction(() => {
    const ds: DatasetState | undefined = store.meta.get(keys.dataset(t, d));
    if (!ds) throw new NotFound(`dataset '${d}' not found`);
    const added: StoredRecord[] = [];
    const kept: NewRecord[] = [];
    const refused: Batch['errors'] = [];
    const budget = FieldBudget.of(store, t, d);
    const recFields = recordFieldsBuffer();
    let duplicates = 0;
    const unseen = unseenIds(store, t, d, batch.records.map((r) => r.id));
    for (const rec of batch.records) {
      // an id or a field path becomes part of an LMDB key, and keys are bounded
      if (Buffer.byteLength(rec.id) > LIMITS.recordId) {
        refused.push({ line: rec.line, reason: ID_TOO_LONG });
        continue;
      }
      const previous = unseen ? undefined : store.ids.get([t, d, rec.id]);
      const old = previous === undefined ? undefined : store.records.get([t, d, previous]);
      // parsing an object again: a record another object made since the reindex began is theirs; one this run wrote already stays
      const reparse = run.reparse_from_seq;
      const theirs = old && old.key !== run.key && old.seq > (run.reparse_manifest_seq ?? 0);
      const keptAsIs = reparse === undefined ? old && sameContent(old, rec) : theirs || (old && old.key === run.key && old.seq > reparse && sameContent(old, rec));
      if (keptAsIs) {
        duplicates++;
        kept.push(rec);
        continue;
      }
      const paths = recordFields(rec, recFields).paths;
      if (paths.some((path) => path.length > LIMITS.fieldPath)) {
        refused.push({ line: rec.line, reason: PATH_TOO_LONG });
        continue;
      }
      if (!budget.admit(paths)) {
        refused.push({ line: rec.line, reason: TOO_MANY_FIELDS });
        continue;
      }
      kept.push(rec);
      const stored = storedRecord(rec, run.key, ++ds.seq, createdAt);
      if (reparse !== undefined) stored.reparsed = true;
      if (old) {
        stored.replaces = old.seq;
        store.records.remove([t, d, old.seq]);
      } else {
        ds.record_count++;
      }
      if (ds.time_ordered) followTimeOrder(ds, stored.time);
      store.records.put([t, d, stored.seq], stored);
      store.ids.put([t, d, rec.id], stored.seq);
      countFields(recFields, fields);
      added.push(stored);
    }
    if (refused.length > 0) {
      batch.records = kept;
      batch.errors = [...batch.errors, ...refused].sort((a, b) => a.line - b.line);
    }
    ds.updated_at = createdAt;
    store.meta.put(keys.dataset(t, d), ds);

    for (const [path, types] of fields) {
      for (const [type, seen] of types) {
        const key = keys.field(t, d, path, type);
        const prev = store.meta.get(key);
        store.meta.put(key, { count: (prev?.count ?? 0) + seen.count, sample: prev?.sample ?? seen.sample });
      }
    }

    const docs = run.documents;
    docs.expected += batch.records.length + batch.errors.length;
    docs.parsed += batch.records.length;
    docs.schema_observed += batch.records.length;
    docs.malformed += batch.errors.length;
    docs.duplicates += duplicates;
    run.errors.push(...batch.errors.slice(0, MAX_REPORTED_ERRORS - run.errors.length));
    run.resume_line = batch.lastLine;
    run.updated_at = createdAt;
    store.meta.put(keys.run(t, run.ingest_run_id), run);
    return added;
  });
}
