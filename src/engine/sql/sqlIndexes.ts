import type { DuckDBConnection } from '@duckdb/node-api';
import { existsSync, readdirSync } from 'node:fs';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { DatasetState } from '../datasets/datasets.js';
import type { Datasets } from '../datasets/datasets.js';
import type { Build, DerivedIndex } from '../derived/derivedIndex.js';
import { DiskFull, NotFound } from '../errors.js';
import type { RunState } from '../ingest/runs.js';
import { layout } from '../layout.js';
import { logProblem } from '../log.js';
import type { StoredRecord } from '../records.js';
import { prefixRange, removePrefix, type Store } from '../store/db.js';
import { keys } from '../store/keys.js';
import type { SqlLimits } from './limits.js';
import { HeldRecords } from './heldRecords.js';
import { deleteSeqs, Loader } from './loader.js';
import { createTableSql, fieldKey, physicalTable, publishViewSql, quote } from './schema.js';
import { deleteTableState, mirrorKey, mirrorTableState, newTableState, saveTableState, type TableState } from './tableState.js';
import { removeDatabase, TenantDb } from './tenantDb.js';

/** Records read from LMDB at a time; the event loop gets a turn between slices. */
const SLICE = 2000;
/** A long load commits once it holds this many rows, at the next ingest-batch boundary. */
const COMMIT_ROWS = 200_000;

/**
 * The SQL index: one DuckDB database per tenant, one table per dataset, derived from the records by
 * sequence like the text index. A table holds exactly the records up to its `seq`: it takes an
 * ingest run's records from memory as they commit (HeldRecords), catches up from the store on what
 * it did not take (when a tenant's database opens, and after each ingest run), and
 * drops deleted records by `_seq` (at once when its database is open, else from their SQL
 * tombstones when it next opens). Databases open on first use and stay open until close.
 *
 * A new generation (a reindex, a schema rebuild) is loaded into a table of its own, committed in
 * steps, with its state in `_svc.pending`; the dataset's view moves to it once LMDB points at it
 * (`[tenant, 'sqlgen', dataset]`), which is also what a database that opens checks.
 */
export class SqlIndexes implements DerivedIndex {
  readonly name = 'sql';
  private readonly dbs = new Map<string, Promise<TenantDb>>();
  private readonly held = new HeldRecords();
  /** records loaded and time spent loading them, for benchmarks */
  readonly stats = { records: 0, ms: 0 };

  constructor(
    private readonly store: Store,
    private readonly dataDir: string,
    private readonly datasets: Datasets,
    readonly limits: SqlLimits,
  ) {}

  private path(tenantId: string): string {
    return layout.sqlFile(this.dataDir, tenantId);
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
      for (const d of live) {
        await this.reconcile(db, t, d);
        await this.catchUpIn(db, t, d);
      }
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

  /** Records an ingest batch committed: loaded from memory a few batches at a time (see HeldRecords). */
  async added(t: string, d: string, records: StoredRecord[]): Promise<void> {
    const load = this.held.add(t, d, records);
    if (load) await this.loadHeld(t, d, load);
  }

  /** An ingest-run follower: the run's records are in the SQL table once this resolves. */
  async follow(run: RunState, save: () => void): Promise<void> {
    const rest = this.held.take(run.tenant_id, run.dataset_id);
    if (rest.length > 0) await this.loadHeld(run.tenant_id, run.dataset_id, rest);
    await this.catchUp(run.tenant_id, run.dataset_id); // what was not held: a batch out of order, a deletion meanwhile
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
      this.held.reset(t, d);
      const ds: DatasetState | undefined = this.store.meta.get(keys.dataset(t, d));
      if (!ds || ds.deleting) return 0;
      if ((db.tables.get(d)?.seq ?? -1) >= ds.seq && tombs.length === 0) return 0;
      const state = await this.table(db, conn, d);
      const loader = await this.load(db, conn, t, d, state, ds.seq, true);
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

  /** Loads held records that follow on from the table's seq; the rest are left to a catch-up from the store. */
  private async loadHeld(t: string, d: string, records: StoredRecord[]): Promise<void> {
    const started = performance.now();
    const db = await this.tenant(t);
    const loaded = await db.write(async (conn) => {
      const ds: DatasetState | undefined = this.store.meta.get(keys.dataset(t, d));
      if (!ds || ds.deleting || this.held.isSpoiled(t, d)) return 0;
      const state = await this.table(db, conn, d);
      const next = HeldRecords.following(records, state.seq);
      if (next.length === 0) return 0;
      const loader = new Loader(conn, d, state, this.variantCounts(t, d), true);
      await loader.open();
      await loader.add(next);
      await loader.flush();
      state.version++;
      await saveTableState(conn, d, state);
      return loader.rows;
    });
    if (loaded > 0) await mirrorTableState(this.store, t, d, db.tables.get(d) ?? null);
    this.stats.records += loaded;
    this.stats.ms += performance.now() - started;
  }

  /** The dataset's published table, created empty when it has none. */
  private async table(db: TenantDb, conn: DuckDBConnection, d: string): Promise<TableState> {
    let state = db.tables.get(d);
    if (!state) {
      state = newTableState();
      await conn.run(createTableSql(d, state.generation, []));
      await conn.run(publishViewSql(d, state.generation));
      db.tables.set(d, state);
    }
    return state;
  }

  /**
   * Loads the records past `state.seq` up to `upto` into the generation `state` describes (the
   * published one, or one being built), a slice at a time; a long load commits in steps.
   */
  private async load(db: TenantDb, conn: DuckDBConnection, t: string, d: string, state: TableState, upto: number, published: boolean, maxRows = Infinity): Promise<Loader> {
    const loader = new Loader(conn, d, state, this.variantCounts(t, d), published);
    await loader.open();
    let sinceCommit = 0;
    let lastBatch: string | null = null;
    for (const slice of this.slices(t, d, state.seq + 1, upto)) {
      if (loader.rows >= maxRows) break;
      let rest = slice;
      if (sinceCommit >= COMMIT_ROWS) {
        // records of one ingest batch share created_at: a step ends only where a batch does
        const cut = slice.findIndex((r) => r.created_at !== lastBatch);
        if (cut >= 0) {
          await loader.add(slice.slice(0, cut));
          await this.commitStep(db, conn, t, d, state, loader, published);
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
    return loader;
  }

  private async commitStep(db: TenantDb, conn: DuckDBConnection, t: string, d: string, state: TableState, loader: Loader, published: boolean): Promise<void> {
    await loader.flush();
    state.version++;
    state.seq = Math.max(state.seq, loader.lastSeq);
    await saveTableState(conn, d, state, published ? 'tables' : 'pending');
    await db.commitStep(conn);
    if (published) await mirrorTableState(this.store, t, d, state);
  }

  private async afterCommit(db: TenantDb, t: string, d: string, appliedTombs: number[]): Promise<void> {
    const exists = this.store.meta.get(keys.dataset(t, d)) !== undefined;
    await mirrorTableState(this.store, t, d, (exists && db.tables.get(d)) || null);
    if (appliedTombs.length > 0) {
      await this.store.meta.transaction(() => {
        for (const seq of appliedTombs) this.store.meta.remove(keys.sqlTomb(t, d, seq));
      });
    }
  }

  deleting(t: string, d: string, seqs: number[]): void {
    this.held.spoil(t, d);
    for (const seq of seqs) this.store.meta.put(keys.sqlTomb(t, d, seq), 1); // removed once the table lost the row
  }

  /** Deleted records leave the table (and one being built) at once when the tenant's database is open; else their tombstones wait for it. */
  async removed(t: string, d: string, seqs: number[]): Promise<void> {
    const pending = this.dbs.get(t);
    const db = pending && (await pending.catch(() => null));
    if (!db) return;
    const ds: DatasetState | undefined = this.store.meta.get(keys.dataset(t, d));
    if (!ds || ds.deleting) return; // the whole table goes when the deletion ends
    await db.write(async (conn) => {
      const building = db.pending.get(d);
      if (building) await deleteSeqs(conn, physicalTable(d, building.generation), seqs);
      const state = db.tables.get(d);
      if (!state) return;
      await deleteSeqs(conn, physicalTable(d, state.generation), seqs);
      state.version++;
      await saveTableState(conn, d, state);
    });
    await this.afterCommit(db, t, d, seqs);
  }

  /** Drops a deleted dataset's table (and one being built), its tombstones and its generation pointer. */
  async dropDataset(t: string, d: string): Promise<void> {
    await this.dropIn(await this.tenant(t), t, d);
  }

  private async dropIn(db: TenantDb, t: string, d: string): Promise<void> {
    this.held.reset(t, d);
    await db.write(async (conn) => {
      const state = db.tables.get(d);
      await conn.run(`DROP VIEW IF EXISTS main.${quote(d)}`);
      if (state) await conn.run(`DROP TABLE IF EXISTS ${physicalTable(d, state.generation)}`);
      await deleteTableState(conn, d);
      db.tables.delete(d);
      await this.dropPending(db, conn, d);
    });
    await mirrorTableState(this.store, t, d, null);
    await this.store.meta.transaction(() => {
      removePrefix(this.store.meta, keys.sqlTomb(t, d));
      this.store.meta.remove(keys.sqlGeneration(t, d));
    });
  }

  private async dropPending(db: TenantDb, conn: DuckDBConnection, d: string): Promise<void> {
    const building = db.pending.get(d);
    if (building) await conn.run(`DROP TABLE IF EXISTS ${physicalTable(d, building.generation)}`);
    await deleteTableState(conn, d, 'pending');
    db.pending.delete(d);
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
    const dir = layout.sqlDir(this.dataDir);
    if (!existsSync(dir)) return;
    const tenants = new Set(readdirSync(dir).map((f) => f.replace(/\.duckdb.*$/, '')));
    for (const t of tenants) if (!exists(t)) this.removeFiles(t);
  }

  generation(t: string, d: string): number {
    return this.store.meta.get(keys.sqlGeneration(t, d)) ?? this.store.meta.get(mirrorKey(t, d))?.generation ?? 0;
  }

  async build(t: string, d: string, generation: number): Promise<Build> {
    return this.buildIn(await this.tenant(t), t, d, generation);
  }

  private async buildIn(db: TenantDb, t: string, d: string, generation: number): Promise<Build> {
    await db.write(async (conn) => {
      await this.dropPending(db, conn, d); // what a crashed attempt left
      const state = newTableState(generation);
      await conn.run(`DROP TABLE IF EXISTS ${physicalTable(d, generation)}`);
      await conn.run(createTableSql(d, generation, []));
      await saveTableState(conn, d, state, 'pending');
      db.pending.set(d, state);
    });
    const mine = () => {
      const state = db.pending.get(d);
      if (state?.generation !== generation) throw new Error(`generation ${generation} of the SQL table of '${d}' is not being built`);
      return state;
    };
    return {
      // a write of its own per step: the tenant's other datasets' writes take their turns between them
      fill: async (upto, stop) => {
        for (let total = 0; ; ) {
          stop?.();
          const rows = await db.write(async (conn) => {
            const state = mine();
            const loader = await this.load(db, conn, t, d, state, upto, false, COMMIT_ROWS);
            state.seq = loader.rows >= COMMIT_ROWS ? Math.max(state.seq, loader.lastSeq) : Math.max(state.seq, upto);
            state.version++;
            await saveTableState(conn, d, state, 'pending');
            return loader.rows;
          });
          total += rows;
          if (rows < COMMIT_ROWS) return total;
        }
      },
      seal: async () => void mine(), // each fill commits
      discard: () => db.write(async (conn) => void (db.pending.get(d)?.generation === generation && (await this.dropPending(db, conn, d)))),
    };
  }

  point(t: string, d: string, generation: number): void {
    this.store.meta.put(keys.sqlGeneration(t, d), generation);
  }

  async promote(t: string, d: string, generation: number): Promise<void> {
    const db = await this.tenant(t); // a database opening now reconciles with the pointer itself
    await this.reconcile(db, t, d);
    await this.catchUpIn(db, t, d); // what was committed, or deleted, since its last fill
  }

  /**
   * Makes the dataset's view read the generation LMDB points at: the one built for it (promoted
   * now), or, when that was lost, one loaded again from the records. A generation being built for
   * another pointer is left over from a crashed attempt and goes.
   */
  private async reconcile(db: TenantDb, t: string, d: string): Promise<void> {
    const wanted: number | undefined = this.store.meta.get(keys.sqlGeneration(t, d));
    const building = db.pending.get(d);
    if (wanted === undefined || db.tables.get(d)?.generation === wanted) {
      if (building) await db.write((conn) => this.dropPending(db, conn, d));
      return;
    }
    if (building?.generation !== wanted) {
      const ds: DatasetState | undefined = this.store.meta.get(keys.dataset(t, d));
      const built = await this.buildIn(db, t, d, wanted);
      await built.fill(ds?.seq ?? 0);
    }
    await db.write(async (conn) => {
      const next = db.pending.get(d)!;
      const old = db.tables.get(d);
      await conn.run(publishViewSql(d, next.generation));
      if (old) await conn.run(`DROP TABLE IF EXISTS ${physicalTable(d, old.generation)}`);
      next.version = Math.max(next.version, (old?.version ?? 0) + 1);
      await saveTableState(conn, d, next);
      await deleteTableState(conn, d, 'pending');
      db.tables.set(d, next);
      db.pending.delete(d);
    });
    await mirrorTableState(this.store, t, d, db.tables.get(d)!);
  }

  /** Loads every record into a new generation of the table and promotes it (a schema rebuild). */
  async rebuild(t: string, d: string): Promise<{ generation: number; records: number; columns: number }> {
    const ds: DatasetState | undefined = this.store.meta.get(keys.dataset(t, d));
    if (!ds) throw new NotFound(`dataset '${d}' not found`);
    const db = await this.tenant(t);
    const generation = Math.max(this.generation(t, d), db.tables.get(d)?.generation ?? 0) + 1;
    const built = await this.build(t, d, generation);
    const records = await built.fill(ds.seq);
    await this.store.meta.transaction(() => this.point(t, d, generation));
    await this.promote(t, d, generation);
    return { generation, records, columns: db.tables.get(d)?.columns.length ?? 0 };
  }

  /** The fields the table has a column for, as `path\0type` (from the LMDB copy: no DuckDB needed); null when it has no table. */
  columnsOf(t: string, d: string): Set<string> | null {
    const mirror: Pick<TableState, 'columns'> | undefined = this.store.meta.get(mirrorKey(t, d));
    return mirror ? new Set(mirror.columns.map((c) => fieldKey(c.path, c.type))) : null;
  }

  async snapshot(): Promise<void> {} // each write commits: DuckDB checkpoints on its own and at close

  async close(): Promise<void> {
    const open = [...this.dbs.values()];
    this.dbs.clear();
    for (const pending of open) await (await pending.catch(() => null))?.close();
  }

  /** How many value types each field path of the dataset has had: a column's name depends on it. */
  private variantCounts(t: string, d: string): (path: string) => number {
    const counts = new Map<string, number>();
    for (const key of this.store.meta.getKeys(prefixRange(keys.field(t, d)))) {
      const path = String((key as (string | number)[])[3]);
      counts.set(path, (counts.get(path) ?? 0) + 1);
    }
    return (path) => counts.get(path) ?? 1;
  }

  private tombs(t: string, d: string): number[] {
    return [...this.store.meta.getKeys(prefixRange(keys.sqlTomb(t, d)))].map((k) => (k as (string | number)[])[3] as number);
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
