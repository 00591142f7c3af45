import type { ResultRecord } from '../api/search.js';
import { marked, untagged } from './highlight.js';
import type { OutputFormat, Row } from './output.js';
import type { Paged } from './paging.js';

/** What a CSV of result records holds (search, a view's records): a file's columns stay put. */
export const RECORD_CSV_COLUMNS = ['score', 'provenance.dataset_id', 'provenance.line', 'body'];

/**
 * A record as a table or CSV shows it: `source` is where it came from (the object's file name and
 * line), `text` its first snippet (matched words marked; a CSV gets them plain) or else its body.
 * JSON and NDJSON print the record as the API gave it.
 */
export function recordRow(r: ResultRecord, format: OutputFormat): Row {
  if (format !== 'table' && format !== 'csv') return r;
  const file = r.provenance?.source_key?.split('/').pop();
  const snippet = r.snippets?.[0];
  return {
    ...r,
    source: file ? `${file}:${r.provenance.line}` : '',
    text: snippet === undefined ? r.body : format === 'table' ? marked(snippet) : untagged(snippet),
  };
}

/** A table's columns: title and time only when some record has one, the text last since it is the one to cut. */
export function recordColumns(page: Pick<Paged, 'records'>, format: OutputFormat): string[] {
  if (format !== 'table') return RECORD_CSV_COLUMNS;
  const records = page.records as ResultRecord[];
  const has = (key: 'title' | 'time') => records.some((r) => r[key]);
  return ['score', ...(has('time') ? ['time'] : []), ...(has('title') ? ['title'] : []), 'source', 'text'];
}
