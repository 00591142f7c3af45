import { availableParallelism } from 'node:os';
import { positive } from '../envNumber.js';

/** What one tenant's SQL may use. Each has an environment variable so an operator can change it. */
export interface SqlLimits {
  /** longest a statement may run, in ms (SVC_SQL_TIMEOUT_MS) */
  timeoutMs: number;
  /** DuckDB memory limit of one tenant's database (SVC_SQL_MEMORY_LIMIT, e.g. `1GB`) */
  memoryLimit: string;
  /** DuckDB worker threads of one tenant's database (SVC_SQL_THREADS) */
  threads: number;
  /** disk a statement may spill to beyond the memory limit (SVC_SQL_TEMP_LIMIT) */
  tempLimit: string;
  /** most rows an answer keeps for its cursor pages (SVC_SQL_MAX_RESULT_ROWS) */
  maxResultRows: number;
}

export function sqlLimits(env = process.env): SqlLimits {
  return {
    timeoutMs: Math.floor(positive(env.SVC_SQL_TIMEOUT_MS, 30_000)),
    memoryLimit: env.SVC_SQL_MEMORY_LIMIT || '1GB',
    threads: Math.floor(positive(env.SVC_SQL_THREADS, availableParallelism())),
    tempLimit: env.SVC_SQL_TEMP_LIMIT || '8GB',
    maxResultRows: Math.floor(positive(env.SVC_SQL_MAX_RESULT_ROWS, 100_000)),
  };
}
