// Datasets: counts and readiness, creating one (admin), uploads (admin) and recent ingest runs.
import { useState } from 'preact/hooks';
import type { Dataset, DatasetList } from '../../api/datasets';
import { get, post } from '../api';
import { ErrorBox } from '../components/ErrorBox';
import { IngestRuns, readiness } from '../components/IngestRuns';
import { Table } from '../components/Table';
import { Upload } from '../components/Upload';
import { fmtInt, fmtTime } from '../format';
import { isAdmin } from '../session';
import { useAsync } from '../useAsync';

export function DatasetsPage() {
  const admin = isAdmin();
  const list = useAsync(() => get<DatasetList>('/v1/datasets').then((r) => r.datasets));
  const [id, setId] = useState('');
  const [semantic, setSemantic] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const [uploads, setUploads] = useState(0);

  const create = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      await post<Dataset>('/v1/admin/datasets', { dataset_id: id.trim(), semantic });
      setId('');
      await list.reload();
    } catch (err) {
      setError((err as Error).message);
    }
  };

  return (
    <div>
      <h1>Datasets</h1>
      <section class="card" aria-labelledby="ds-h">
        <h2 id="ds-h">Datasets</h2>
        {admin && (
          <form class="row" onSubmit={create}>
            <label class="grow">
              <span>New dataset id (a-z, 0-9, _ and -)</span>
              <input value={id} required pattern="[a-z0-9][a-z0-9_\-]*" maxLength={63} onInput={(e) => setId(e.currentTarget.value)} />
            </label>
            <label class="check">
              <input type="checkbox" checked={semantic} onChange={(e) => setSemantic(e.currentTarget.checked)} />
              <span>Semantic vectors</span>
            </label>
            <button type="submit" disabled={!id.trim()}>
              Create dataset
            </button>
          </form>
        )}
        <ErrorBox error={error ?? list.error} />
        <Table caption="Datasets" head={['Dataset', 'Records', 'Ready for', 'Sources', 'Created']}>
          {(list.data ?? []).map((d) => (
            <tr key={d.dataset_id}>
              <td>
                {d.dataset_id}
                {d.name !== d.dataset_id && <div class="muted">{d.name}</div>}
              </td>
              <td class="num">{fmtInt(d.record_count)}</td>
              <td>{readiness(d.readiness)}</td>
              <td>{d.sources.length}</td>
              <td>{fmtTime(d.created_at)}</td>
            </tr>
          ))}
        </Table>
        {list.data && !list.data.length && <p class="muted">No datasets yet.</p>}
      </section>
      {admin && list.data && list.data.length > 0 && (
        <Upload
          datasets={list.data.map((d) => d.dataset_id)}
          onDone={() => {
            setUploads((n) => n + 1);
            void list.reload();
          }}
        />
      )}
      <IngestRuns refreshKey={uploads} onChanged={() => void list.reload()} />
    </div>
  );
}
