import { StatementType, type DuckDBConnection, type DuckDBDataChunk, type DuckDBResult } from '@duckdb/node-api';
import type { SqlColumn } from '../../api/sql.js';
import { LIMITS } from '../../api/limits.js';
import { Invalid, Refused } from '../errors.js';
import { toJson, typeName } from './convert.js';
import { notAllowed } from './guard.js';
import type { SqlLimits } from './limits.js';
import { sqlError } from './sqlErrors.js';

export type SqlValue = string | number | boolean | null;
/** positional parameters (`$1`, `?`), or named ones (`$name`, DuckDB's) by name */
export type SqlParams = SqlValue[] | Record<string, SqlValue>;
export type Row = Record<string, unknown>;

export interface Answer {
  columns: SqlColumn[];
  /** at most `maxRows` rows, in the statement's order */
  rows: Row[];
  /** true when the statement had more rows than `maxRows`, or more bytes than `LIMITS.sqlResultBytes` */
  capped: boolean;
  /** about how many bytes the rows take as JSON */
  bytes: number;
}

/**
 * Runs one checked statement in a read-only transaction on the caller's own connection and reads
 * its rows (up to `maxRows`, plus one to know whether there were more). A timer interrupts it at
 * the statement timeout; DuckDB's memory limit stops it when it needs more than the limit.
 */
export async function execute(conn: DuckDBConnection, sql: string, params: SqlParams, maxRows: number, limits: SqlLimits): Promise<Answer> {
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    conn.interrupt();
  }, limits.timeoutMs);
  try {
    const result = await (await prepareRead(conn, sql, params)).stream();
    const { columns, names, toRow } = reader(result);
    const rows: Row[] = [];
    let bytes = 0;
    let full = false;
    while (rows.length <= maxRows && !full) {
      const chunk = await result.fetchChunk();
      if (!chunk || chunk.rowCount === 0) break;
      for (const values of chunk.convertRows(toJson)) {
        const size = rowBytes(names, values);
        if (bytes + size > LIMITS.sqlResultBytes) {
          if (rows.length === 0) throw tooLarge();
          full = true;
          break;
        }
        bytes += size;
        rows.push(toRow(values));
      }
    }
    const capped = full || rows.length > maxRows;
    if (rows.length > maxRows) rows.length = maxRows;
    return { columns, rows, capped, bytes };
  } catch (err) {
    throw sqlError(err, limits, timedOut);
  } finally {
    clearTimeout(timer); // the caller closes the connection, which ends the transaction
  }
}

/**
 * Opens a read-only transaction on the connection and prepares the statement in it, its
 * parameters bound: a write that slipped past the guard would still fail, and anything but a
 * query is refused before it runs.
 */
export async function prepareRead(conn: DuckDBConnection, sql: string, params: SqlParams) {
  await conn.run('BEGIN TRANSACTION READ ONLY');
  const prepared = await conn.prepare(sql);
  if (prepared.statementType !== StatementType.SELECT) throw notAllowed('one read-only statement is allowed: SELECT, WITH … SELECT, VALUES, DESCRIBE or SHOW');
  if (!Array.isArray(params)) {
    // named: the statement's `$name`s and the names given must be the same set
    const names = Array.from({ length: prepared.parameterCount }, (_, i) => prepared.parameterName(i + 1));
    const given = Object.keys(params);
    const missing = names.filter((n) => !given.includes(n));
    const extra = given.filter((n) => !names.includes(n));
    if (missing.length || extra.length) {
      const msg = [missing.length ? `the statement's parameter(s) ${missing.map((n) => `$${n}`).join(', ')} are not declared` : '', extra.length ? `parameter(s) ${extra.join(', ')} are not used by the statement` : ''].filter(Boolean).join('; ');
      throw new Invalid(msg, [{ loc: ['body', 'params'], msg, type: 'value_error' }]);
    }
    if (names.length > 0) prepared.bind(params);
    return prepared;
  }
  if (prepared.parameterCount !== params.length) {
    const msg = `the statement takes ${prepared.parameterCount} parameter(s); ${params.length} given`;
    throw new Invalid(msg, [{ loc: ['body', 'params'], msg, type: 'value_error', input: params }]);
  }
  if (params.length > 0) prepared.bind(params);
  return prepared;
}

/** A result's columns, and its chunks' values as rows keyed by the (deduplicated) column names. */
export function reader(result: DuckDBResult) {
  const types = result.columnTypes();
  const names = result.deduplicatedColumnNames();
  const columns: SqlColumn[] = names.map((name, i) => ({ name, type: typeName(types[i]) }));
  // a chunk's vectors do not carry the JSON alias: JSON columns are known from the result's types
  const json = columns.map((c) => c.type === 'JSON');
  const toRow = (values: unknown[]): Row => {
    const row: Row = {};
    for (let i = 0; i < names.length; i++) {
      // a column may be called __proto__: it stays a member, not the row's prototype
      if (names[i] === '__proto__') Object.defineProperty(row, names[i], { value: values[i], enumerable: true, writable: true, configurable: true });
      else row[names[i]] = json[i] ? parseJson(values[i]) : values[i];
    }
    return row;
  };
  /** A chunk's rows, each with about what it weighs as JSON; a row past `LIMITS.sqlResultBytes` is refused, as a page refuses it. */
  const sizedRows = (chunk: DuckDBDataChunk): { row: Row; bytes: number }[] =>
    chunk.convertRows(toJson).map((values) => {
      const bytes = rowBytes(names, values);
      if (bytes > LIMITS.sqlResultBytes) throw tooLarge();
      return { row: toRow(values), bytes };
    });
  return { columns, names, toRow, sizedRows };
}

const tooLarge = () =>
  new Refused(`one row is larger than ${LIMITS.sqlResultBytes / 2 ** 20} MiB as JSON: select fewer columns or shorter values`, 'sql_result_too_large', 422);

/** About what a row weighs as JSON, without writing it out. */
function rowBytes(names: string[], values: unknown[]): number {
  let n = 2;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    n += names[i].length + 4 + (typeof v === 'string' ? v.length + 2 : v !== null && typeof v === 'object' ? (JSON.stringify(v)?.length ?? 4) : 8);
  }
  return n;
}

function parseJson(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v);
  } catch {
    return v;
  }
}
