import type { DuckDBAppender, DuckDBConnection } from '@duckdb/node-api';
import type { StoredRecord } from '../records.js';
import { appendRecord, columnIndex, flatFields, flatten, type ColumnIndex, type FlatFields } from './rows.js';
import { aliasFields } from '../fields/discover.js';
import type { ValueType } from '../fields/discover.js';
import { COLUMN_TYPES, fieldKey, INTERNAL_SCHEMA, MAX_FIELD_COLUMNS, physicalName, physicalTable, planNames, publishViewSql, quote } from './schema.js';
import type { TableState } from './tableState.js';

const DELETE_CHUNK = 10_000;

/** Deletes the rows of these record sequences from a physical table. */
export async function deleteSeqs(conn: DuckDBConnection, table: string, seqs: number[]): Promise<void> {
  for (let i = 0; i < seqs.length; i += DELETE_CHUNK) {
    const chunk = seqs.slice(i, i + DELETE_CHUNK).filter(Number.isSafeInteger);
    if (chunk.length > 0) await conn.run(`DELETE FROM ${table} WHERE _seq IN (${chunk.join(',')})`);
  }
}

/**
 * Loads records, in sequence order, into one generation of a dataset's table inside the caller's
 * transaction, with DuckDB's appender. The table grows as records bring fields it lacks (a column
 * per path and value type), and its columns are renamed when a path gains a value type, since a
 * column's name is its field's `physical_field`. `state` is updated as it goes; the caller saves it.
 */
export class Loader {
  private appender: DuckDBAppender | null = null;
  private index: ColumnIndex;
  /** fields with no column (beyond the column cap, or an empty path): stored, not in SQL */
  private readonly left = new Set<string>();
  private readonly values: unknown[] = [];
  /** rows that records of this load replaced: they leave the table before the load commits */
  private replaced: number[] = [];
  rows = 0;
  /** the last record sequence added: a step commit holds every record up to it */
  lastSeq = 0;

  constructor(
    private readonly conn: DuckDBConnection,
    private readonly datasetId: string,
    private readonly state: TableState,
    private readonly variantCount: (path: string) => number,
    /** whether the dataset's view reads this generation (false while a rebuild fills a new one) */
    private readonly published: boolean,
  ) {
    this.index = columnIndex(state.columns);
  }

  private get table(): string {
    return physicalTable(this.datasetId, this.state.generation);
  }

  /** Brings column names up to date with the fields' value types (a path may have gained one since). */
  async open(): Promise<void> {
    await this.reshape(0);
  }

  async add(records: StoredRecord[]): Promise<void> {
    if (records.length === 0) return;
    this.lastSeq = records[records.length - 1].seq;
    const fields = flatFields();
    const starts = new Int32Array(records.length + 1);
    const add = (path: string, type: ValueType, value: unknown) => {
      fields.paths.push(path);
      fields.types.push(type);
      fields.values.push(value);
    };
    records.forEach((rec, r) => {
      flatten(rec.metadata, fields);
      aliasFields(rec, add); // `Content`, a Loghub CSV's body, is a column as well as `_body`
      starts[r + 1] = fields.paths.length;
    });
    const at = new Int32Array(fields.paths.length);
    const missing = this.locate(fields, at);
    if (missing.size > 0) {
      await this.grow([...missing.values()].map((k) => ({ path: fields.paths[k], type: fields.types[k] })));
      this.locate(fields, at);
    }
    this.appender ??= await this.conn.createAppender(physicalName(this.datasetId, this.state.generation), INTERNAL_SCHEMA);
    const columns = this.state.columns;
    const values = this.values;
    for (let r = 0; r < records.length; r++) {
      for (let k = starts[r]; k < starts[r + 1]; k++) if (at[k] >= 0) values[at[k]] = fields.values[k];
      appendRecord(this.appender, records[r], values, columns);
      for (let k = starts[r]; k < starts[r + 1]; k++) if (at[k] >= 0) values[at[k]] = undefined;
      if (records[r].replaces !== undefined) this.replaced.push(records[r].replaces!);
    }
    this.rows += records.length;
    this.state.seq = records[records.length - 1].seq;
  }

  /** Fills `at` with each value's column (-1 for none); returns the first value of each field that has no column yet. */
  private locate(fields: FlatFields, at: Int32Array): Map<string, number> {
    const missing = new Map<string, number>();
    for (let k = 0; k < fields.paths.length; k++) {
      const i = this.index.get(fields.paths[k])?.[fields.types[k]];
      at[k] = i ?? -1;
      if (i !== undefined) continue;
      const key = fieldKey(fields.paths[k], fields.types[k]);
      if (!this.left.has(key) && !missing.has(key)) missing.set(key, k);
    }
    return missing;
  }

  /** Puts every appended row into the transaction and removes the rows they replaced. */
  async flush(): Promise<void> {
    this.closeAppender();
    if (this.replaced.length > 0) await deleteSeqs(this.conn, this.table, this.replaced.splice(0));
  }

  private closeAppender(): void {
    this.appender?.closeSync(); // closing flushes
    this.appender = null;
  }

  private async grow(fields: { path: string; type: ValueType }[]): Promise<void> {
    let added = 0;
    for (const f of fields) {
      if (f.path === '' || this.state.columns.length >= MAX_FIELD_COLUMNS) this.left.add(fieldKey(f.path, f.type));
      else {
        this.state.columns.push({ path: f.path, type: f.type, name: '' });
        added++;
      }
    }
    if (added > 0) await this.reshape(added);
  }

  /** Renames existing columns whose planned name changed and adds the last `added` columns. */
  private async reshape(added: number): Promise<void> {
    const columns = this.state.columns;
    const names = planNames(columns, (path) => Math.max(this.variantCount(path), columns.filter((c) => c.path === path).length));
    const existing = columns.length - added;
    const renamed = columns.slice(0, existing).flatMap((c, i) => (names[i] !== c.name ? [i] : []));
    if (renamed.length === 0 && added === 0) return;
    this.closeAppender();
    // through temporary names, so that two columns trading names never collide half-way
    for (const i of renamed) await this.conn.run(`ALTER TABLE ${this.table} RENAME COLUMN ${quote(columns[i].name)} TO ${quote(`\u0001rename${i}`)}`);
    for (const i of renamed) await this.conn.run(`ALTER TABLE ${this.table} RENAME COLUMN ${quote(`\u0001rename${i}`)} TO ${quote(names[i])}`);
    for (let i = existing; i < columns.length; i++) await this.conn.run(`ALTER TABLE ${this.table} ADD COLUMN ${quote(names[i])} ${COLUMN_TYPES[columns[i].type]}`);
    columns.forEach((c, i) => (c.name = names[i]));
    this.index = columnIndex(columns);
    if (this.published) await this.conn.run(publishViewSql(this.datasetId, this.state.generation));
  }
}
