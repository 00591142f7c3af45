import type { ResultRecord } from '../../api/search.js';
import type { Caller } from '../auth/caller.js';
import type { Search } from '../search/search.js';
import type { Sql } from '../sql/sql.js';
import { recordColumns, sqlColumns, type Column, type ExportRecord } from './columns.js';
import type { ExportState } from './state.js';
import type { Views } from '../views/views.js';

/** Views as an export reads them: a view's existence when the export is made, then its records in batches. */
export type ViewSource = Pick<Views, 'get' | 'all'>;

/** What an export writes: its columns and its records, a batch at a time; `close` ends the reading early. */
export interface ExportRows {
  columns: Column[];
  batches: AsyncGenerator<ExportRecord[]>;
  close(): void;
}

/** Opens what an export names: its search (frozen as the attempt starts), its view, or its statement. */
export class RowSources {
  constructor(
    private readonly search: Search,
    private readonly sql: Sql,
    private readonly views: ViewSource,
    /** how long the statement of an export may run, in ms */
    private readonly sqlTimeoutMs: () => number,
  ) {}

  async open(caller: Caller, s: ExportState): Promise<ExportRows> {
    if (s.sql !== null) {
      const stream = await this.sql.stream(caller, s.sql, s.params, this.sqlTimeoutMs());
      return { columns: sqlColumns(stream.columns), batches: stream.batches, close: stream.close };
    }
    const columns = recordColumns(s.fields);
    if (s.search_request !== null) {
      // frozen now, as the attempt starts: a rerun writes the records as they are when it runs
      const frozen = this.search.freeze(caller, s.search_request);
      // a ranking is held in memory, so it has a cap; a stream from the store has none
      const max = this.search.ranks(frozen.request) ? this.search.limits.maxAnswerRecords : Infinity;
      // no deadline: an export can be cancelled, and a deadline would count the time spent writing between batches
      return { columns, batches: records(this.search.all(caller, frozen, max, { deadlineMs: Infinity })), close: () => {} };
    }
    return { columns, batches: records(this.views.all(caller, s.view_id!)), close: () => {} };
  }
}

async function* records(found: AsyncGenerator<{ record: ResultRecord }[]>): AsyncGenerator<ResultRecord[]> {
  for await (const batch of found) yield batch.map((f) => f.record);
}
