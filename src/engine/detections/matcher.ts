import type { SearchRequest } from '../../api/search.js';
import type { SearchConfig } from '../../api/sources.js';
import type { StoredRecord } from '../records.js';
import { fieldValue } from '../search/fieldValue.js';
import { compileFilters } from '../search/filters.js';
import { compileQuery } from '../search/query.js';
import { RecordText } from '../search/recordText.js';
import { analyze } from '../text/analyzer.js';
import { recordTimeMs } from './threshold.js';

/** One record and its text views, shared by every detection that tests it. */
export class Candidate {
  readonly text: RecordText;
  private fieldTerms = new Map<string, Set<string>>();
  private _time?: number;
  constructor(readonly rec: StoredRecord) {
    this.text = new RecordText(rec);
  }

  /** When it happened (its time, else when it was ingested), read once. */
  get time(): number {
    return (this._time ??= recordTimeMs(this.rec));
  }

  /** The record's terms in any of `fields` (a key names the list): what a `text` term is looked up in. */
  termsIn(key: string, fields: string[]): Set<string> {
    let set = this.fieldTerms.get(key);
    if (set) return set;
    const some = this.rec.title ? fields : fields.filter((f) => f !== 'title'); // an empty title adds no term
    set = some.length === 1 ? this.terms(some[0]!) : new Set(some.flatMap((f) => [...this.terms(f)]));
    this.fieldTerms.set(key, set);
    return set;
  }

  /** The record's terms in one text field, as the text index analyzes that field. */
  terms(field: string): Set<string> {
    if (field === 'title') return this.text.view('title').termSet;
    if (field === 'body') return this.text.view('body').termSet;
    let set = this.fieldTerms.get(field);
    if (!set) {
      const v = fieldValue(this.rec, field);
      set = new Set(v === null || v === undefined ? [] : analyze(typeof v === 'string' ? v : JSON.stringify(v)));
      this.fieldTerms.set(field, set);
    }
    return set;
  }
}

export type RecordTest = (c: Candidate) => boolean;

/** A record test, and terms of which every record it accepts holds one in its title or body (null: none known). */
export interface Matcher {
  test: RecordTest;
  needs: string[] | null;
}

/**
 * A search request as a test of one record, with `/v1/search`'s semantics: with `text`, a record
 * holds one of the terms of text (and of q's bare terms) in a text field of its dataset — exactly,
 * since a detection's search runs without typo expansion; q and `where`/`time` (relative to `now`)
 * hold as they do for a search.
 */
export function compileMatcher(req: SearchRequest, config: SearchConfig, now: Date): Matcher {
  const filter = compileFilters(req.where, req.time, now);
  const query = req.q?.trim() ? compileQuery(req.q) : null;
  const text = req.text?.trim() ?? '';
  const terms = text ? analyze([text, query?.scoringText ?? ''].join(' ')) : null;
  const fields = config.text_fields.map((f) => f.field);
  const key = `\u0000${fields.join('\u0000')}`; // no field path holds a NUL: it cannot be taken for one field's name
  const hasTerm = (c: Candidate) => {
    const set = c.termsIn(key, fields);
    return terms!.some((term) => set.has(term));
  };
  // a text field other than title and body may hold the text's terms: they are no need then
  const textNeeds = terms && fields.every((f) => f === 'title' || f === 'body') ? terms : null;
  const needs = [textNeeds, query?.required ?? null].filter((n): n is string[] => n !== null && n.length > 0).sort((a, b) => a.length - b.length)[0] ?? null;
  const test = (c: Candidate) => (terms === null || hasTerm(c)) && (!query || query.test(c.text)) && (!filter || filter(c.rec));
  return { test, needs };
}
