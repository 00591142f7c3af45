import type { ResultRecord } from '../../api/search.js';
import type { SqlColumn, SqlRecord } from '../../api/sql.js';
import { Invalid } from '../errors.js';
import type { StoredRecord } from '../records.js';
import { fieldGetter } from '../search/fieldValue.js';

/** What an export writes per row: a search's (or view's) result record, or a statement's row as one. */
export type ExportRecord = ResultRecord | SqlRecord;

/** One column of a CSV or Parquet export: its header, how a record gives its value, and its Parquet type (null: decided by the values written). */
export interface Column {
  name: string;
  get: (rec: ExportRecord) => unknown;
  type: string | null;
}

/** The columns of a records export when the request names none. */
export const DEFAULT_FIELDS = ['id', 'title', 'body', 'score', 'created_at', 'time', 'provenance.dataset_id', 'provenance.source_key', 'provenance.line', 'metadata'];

/** Members of a result record a field may name, with their Parquet types. */
const RECORD_TYPES: Record<string, string> = {
  id: 'VARCHAR', title: 'VARCHAR', body: 'VARCHAR', score: 'DOUBLE', score_kind: 'VARCHAR', snippets: 'JSON', created_at: 'TIMESTAMPTZ', time: 'TIMESTAMPTZ',
  metadata: 'JSON', provenance: 'JSON', 'provenance.dataset_id': 'VARCHAR', 'provenance.tenant_id': 'VARCHAR', 'provenance.source_bucket': 'VARCHAR',
  'provenance.source_key': 'VARCHAR', 'provenance.source_etag': 'VARCHAR', 'provenance.line': 'BIGINT', 'provenance.transform_version': 'BIGINT',
};

/** A field a records export may select: a result record member, `metadata.<path>`, or a bare metadata path (as `where` reads it). Else the reason. */
export function fieldProblem(path: string): string | null {
  if (Object.hasOwn(RECORD_TYPES, path) || (path.startsWith('metadata.') && path.length > 'metadata.'.length)) return null;
  if (path.startsWith('provenance.')) return `'${path}' is no provenance member: ${Object.keys(RECORD_TYPES).filter((k) => k.startsWith('provenance.')).join(', ')}`;
  if (path.startsWith('.') || path.endsWith('.') || path.includes('..')) return `'${path}' is no field path`;
  return null;
}

/** Each field a column of its own: a field named twice would give two columns one name, which Parquet refuses. */
export function checkFields(fields: string[]): void {
  const issues = fields.flatMap((f, i) => {
    const why = fieldProblem(f) ?? (fields.indexOf(f) < i ? `'${f}' is named twice: each field is one column` : null);
    return why ? [{ loc: ['body', 'fields', i], msg: why, type: 'value_error', input: f }] : [];
  });
  if (issues.length > 0) throw new Invalid(issues[0].msg, issues);
}

/** The columns of a records export: the fields named, else the default set. */
export function recordColumns(fields: string[] | null): Column[] {
  return (fields ?? DEFAULT_FIELDS).map((path) => ({ name: path, get: recordGetter(path), type: Object.hasOwn(RECORD_TYPES, path) ? RECORD_TYPES[path] : null }));
}

function recordGetter(path: string): (rec: ExportRecord) => unknown {
  if (path.startsWith('provenance.')) {
    const member = path.slice('provenance.'.length) as keyof ResultRecord['provenance'];
    return (rec) => rec.provenance?.[member] ?? null;
  }
  if (Object.hasOwn(RECORD_TYPES, path)) return (rec) => rec[path as keyof ExportRecord] ?? null;
  const metadata = fieldGetter(path.startsWith('metadata.') ? path : `metadata.${path}`);
  // the getter reads `metadata` only, which a result record has as a stored record does
  return (rec) => metadata(rec as unknown as StoredRecord) ?? null;
}

/** Column types whose values a JSON reader turns back into the same type; any other (lists, structs, maps, …) is kept as JSON. */
const SCALAR = /^(BOOLEAN|TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT|FLOAT|DOUBLE|DECIMAL\(\d+,\d+\)|VARCHAR|DATE|TIME|TIMESTAMP|TIMESTAMP WITH TIME ZONE|TIMESTAMP_S|TIMESTAMP_MS|TIMESTAMP_NS|UUID|JSON)$/;

/** The columns of a statement's export: its own, with its own types. */
export function sqlColumns(columns: SqlColumn[]): Column[] {
  return columns.map(({ name, type }) => ({ name, get: (rec) => (rec.metadata as Record<string, unknown>)[name] ?? null, type: SCALAR.test(type) ? type : 'JSON' }));
}
