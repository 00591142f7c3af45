/** What one tenant's SQL may use. Each has an environment variable so an operator can change it (read in config.ts). */
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
