import type { DuckDBConnection } from '@duckdb/node-api';
import type { Store } from '../store/db.js';
import { INTERNAL_SCHEMA, type ColumnDef } from './schema.js';
import { keys } from '../store/keys.js';

/**
 * What the SQL index holds of one dataset: the generation callers read, the last record sequence
 * it holds (every record up to it and none after), its field columns in table order, and a version
 * that moves on every committed change.
 */
export interface TableState {
  generation: number;
  seq: number;
  version: number;
  columns: ColumnDef[];
}

export const newTableState = (generation = 1): TableState => ({ generation, seq: 0, version: 0, columns: [] });

/** Where states are kept: of the generation each dataset's view reads, and of a new one being built. */
export type StateTable = 'tables' | 'pending';

/** Writes the state inside the caller's transaction, so it commits with the rows it describes. */
export async function saveTableState(conn: DuckDBConnection, datasetId: string, state: TableState, table: StateTable = 'tables'): Promise<void> {
  await deleteTableState(conn, datasetId, table);
  await conn.run(`INSERT INTO ${INTERNAL_SCHEMA}.${table} VALUES ($1, $2)`, [datasetId, JSON.stringify(state)]);
}

export async function deleteTableState(conn: DuckDBConnection, datasetId: string, table: StateTable = 'tables'): Promise<void> {
  await conn.run(`DELETE FROM ${INTERNAL_SCHEMA}.${table} WHERE dataset = $1`, [datasetId]);
}

/**
 * A copy of the columns in LMDB (`[tenant, 'sqlcols', dataset]`) for what must answer without
 * opening DuckDB: the `fast` flags of `GET /v1/admin/fields`. DuckDB holds the truth; the copy is
 * written after each commit and can only lag it.
 */
export const mirrorKey = (tenantId: string, datasetId: string) => keys.sqlColumns(tenantId, datasetId);

export function mirrorTableState(store: Store, tenantId: string, datasetId: string, state: TableState | null): Promise<boolean> {
  return state ? store.meta.put(mirrorKey(tenantId, datasetId), { generation: state.generation, seq: state.seq, columns: state.columns }) : store.meta.remove(mirrorKey(tenantId, datasetId));
}
