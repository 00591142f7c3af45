import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { asDiskFull } from '../diskErrors.js';
import { loadDuckDB } from './duckdb.js';
import type { SqlLimits } from './limits.js';
import { INTERNAL_SCHEMA } from './schema.js';
import type { TableState } from './tableState.js';

/**
 * One tenant's DuckDB database (`<data-dir>/sql/<tenant>.duckdb`): another tenant's data lives in
 * another file that this instance cannot open, because file, network and extension access are off
 * and the configuration is locked before any statement of a caller runs.
 *
 * Writes go through one connection, one transaction at a time; each query gets a connection of its
 * own, so it reads a committed snapshot and never waits for a write.
 */
export class TenantDb {
  /** the per-dataset state, as the `_svc.tables` rows hold it; changed only inside `write` */
  readonly tables = new Map<string, TableState>();
  /** new generations being built (a reindex), as the `_svc.pending` rows hold them; no view reads them yet */
  readonly pending = new Map<string, TableState>();
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;

  private constructor(
    readonly tenantId: string,
    /** the catalog name DuckDB gives this database (the file's base name) */
    readonly catalog: string,
    private readonly instance: DuckDBInstance,
    private readonly writer: DuckDBConnection,
  ) {}

  /**
   * Opens the tenant's database, creating it when missing. The file is derived from the records:
   * one that is not a database (its creation met a full disk, say) is removed and made again, and
   * the tables catch up from the store.
   */
  static async open(tenantId: string, path: string, limits: SqlLimits, again = false): Promise<TenantDb> {
    const existed = existsSync(path);
    try {
      return await TenantDb.create(tenantId, path, limits);
    } catch (err) {
      const damaged = /not a valid DuckDB database file/i.test((err as Error).message);
      if (!existed || damaged) removeDatabase(path); // half-made: it would never open again
      if (damaged && !again) return TenantDb.open(tenantId, path, limits, true);
      throw asDiskFull(err, 'the SQL index'); // opening writes too: DuckDB replays and checkpoints its log
    }
  }

  private static async create(tenantId: string, path: string, limits: SqlLimits): Promise<TenantDb> {
    mkdirSync(dirname(path), { recursive: true });
    const { DuckDBInstance } = await loadDuckDB();
    const instance = await DuckDBInstance.create(path, {
      enable_external_access: 'false',
      autoinstall_known_extensions: 'false',
      autoload_known_extensions: 'false',
      allow_community_extensions: 'false',
      memory_limit: limits.memoryLimit,
      max_temp_directory_size: limits.tempLimit,
      threads: String(limits.threads),
    });
    const writer = await instance.connect();
    try {
      // TimeZone belongs to the built-in icu extension, which instance options cannot name; it must
      // be set before the lock so that `now()` and TIMESTAMPTZ casts read UTC like every record time.
      await writer.run("SET GLOBAL TimeZone = 'UTC'").catch(() => undefined);
      await writer.run('SET lock_configuration = true');
      await writer.run(`CREATE SCHEMA IF NOT EXISTS ${INTERNAL_SCHEMA}; CREATE TABLE IF NOT EXISTS ${INTERNAL_SCHEMA}.tables (dataset VARCHAR, state VARCHAR); CREATE TABLE IF NOT EXISTS ${INTERNAL_SCHEMA}.pending (dataset VARCHAR, state VARCHAR)`);
    } catch (err) {
      writer.closeSync();
      instance.closeSync();
      throw err;
    }
    const db = new TenantDb(tenantId, basename(path).replace(/\.duckdb$/, ''), instance, writer);
    await db.loadTables();
    return db;
  }

  private async loadTables(): Promise<void> {
    for (const [name, map] of [['tables', this.tables], ['pending', this.pending]] as const) {
      const rows = (await this.writer.runAndReadAll(`SELECT dataset, state FROM ${INTERNAL_SCHEMA}.${name}`)).getRowObjectsJS();
      map.clear();
      for (const row of rows) map.set(String(row.dataset), JSON.parse(String(row.state)));
    }
  }

  /**
   * Runs `fn` alone among this database's writes, inside one transaction. When it fails the
   * transaction rolls back and the in-memory table states are read again from what was committed.
   */
  write<T>(fn: (conn: DuckDBConnection) => Promise<T>): Promise<T> {
    const run = async () => {
      if (this.closed) throw new Error(`the SQL database of tenant '${this.tenantId}' is closed`);
      await this.writer.run('BEGIN TRANSACTION');
      try {
        const out = await fn(this.writer);
        await this.writer.run('COMMIT');
        return out;
      } catch (err) {
        await this.writer.run('ROLLBACK').catch(() => undefined);
        await this.loadTables().catch(() => undefined);
        throw asDiskFull(err, 'the SQL index');
      }
    };
    const next = this.queue.then(run, run);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** Commits what `write` has done so far and opens the next transaction: a long load commits in steps. */
  async commitStep(conn: DuckDBConnection): Promise<void> {
    await conn.run('COMMIT');
    await conn.run('BEGIN TRANSACTION');
  }

  /** A connection of its own for one query; the caller closes it. */
  connect(): Promise<DuckDBConnection> {
    if (this.closed) throw new Error(`the SQL database of tenant '${this.tenantId}' is closed`);
    return this.instance.connect();
  }

  /** Waits for the write in hand, then closes the database (DuckDB checkpoints it). */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.queue;
    this.closed = true;
    this.writer.closeSync();
    this.instance.closeSync();
  }
}

/** A database's files: the file itself and its write-ahead log. */
export function removeDatabase(path: string): void {
  for (const suffix of ['', '.wal', '.tmp']) rmSync(`${path}${suffix}`, { recursive: true, force: true });
}
