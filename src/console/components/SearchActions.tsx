// What can be done with the current search: keep it as a view (admin), or export it as a file.
import { useEffect, useState } from 'preact/hooks';
import type { SearchRequest } from '../../api/search';
import type { Export } from '../../api/exports';
import type { View } from '../../api/views';
import { get, post, enc } from '../api';
import { isAdmin } from '../session';
import { ErrorBox } from './ErrorBox';

/** Polls an export every 2 s until it ends. */
export function useExportPoll(initial: Export | null): Export | null {
  const [exp, setExp] = useState(initial);
  useEffect(() => setExp(initial), [initial]);
  useEffect(() => {
    if (!exp || exp.status === 'completed' || exp.status === 'failed' || exp.status === 'cancelled') return;
    const t = setTimeout(() => get<Export>(`/v1/export/${enc(exp.export_id)}`).then(setExp, () => {}), 2000);
    return () => clearTimeout(t);
  }, [exp]);
  return exp;
}

export function SearchActions({ request }: { request: SearchRequest }) {
  const [name, setName] = useState('');
  const [msg, setMsg] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [format, setFormat] = useState<'ndjson' | 'csv' | 'parquet'>('ndjson');
  const [started, setStarted] = useState<Export | null>(null);
  const exp = useExportPoll(started);
  const { cursor: _c, aggregations: _a, ...saved } = request;

  const save = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      const v = await post<View>('/v1/views', { name: name.trim(), search_request: saved });
      setMsg(`Saved as view “${v.name}” (${v.record_count} records).`);
      setName('');
    } catch (err) {
      setError((err as Error).message);
    }
  };
  const exportNow = async () => {
    setError(null);
    try {
      setStarted(await post<Export>('/v1/export', { search_request: saved, format }));
    } catch (err) {
      setError((err as Error).message);
    }
  };

  return (
    <div class="search-actions">
      {isAdmin() && (
        <form class="row" onSubmit={save}>
          <label>
            <span>View name</span>
            <input value={name} required maxLength={255} onInput={(e) => setName(e.currentTarget.value)} />
          </label>
          <button type="submit" disabled={!name.trim()}>
            Save as view
          </button>
        </form>
      )}
      <div class="row">
        <label>
          <span>Export format</span>
          <select value={format} onChange={(e) => setFormat(e.currentTarget.value as typeof format)}>
            <option value="ndjson">NDJSON</option>
            <option value="csv">CSV</option>
            <option value="parquet">Parquet</option>
          </select>
        </label>
        <button type="button" onClick={exportNow} disabled={Boolean(exp && (exp.status === 'pending' || exp.status === 'running'))}>
          Export
        </button>
        {exp && (
          <span role="status" class="muted">
            {exp.status === 'completed' && exp.download_url ? (
              <a href={exp.download_url} download>
                Download {exp.row_count} rows
              </a>
            ) : exp.status === 'failed' ? (
              `Export failed: ${exp.error_message ?? ''}`
            ) : (
              `Export ${exp.status}… ${exp.row_count} rows`
            )}
          </span>
        )}
      </div>
      {msg && <p role="status">{msg}</p>}
      <ErrorBox error={error} />
    </div>
  );
}
