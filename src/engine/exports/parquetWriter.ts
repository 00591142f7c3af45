import type { DuckDBConnection } from '@duckdb/node-api';
import { createWriteStream, mkdirSync, rmSync } from 'node:fs';
import { join, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { asDiskFull, diskWriteSync } from '../diskErrors.js';
import { Refused } from '../errors.js';
import { loadDuckDB } from '../sql/duckdb.js';
import type { Column, ExportRecord } from './columns.js';

/** The largest row the JSON reader takes (its buffer is twice this); a larger one fails the export. */
const MAX_ROW_BYTES = 16 * 2 ** 20;
/** About what one row group holds before it is flushed: the writer buffers a whole row group. */
const ROW_GROUP_BYTES = 16 * 2 ** 20;
/** DuckDB's bounds for a row group: its vector size, and its default. */
const ROW_GROUP_ROWS = { min: 2048, max: 122_880 };
/** The staging file checks the free-space floor each time this much more is written, as blob writes do. */
const SPACE_CHECK_BYTES = 64 * 2 ** 20;
/** DuckDB's own writes (the Parquet file, its spill) cannot be metered: the floor is checked this often while it writes. */
const SPACE_POLL_MS = 1000;

/**
 * Writes the records' columns to `<dir>/export.parquet` and returns its path. The rows go first to
 * an NDJSON file in `dir`, a batch at a time (so memory holds one batch), while the types of the
 * columns that have none are learnt from their values; then an in-memory DuckDB instance that can
 * reach `dir` and nothing else reads that file with every column's type named and writes the
 * Parquet file, spilling to `dir` past its memory limit. `checkSpace` throws (DiskFull) below the
 * free-space floor: it runs every 64 MiB of the NDJSON file and every second while DuckDB writes,
 * so that the export waits for space rather than fill the disk; a write that fails for want of
 * room is DiskFull too.
 */
export async function writeParquet(dir: string, columns: Column[], batches: AsyncIterable<ExportRecord[]>, memoryLimit: string, checkSpace: () => void): Promise<string> {
  const rows = join(dir, 'rows.ndjson');
  const out = join(dir, 'export.parquet');
  const kinds = columns.map(() => new ValueKinds());
  const seen = { rows: 0, bytes: 0 };
  async function* lines(): AsyncGenerator<string> {
    for await (const batch of batches) {
      let text = '';
      for (const rec of batch) {
        // positional keys: a column name may be anything, a key cN is plain
        const row: Record<string, unknown> = {};
        for (let i = 0; i < columns.length; i++) {
          const v = columns[i].get(rec);
          kinds[i].add(v);
          row[`c${i}`] = v;
        }
        text += JSON.stringify(row) + '\n';
      }
      seen.rows += batch.length;
      if (Math.floor((seen.bytes + text.length) / SPACE_CHECK_BYTES) > Math.floor(seen.bytes / SPACE_CHECK_BYTES)) checkSpace();
      seen.bytes += text.length;
      yield text;
    }
  }
  try {
    await pipeline(lines, createWriteStream(rows));
  } catch (err) {
    throw asDiskFull(err, 'an export');
  }
  checkSpace();
  const types = columns.map((c, i) => c.type ?? kinds[i].type());
  // rows as large as they come: a row group of 16 MiB or so, so that wide rows do not need more memory
  const groupRows = Math.max(ROW_GROUP_ROWS.min, Math.min(ROW_GROUP_ROWS.max, Math.floor(ROW_GROUP_BYTES / Math.max(1, seen.bytes / Math.max(1, seen.rows)))));
  await copyToParquet(dir, rows, out, columns.map((c) => c.name), types, groupRows, memoryLimit, checkSpace);
  rmSync(rows, { force: true });
  return out;
}

async function copyToParquet(
  dir: string, input: string, output: string, names: string[], types: string[], groupRows: number, memoryLimit: string, checkSpace: () => void,
): Promise<void> {
  const writer = await writerDb(dir, memoryLimit);
  let full: unknown = null;
  const watch = setInterval(() => {
    try {
      checkSpace();
    } catch (err) {
      full = err;
      writer.conn.interrupt();
    }
  }, SPACE_POLL_MS);
  try {
    const struct = `{${types.map((t, i) => `c${i}: ${literal(t)}`).join(', ')}}`;
    const select = names.length > 0 ? names.map((n, i) => `c${i} AS ${identifier(n)}`).join(', ') : '*';
    const read = `read_json(${literal(input)}, format = 'newline_delimited', columns = ${struct}, maximum_object_size = ${MAX_ROW_BYTES})`;
    await writer.conn.run(`COPY (SELECT ${select} FROM ${read}) TO ${literal(output)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${groupRows})`);
  } catch (err) {
    throw full ?? writeError(err, memoryLimit); // interrupted at the floor: the export waits for space
  } finally {
    clearInterval(watch);
    writer.close();
  }
}

/**
 * An in-memory DuckDB instance that reads and writes files in `dir` and nowhere else: external
 * access is off but for that one folder (where it spills too), and the configuration is locked
 * before the first statement that touches a file. The tenant SQL databases stay locked down apart.
 */
export async function writerDb(dir: string, memoryLimit: string): Promise<{ conn: DuckDBConnection; close: () => void }> {
  const { DuckDBInstance } = await loadDuckDB();
  const spill = join(dir, 'spill');
  diskWriteSync('an export', () => mkdirSync(spill, { recursive: true }));
  const instance = await DuckDBInstance.create(':memory:', {
    memory_limit: memoryLimit,
    threads: '1',
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
    allow_community_extensions: 'false',
  });
  const conn = await instance.connect();
  const close = () => {
    conn.closeSync();
    instance.closeSync();
  };
  try {
    await conn.run(`SET temp_directory = ${literal(spill)}`);
    await conn.run(`SET allowed_directories = [${literal(dir + sep)}]`);
    await conn.run('SET enable_external_access = false');
    await conn.run("SET TimeZone = 'UTC'").catch(() => undefined); // an ICU setting: the times are UTC either way
    await conn.run('SET lock_configuration = true');
  } catch (err) {
    close();
    throw err;
  }
  return { conn, close };
}

/**
 * A failed write as the job should take it: a full disk waits for space; anything else the
 * writer says (a row too large, a value of the wrong type, its memory limit) would say it again
 * on every attempt, so it is a refusal that fails the export at once.
 */
function writeError(err: unknown, memoryLimit: string): unknown {
  const full = asDiskFull(err, 'an export');
  if (full !== err || !(err instanceof Error)) return full;
  const hint = err.message.startsWith('Out of Memory Error') ? ` (SVC_EXPORT_MEMORY_LIMIT is ${memoryLimit})` : '';
  return new Refused(`the Parquet file could not be written: ${err.message.split('\n')[0]}${hint}`, 'export_failed', 422);
}

const literal = (s: string) => `'${s.replaceAll("'", "''")}'`;
const identifier = (s: string) => `"${s.replaceAll('"', '""')}"`;

/** The kinds of JSON value a column held, and the Parquet type that keeps them all. */
class ValueKinds {
  private int = false;
  private float = false;
  private bool = false;
  private text = false;
  private json = false;

  add(v: unknown): void {
    if (v === null || v === undefined) return;
    if (typeof v === 'number') {
      if (Number.isInteger(v)) this.int = true;
      else this.float = true;
    } else if (typeof v === 'boolean') this.bool = true;
    else if (typeof v === 'string') this.text = true;
    else this.json = true;
  }

  /** one kind keeps its type; numbers of both kinds are DOUBLE; any other mix is text, or JSON when it holds objects or arrays */
  type(): string {
    if (this.json) return 'JSON';
    const kinds = [this.int || this.float, this.bool, this.text].filter(Boolean).length;
    if (kinds !== 1) return 'VARCHAR';
    if (this.bool) return 'BOOLEAN';
    if (this.text) return 'VARCHAR';
    return this.float ? 'DOUBLE' : 'BIGINT';
  }
}
