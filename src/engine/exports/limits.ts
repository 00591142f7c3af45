/** What exports may take and how long they last. Each has an environment variable so an operator can change it (read in config.ts). */
export interface ExportLimits {
  /** days a completed (or failed) export is kept before its file is removed (SVC_EXPORT_RETENTION_DAYS) */
  retentionDays: number;
  /** seconds a download URL stays valid (SVC_EXPORT_URL_SECONDS) */
  urlSeconds: number;
  /** how many times the SQL query timeout a statement being exported may run: an export reads everything (SVC_EXPORT_SQL_TIMEOUT_FACTOR) */
  sqlTimeoutFactor: number;
  /** memory of the DuckDB instance that writes Parquet files (SVC_EXPORT_MEMORY_LIMIT) */
  parquetMemory: string;
  /**
   * a pause after each batch written, in ms (SVC_EXPORT_BATCH_PAUSE_MS, default none): throttles
   * exports on a server whose searches must not compete with them for the disk
   */
  batchPauseMs: number;
}
