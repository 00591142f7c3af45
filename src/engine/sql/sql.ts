import type { SchemaRebuildJob, SqlEnvelope, SqlRequest } from '../../api/sql.js';
import type { Caller } from '../auth/caller.js';
import type { Datasets } from '../datasets/datasets.js';
import type { JobQueue } from '../jobs/queue.js';
import type { Store } from '../store/db.js';
import type { SqlLimits } from './limits.js';
import { SqlQueries } from './queries.js';
import { SchemaRebuilds } from './rebuild.js';
import { fieldKey } from './schema.js';
import { SqlIndexes } from './sqlIndexes.js';
import type { SqlParams, SqlValue } from './execute.js';
import { checkRead, streamRead, type SqlStream } from './stream.js';

const SYSTEM_FIELDS = new Set([fieldKey('title', 'str'), fieldKey('body', 'str'), fieldKey('time', 'datetime')]);

/** SQL search as the engine sees it: the index (one of the derived indexes), queries, and schema rebuilds. */
export class Sql {
  readonly indexes: SqlIndexes;
  private readonly queries: SqlQueries;
  private readonly rebuilds: SchemaRebuilds;

  constructor(private readonly store: Store, dataDir: string, datasets: Datasets, jobs: JobQueue, tenantExists: (tenantId: string) => boolean, limits: SqlLimits) {
    this.indexes = new SqlIndexes(store, dataDir, datasets, limits);
    this.indexes.removeOrphans(tenantExists);
    this.queries = new SqlQueries(store, this.indexes);
    this.rebuilds = new SchemaRebuilds(store, jobs, datasets, this.indexes);
  }

  /** `named`, when given, binds the statement's `$name` parameters instead of `req.params` (a query endpoint's run). */
  query(caller: Caller, req: SqlRequest, named?: Record<string, SqlValue>): Promise<SqlEnvelope> {
    return this.queries.run(caller, req, named);
  }

  /** Refuses a statement a query would refuse (the same errors), without running it: an export checks before it makes its job. */
  check(caller: Caller, sql: string, params: SqlParams = []): Promise<void> {
    return checkRead(this.indexes, caller.tenant_id, sql, params);
  }

  /** Every row of a statement as result records, streamed with no row cap; `timeoutMs` bounds the whole read. */
  stream(caller: Caller, sql: string, params: SqlValue[], timeoutMs: number): Promise<SqlStream> {
    return streamRead(this.store, this.indexes, caller.tenant_id, sql, params, timeoutMs);
  }

  rebuildSchema(caller: Caller, datasetId: string): Promise<SchemaRebuildJob> {
    return this.rebuilds.start(caller, datasetId);
  }

  schemaRebuild(caller: Caller, datasetId: string, jobId: string): SchemaRebuildJob {
    return this.rebuilds.get(caller, datasetId, jobId);
  }

  /** Whether the SQL table holds a field's values: a column of its own, or a system column (`_title`, `_body`, `_time`). */
  fastFields(tenantId: string, datasetId: string): (path: string, type: string) => boolean {
    const columns = this.indexes.columnsOf(tenantId, datasetId);
    return (path, type) => columns !== null && (columns.has(fieldKey(path, type)) || SYSTEM_FIELDS.has(fieldKey(path, type)));
  }

}
