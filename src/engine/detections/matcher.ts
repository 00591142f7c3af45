import type { SearchRequest } from '../../api/search.js';
import type { SearchConfig } from '../../api/sources.js';
import type { StoredRecord } from '../records.js';
import { fieldValue } from '../search/fieldValue.js';
import { compileFilters } from '../search/filters.js';
import { compileQuery } from '../search/query.js';
import { RecordText } from '../search/recordText.js';
import { analyze } from '../text/analyzer.js';

/** One record and its text views, shared by every detection that tests it. */
export class Candidate {
  readonly text: RecordText;
  private fieldTerms = new Map<string, Set<string>>();
  constructor(readonly rec: StoredRecord) {
    this.text = new RecordText(rec);
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

/**
 * A search request as a test of one record, with `/v1/search`'s semantics: with `text`, a record
 * holds one of the terms of text (and of q's bare terms) in a text field of its dataset — exactly,
 * since a detection's search runs without typo expansion; q and `where`/`time` (relative to `now`)
 * hold as they do for a search.
 */
export function compileMatcher(req: SearchRequest, config: SearchConfig, now: Date): RecordTest {
  const filter = compileFilters(req.where, req.time, now);
  const query = req.q?.trim() ? compileQuery(req.q) : null;
  const text = req.text?.trim() ?? '';
  const terms = text ? analyze([text, query?.scoringText ?? ''].join(' ')) : null;
  const fields = config.text_fields.map((f) => f.field);
  const hasTerm = (c: Candidate) => terms!.some((term) => fields.some((f) => c.terms(f).has(term)));
  return (c) => (!filter || filter(c.rec)) && (!query || query.test(c.text)) && (terms === null || hasTerm(c));
}
