// A record's source line among its neighbours, read with an ordinary SQL query.
import { useEffect, useRef } from 'preact/hooks';
import type { ResultRecord } from '../../api/search';
import type { SqlEnvelope } from '../../api/sql';
import { post } from '../api';
import { contextSql } from '../sqlText';
import { useAsync } from '../useAsync';
import { ErrorBox } from './ErrorBox';

export function ContextPanel({ record, onClose }: { record: ResultRecord; onClose: () => void }) {
  const p = record.provenance;
  const rows = useAsync(
    () => post<SqlEnvelope>('/v1/sql', { sql: contextSql(p.dataset_id, p.source_key, p.line) }).then((r) => r.records.map((x) => x.metadata as { _line: number; _body: string })),
    [record.id],
  );
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [record.id]);
  return (
    <aside class="card context" data-testid="context-panel" aria-labelledby="context-heading">
      <div class="context-head">
        <h2 id="context-heading" tabIndex={-1} ref={heading}>
          {p.source_key}:{p.line}
        </h2>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
      <ErrorBox error={rows.error} />
      {rows.loading && <p class="muted">Loading…</p>}
      {rows.data && (
        <ol class="lines">
          {rows.data.map((r) => (
            <li key={r._line} class={r._line === p.line ? 'current' : undefined} data-testid={r._line === p.line ? 'context-line-current' : undefined} aria-current={r._line === p.line ? 'true' : undefined}>
              <span class="ln">{r._line}</span>
              <code>{r._body}</code>
            </li>
          ))}
        </ol>
      )}
      {rows.data && !rows.data.length && <p class="muted">The source lines are not in the SQL index.</p>}
    </aside>
  );
}
