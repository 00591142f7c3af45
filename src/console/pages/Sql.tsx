// SQL: a statement over the tenant's datasets (Ctrl+Enter runs it), its rows as a table.
import { useState } from 'preact/hooks';
import type { SqlEnvelope } from '../../api/sql';
import { post } from '../api';
import { ErrorBox } from '../components/ErrorBox';
import { Table } from '../components/Table';
import { fmtInt, fmtValue } from '../format';

let lastSql = '';

export function SqlPage() {
  const [sql, setSql] = useState(lastSql);
  const [answer, setAnswer] = useState<SqlEnvelope | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const run = async () => {
    lastSql = sql;
    setBusy(true);
    setError(null);
    try {
      setAnswer(await post<SqlEnvelope>('/v1/sql', { sql, limit: 1000 }));
    } catch (e) {
      setAnswer(null);
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const more = async () => {
    if (!answer?.next_cursor) return;
    try {
      const page = await post<SqlEnvelope>('/v1/sql', { sql, cursor: answer.next_cursor, limit: 1000 });
      setAnswer({ ...page, records: [...answer.records, ...page.records] });
    } catch (e) {
      setError((e as Error).message);
    }
  };

  return (
    <div>
      <h1>SQL</h1>
      <form
        class="card"
        onSubmit={(e) => {
          e.preventDefault();
          void run();
        }}
      >
        <label>
          <span>Statement (Ctrl+Enter runs it; each dataset is a table)</span>
          <textarea
            data-testid="sql-editor"
            rows={6}
            spellcheck={false}
            placeholder={'SELECT Level, count(*) AS n FROM mydataset GROUP BY ALL ORDER BY n DESC'}
            value={sql}
            onInput={(e) => setSql(e.currentTarget.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
                e.preventDefault();
                void run();
              }
            }}
          />
        </label>
        <div class="row">
          <button type="submit" class="primary" data-testid="sql-run" disabled={busy || !sql.trim()}>
            {busy ? 'Running…' : 'Run'}
          </button>
        </div>
      </form>
      <ErrorBox error={error} testid="sql-error" />
      {answer && (
        <section class="card" aria-label="Result">
          <p class="summary" role="status">
            {fmtInt(answer.records.length)} of {fmtInt(answer.total.value)}
            {answer.total.relation === 'gte' ? '+' : ''} rows · {answer.took_ms.toFixed(0)} ms
          </p>
          <Table caption="Query result" head={answer.columns.map((c) => c.name)} testid="sql-table">
            {answer.records.map((r, i) => (
              <tr key={i}>
                {answer.columns.map((c) => (
                  <td key={c.name} class={/INT|DOUBLE|DECIMAL|FLOAT|REAL/.test(c.type) ? 'num' : undefined}>
                    {fmtValue(r.metadata[c.name])}
                  </td>
                ))}
              </tr>
            ))}
          </Table>
          {answer.next_cursor && (
            <button type="button" onClick={more}>
              More rows
            </button>
          )}
        </section>
      )}
    </div>
  );
}
