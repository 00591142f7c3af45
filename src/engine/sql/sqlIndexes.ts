import type { DuckDBConnection } from '@duckdb/node-api';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { DatasetState } from '../datasets/datasets.js';
import type { Datasets } from '../datasets/datasets.js';
import { DiskFull, NotFound } from '../errors.js';
import type { RunState } from '../ingest/runs.js';
import { logProblem } from '../log.js';
import type { StoredRecord } from '../records.js';
import { MAX_KEY, removePrefix, type Store } from '../store/db.js';
import type { SqlLimits } from './limits.js';
import { deleteSeqs, Loader } from './loader.js';
import { createTableSql, fieldKey, physicalTable, publishViewSql, quote } from './schema.js';
import { deleteTableState, mirrorKey, mirrorTableState, newTableState, saveTableState, type TableState } from './tableState.js';
import { removeDatabase, TenantDb } from './tenantDb.js';

/** Records read from LMDB at a time; the event loop gets a turn between slices. */
const SLICE = 2000;
/** A long load commits once it holds this many rows, at the next ingest-batch boundary. */
const COMMIT_ROWS = 200_000;

/** `[tenant, 'sqltomb', dataset, seq]`: a deleted record the SQL table may still hold; written with the deletion. */
export const sqlTombKey = (t: string, d: string, seq: number) => [t, 'sqltomb', d, seq];

/**
 * The SQL index: one DuckDB database per tenant, one table per dataset, derived from the records by
 * sequence like the text index. A table holds exactly the records up to its `seq`: it catches up by
 * loading the records past it (when a tenant's database opens, and after each ingest run), and
 * drops deleted records by `_seq` (at once when its database is open, else from their SQL
 * tombstones when it next opens). Databases open on first use and stay open until close.
 */
export class SqlIndexes {
  private readonly dbs = new Map<string, Promise<TenantDb>>();
  /** records loaded and time spent loading them, for benchmarks */
  readonly stats = { records: 0, ms: 0 };

  constructor(
    private readonly store: Store,
    private readonly dataDir: string,
    private readonly datasets: Datasets,
    readonly limits: SqlLimits,
  ) {}

  private path(tenantId: string): string {
    return join(this.dataDir, 'sql', `${tenantId}.duckdb`);
  }

  /** The tenant's database, opened and caught up on first use. */
  tenant(tenantId: string): Promise<TenantDb> {
    let db = this.dbs.get(tenantId);
    if (!db) {
      db = this.openTenant(tenantId);
      this.dbs.set(tenantId, db);
      db.catch(() => this.dbs.delete(tenantId));
    }
    return db;
  }

  private async openTenant(t: string): Promise<TenantDb> {
    const db = await TenantDb.open(t, this.path(t), this.limits);
    try {
      const live = new Set(this.datasets.ids(t));
      for (const d of [...db.tables.keys()]) if (!live.has(d)) await this.dropIn(db, t, d); // deleted while the database was closed
      for (const d of live) await this.catchUpIn(db, t, d);
    } catch (err) {
      if (err instanceof DiskFull) {
        // on a full disk queries answer from the tables as they are; the next ingest run catches them up
        logProblem('sql_catch_up_deferred', err, { tenant_id: t });
        return db;
      }
      await db.close();
      throw err;
    }
    return db;
  }

  /** An ingest-run follower: the run's records are in the SQL table once this resolves. */
  async follow(run: RunState, save: () => void): Promise<void> {
    await this.catchUp(run.tenant_id, run.dataset_id);
    run.ready_for.sql_search = true;
    save();
  }

  async catchUp(t: string, d: string): Promise<void> {
    await this.catchUpIn(await this.tenant(t), t, d);
  }

  private async catchUpIn(db: TenantDb, t: string, d: string): Promise<void> {
    const started = performance.now();
    const tombs = this.tombs(t, d);
    const loaded = await db.write(async (conn) => {
      const ds: DatasetState | undefined = this.store.meta.get([t, 'dataset', d]);
      if (!ds || ds.deleting) return 0;
      let state = db.tables.get(d);
      if (state && state.seq >= ds.seq && tombs.length === 0) return 0;
      if (!state) {
        state = newTableState();
        await conn.run(createTableSql(d, state.generation, []));
        await conn.run(publishViewSql(d, state.generation));
        db.tables.set(d, state);
      }
      const loader = new Loader(conn, d, state, this.variantCounts(t, d), true);
      await loader.open();
      let sinceCommit = 0;
      let lastBatch: string | null = null;
      for (const slice of this.slices(t, d, state.seq + 1, ds.seq)) {
        let rest = slice;
        if (sinceCommit >= COMMIT_ROWS) {
          // records of one ingest batch share created_at: a step ends only where a batch does
          const cut = slice.findIndex((r) => r.created_at !== lastBatch);
          if (cut >= 0) {
            await loader.add(slice.slice(0, cut));
            await this.commitStep(db, conn, t, d, state, loader);
            sinceCommit = 0;
            rest = slice.slice(cut);
          }
        }
        await loader.add(rest);
        sinceCommit += rest.length;
        lastBatch = slice[slice.length - 1].created_at;
        await yieldToLoop();
      }
      await loader.flush();
      await deleteSeqs(conn, physicalTable(d, state.generation), tombs);
      state.seq = Math.max(state.seq, ds.seq); // records missing from the range were deleted meanwhile
      state.version++;
      await saveTableState(conn, d, state);
      return loader.rows;
    });
    await this.afterCommit(db, t, d, tombs);
    this.stats.records += loaded;
    this.stats.ms += performance.now() - started;
  }

  private async commitStep(db: TenantDb, conn: DuckDBConnection, t: string, d: string, state: TableState, loader: Loader): Promise<void> {
    await loader.flush();
    state.version++;
    await saveTableState(conn, d, state);
    await db.commitStep(conn);
    await mirrorTableState(this.store, t, d, state);
  }

  private async afterCommit(db: TenantDb, t: string, d: string, appliedTombs: number[]): Promise<void> {
    const exists = this.store.meta.get([t, 'dataset', d]) !== undefined;
    await mirrorTableState(this.store, t, d, (exists && db.tables.get(d)) || null);
    if (appliedTombs.length > 0) {
      await this.store.meta.transaction(() => {
        for (const seq of appliedTombs) this.store.meta.remove(sqlTombKey(t, d, seq));
      });
    }
  }

  /** Deleted records leave the table at once when the tenant's database is open; else their tombstones wait for it. */
  async removed(t: string, d: string, seqs: number[]): Promise<void> {
    const pending = this.dbs.get(t);
    const db = pending && (await pending.catch(() => null));
    if (!db) return;
    const ds: DatasetState | undefined = this.store.meta.get([t, 'dataset', d]);
    if (!ds || ds.deleting) return; // the whole table goes when the deletion ends
    await db.write(async (conn) => {
      const state = db.tables.get(d);
      if (!state) return;
      await deleteSeqs(conn, physicalTable(d, state.generation), seqs);
      state.version++;
      await saveTableState(conn, d, state);
    });
    await this.afterCommit(db, t, d, seqs);
  }

  /** Drops a deleted dataset's table. */
  async drop(t: string, d: string): Promise<void> {
    await this.dropIn(await this.tenant(t), t, d);
  }

  private async dropIn(db: TenantDb, t: string, d: string): Promise<void> {
    await db.write(async (conn) => {
      const state = db.tables.get(d);
      await conn.run(`DROP VIEW IF EXISTS main.${quote(d)}`);
      if (state) await conn.run(`DROP TABLE IF EXISTS ${physicalTable(d, state.generation)}`);
      await deleteTableState(conn, d);
      db.tables.delete(d);
    });
    await mirrorTableState(this.store, t, d, null);
    await this.store.meta.transaction(() => {
      removePrefix(this.store.meta, [t, 'sqltomb', d]);
    });
  }

  /** A deleted tenant's database goes, files and all. */
  async dropTenant(t: string): Promise<void> {
    const pending = this.dbs.get(t);
    this.dbs.delete(t);
    const db = pending && (await pending.catch(() => null));
    await db?.close();
    this.removeFiles(t);
  }

  private removeFiles(t: string): void {
    removeDatabase(this.path(t));
  }

  /** Removes the databases of tenants that no longer exist (deleted while this process was not running). */
  removeOrphans(exists: (tenantId: string) => boolean): void {
    const dir = join(this.dataDir, 'sql');
    if (!existsSync(dir)) return;
    const tenants = new Set(readdirSync(dir).map((f) => f.replace(/\.duckdb.*$/, '')));
    for (const t of tenants) if (!exists(t)) this.removeFiles(t);
  }

  /**
   * Loads every record into a new generation of the table and promotes it in the same transaction:
   * a query that started before the commit reads the old generation to its end.
   */
  async rebuild(t: string, d: string): Promise<{ generation: number; records: number; columns: number }> {
    const db = await this.tenant(t);
    const tombs = this.tombs(t, d);
    const out = await db.write(async (conn) => {
      const ds: DatasetState | undefined = this.store.meta.get([t, 'dataset', d]);
      if (!ds) throw new NotFound(`dataset '${d}' not found`);
      const old = db.tables.get(d);
      const next = newTableState((old?.generation ?? 0) + 1);
      await conn.run(createTableSql(d, next.generation, []));
      const loader = new Loader(conn, d, next, this.variantCounts(t, d), false);
      for (const slice of this.slices(t, d, 1, ds.seq)) {
        await loader.add(slice);
        await yieldToLoop();
      }
      await loader.flush();
      next.seq = ds.seq;
      next.version = (old?.version ?? 0) + 1;
      await conn.run(publishViewSql(d, next.generation));
      if (old) await conn.run(`DROP TABLE IF EXISTS ${physicalTable(d, old.generation)}`);
      await saveTableState(conn, d, next);
      db.tables.set(d, next);
      return { generation: next.generation, records: loader.rows, columns: next.columns.length };
    });
    await this.afterCommit(db, t, d, tombs);
    return out;
  }

  /** The fields the table has a column for, as `path\0type` (from the LMDB copy: no DuckDB needed); null when it has no table. */
  columnsOf(t: string, d: string): Set<string> | null {
    const mirror: Pick<TableState, 'columns'> | undefined = this.store.meta.get(mirrorKey(t, d));
    return mirror ? new Set(mirror.columns.map((c) => fieldKey(c.path, c.type))) : null;
  }

  async close(): Promise<void> {
    const open = [...this.dbs.values()];
    this.dbs.clear();
    for (const pending of open) await (await pending.catch(() => null))?.close();
  }

  /** How many value types each field path of the dataset has had: a column's name depends on it. */
  private variantCounts(t: string, d: string): (path: string) => number {
    const counts = new Map<string, number>();
    for (const key of this.store.meta.getKeys({ start: [t, 'field', d], end: [t, 'field', d, MAX_KEY] })) {
      const path = String((key as (string | number)[])[3]);
      counts.set(path, (counts.get(path) ?? 0) + 1);
    }
    return (path) => counts.get(path) ?? 1;
  }

  private tombs(t: string, d: string): number[] {
    return [...this.store.meta.getKeys({ start: [t, 'sqltomb', d], end: [t, 'sqltomb', d, MAX_KEY] })].map((k) => (k as (string | number)[])[3] as number);
  }

  /** The dataset's records with `from ≤ seq ≤ to`, a slice at a time. */
  private *slices(t: string, d: string, from: number, to: number): Generator<StoredRecord[]> {
    while (from <= to) {
      const slice = [...this.store.records.getRange({ start: [t, d, from], end: [t, d, to + 1], limit: SLICE }).map(({ value }) => value)];
      if (slice.length === 0) return;
      yield slice;
      from = slice[slice.length - 1].seq + 1;
    }
  }
}
