// Recent ingest runs, refreshed every 2 s while one is queued or running.
import { useEffect, useRef } from 'preact/hooks';
import type { IngestRunList } from '../../api/ingest';
import { get } from '../api';
import { fmtInt, fmtTime } from '../format';
import { useAsync } from '../useAsync';
import { ErrorBox } from './ErrorBox';
import { Table } from './Table';

/** `onChanged` hears each refresh after the first (dataset counts move with the runs). */
export function IngestRuns({ refreshKey, onChanged }: { refreshKey: number; onChanged?: () => void }) {
  const runs = useAsync(() => get<IngestRunList>('/v1/ingest/runs?limit=20').then((r) => r.runs));
  useEffect(() => void runs.reload(), [refreshKey]);
  const active = (runs.data ?? []).some((r) => r.status === 'queued' || r.status === 'running');
  const first = useRef(true);
  useEffect(() => {
    if (!first.current) onChanged?.();
    first.current = false;
  }, [runs.data]);
  useEffect(() => {
    if (!active) return;
    const t = setInterval(() => void runs.reload(), 2000);
    return () => clearInterval(t);
  }, [active]);

  return (
    <section class="card" aria-labelledby="runs-h">
      <h2 id="runs-h">Recent ingest runs {active && <span class="badge">refreshing</span>}</h2>
      <ErrorBox error={runs.error} />
      <Table caption="Ingest runs" head={['Started', 'Dataset', 'Object', 'Status', 'Parsed', 'Malformed', 'Duplicates', 'Ready for']}>
        {(runs.data ?? []).map((r) => (
          <tr key={r.ingest_run_id}>
            <td>{fmtTime(r.started_at ?? r.created_at)}</td>
            <td>{r.dataset_id}</td>
            <td class="break">{r.key.slice(r.key.lastIndexOf('/') + 1)}</td>
            <td>
              <span class={`status status-${r.status}`}>{r.status}</span>
              {r.lifecycle.state !== r.status && <div class="muted small">lifecycle: {r.lifecycle.state}</div>}
              {r.lifecycle.reasons.length > 0 && <div class="muted small">{r.lifecycle.reasons.join('; ')}</div>}
              {r.error_message && <div class="error-text">{r.error_code}: {r.error_message}</div>}
              {r.errors.length > 0 && (
                <details>
                  <summary>{r.errors.length} malformed lines</summary>
                  <ul class="line-errors">
                    {r.errors.map((e) => (
                      <li key={e.line}>
                        line {e.line}: {e.reason}
                      </li>
                    ))}
                  </ul>
                </details>
              )}
            </td>
            <td class="num">{fmtInt(r.documents.parsed)}</td>
            <td class="num">{fmtInt(r.documents.malformed)}</td>
            <td class="num">{fmtInt(r.documents.duplicates)}</td>
            <td>{readiness(r.ready_for)}</td>
          </tr>
        ))}
      </Table>
      {runs.data && !runs.data.length && <p class="muted">No ingest runs yet.</p>}
    </section>
  );
}

export function readiness(r: { text_search: boolean; sql_search: boolean; semantic_search: boolean }): string {
  const ready = [r.text_search && 'text', r.sql_search && 'SQL', r.semantic_search && 'semantic'].filter(Boolean);
  return ready.length ? ready.join(', ') : 'not yet';
}
