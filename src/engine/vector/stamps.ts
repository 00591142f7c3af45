import type { SemanticConfig } from '../../api/sources.js';
import type { WhereItem } from '../../api/search.js';
import type { StoredRecord } from '../records.js';
import { fieldValue } from '../search/fieldValue.js';
import { compileFilters } from '../search/filters.js';

/** The filter values stamped on a record's vectors, by declared field name. */
export type Stamps = Record<string, unknown>;

type FilterFields = NonNullable<SemanticConfig['filters']>['fields'];

/**
 * A record's values for the declared filter fields, read exactly as `where` reads them so that a
 * filter on stamps answers as the same filter on records would. A field declared `array` is
 * stamped as a list even when a record holds one value. Null when there is nothing to stamp.
 */
export function extractStamps(rec: StoredRecord, fields: FilterFields | undefined): Stamps | null {
  if (!fields?.length) return null;
  const out: Stamps = {};
  let any = false;
  for (const { field, array } of fields) {
    const v = fieldValue(rec, field);
    if (v === undefined) continue;
    out[field] = array && !Array.isArray(v) ? [v] : v;
    any = true;
  }
  return any ? out : null;
}

/** A record that holds only `value` at `field`, for testing a `where` item against a stamp. */
function holder(field: string, value: unknown): StoredRecord {
  const rec = { id: '', title: null, body: '', time: null, metadata: {} } as unknown as StoredRecord;
  if (field === 'id' || field === 'title' || field === 'body' || field === 'time') (rec as unknown as Record<string, unknown>)[field] = value;
  else (rec.metadata as Record<string, unknown>)[field.startsWith('metadata.') ? field.slice('metadata.'.length) : field] = value;
  return rec;
}

/**
 * The part of `where` that stamps can answer: items on fields every vector carries a stamp for.
 * Returns a test of a record's stamps, or null when no item qualifies.
 */
export function stampFilter(where: WhereItem[] | undefined, stamped: Set<string> | null, now = new Date()): ((s: Stamps | undefined) => boolean) | null {
  if (!where?.length || !stamped) return null;
  const tests = where
    .filter((w) => stamped.has(w.field))
    .map((w) => {
      const p = compileFilters([w], null, now)!;
      return (s: Stamps | undefined) => p(holder(w.field, s?.[w.field]));
    });
  if (tests.length === 0) return null;
  return (s) => tests.every((t) => t(s));
}
