// Exports: files made from searches, views or SQL, with their downloads.
import type { ExportList } from '../../api/exports';
import { get } from '../api';
import { ErrorBox } from '../components/ErrorBox';
import { Table } from '../components/Table';
import { fmtBytes, fmtInt, fmtTime } from '../format';
import { useAsync } from '../useAsync';
import { useEffect } from 'preact/hooks';

export function ExportsPage() {
  const exports = useAsync(() => get<ExportList>('/v1/export?limit=100').then((r) => r.exports));
  const active = (exports.data ?? []).some((e) => e.status === 'pending' || e.status === 'running');
  useEffect(() => {
    if (!active) return;
    const t = setInterval(() => void exports.reload(), 2000);
    return () => clearInterval(t);
  }, [active]);
  return (
    <div>
      <h1>Exports</h1>
      <ErrorBox error={exports.error} />
      <section class="card">
        <Table caption="Exports" head={['Created', 'Name', 'Format', 'Status', 'Rows', 'Size', 'File']}>
          {(exports.data ?? []).map((e) => (
            <tr key={e.export_id}>
              <td>{fmtTime(e.created_at)}</td>
              <td>{e.name ?? e.export_id}</td>
              <td>
                {e.format}
                {e.gzip ? ' (gzip)' : ''}
              </td>
              <td>
                <span class={`status status-${e.status}`}>{e.status}</span>
                {e.error_message && <div class="error-text">{e.error_message}</div>}
              </td>
              <td class="num">{fmtInt(e.row_count)}</td>
              <td class="num">{fmtBytes(e.size_bytes)}</td>
              <td>
                {e.status === 'completed' && e.download_url ? (
                  <a href={e.download_url} download>
                    Download
                  </a>
                ) : (
                  '—'
                )}
              </td>
            </tr>
          ))}
        </Table>
        {exports.data && !exports.data.length && <p class="muted">No exports yet: export a search from the Search page.</p>}
      </section>
    </div>
  );
}
