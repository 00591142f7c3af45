// Views: saved searches, and the records of one.
import { useState } from 'preact/hooks';
import type { ResultRecord } from '../../api/search';
import type { ViewList, ViewRecords } from '../../api/views';
import { del, enc, get } from '../api';
import { ContextPanel } from '../components/ContextPanel';
import { ErrorBox } from '../components/ErrorBox';
import { ResultRow } from '../components/ResultRow';
import { Table } from '../components/Table';
import { fmtInt, fmtTime } from '../format';
import { isAdmin } from '../session';
import { useAsync } from '../useAsync';

export function ViewsPage() {
  const admin = isAdmin();
  const views = useAsync(() => get<ViewList>('/v1/views?limit=100').then((r) => r.views));
  const [open, setOpen] = useState<ViewRecords | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [record, setRecord] = useState<ResultRecord | null>(null);

  const show = async (id: string) => {
    setError(null);
    try {
      setRecord(null);
      setOpen(await get<ViewRecords>(`/v1/views/${enc(id)}/records?limit=20`));
    } catch (e) {
      setError((e as Error).message);
    }
  };
  const more = async () => {
    if (!open?.next_cursor) return;
    try {
      const page = await get<ViewRecords>(`/v1/views/${enc(open.view_id)}/records?limit=20&cursor=${enc(open.next_cursor)}`);
      setOpen({ ...page, records: [...open.records, ...page.records] });
    } catch (e) {
      setError((e as Error).message);
    }
  };
  const remove = async (id: string, name: string) => {
    if (!confirm(`Delete the view “${name}”?`)) return;
    try {
      await del(`/v1/views/${enc(id)}`);
      if (open?.view_id === id) setOpen(null);
      await views.reload();
    } catch (e) {
      setError((e as Error).message);
    }
  };

  return (
    <div>
      <h1>Views</h1>
      <ErrorBox error={error ?? views.error} />
      <section class="card">
        <Table caption="Views" head={['Name', 'Kind', 'Records', 'Created', 'Expires', '']}>
          {(views.data ?? []).map((v) => (
            <tr key={v.view_id}>
              <td>{v.name}</td>
              <td>{v.kind}</td>
              <td class="num">{fmtInt(v.record_count)}</td>
              <td>{fmtTime(v.created_at)}</td>
              <td>{fmtTime(v.expires_at)}</td>
              <td class="actions-cell">
                <button type="button" onClick={() => show(v.view_id)}>
                  Open records
                </button>
                {admin && (
                  <button type="button" class="danger" onClick={() => remove(v.view_id, v.name)}>
                    Delete
                  </button>
                )}
              </td>
            </tr>
          ))}
        </Table>
        {views.data && !views.data.length && <p class="muted">No views yet: save one from a search.</p>}
      </section>
      {open && (
        <section class="card" aria-label="View records">
          <h2>
            Records of {views.data?.find((v) => v.view_id === open.view_id)?.name ?? open.view_id} ({fmtInt(open.total.value)})
          </h2>
          <div class={record ? 'results-split' : undefined}>
            <ol class="results">
              {open.records.map((r) => (
                <ResultRow key={r.id} record={r} selected={record?.id === r.id} onOpen={() => setRecord(r)} />
              ))}
            </ol>
            {record && <ContextPanel record={record} onClose={() => setRecord(null)} />}
          </div>
          {open.next_cursor && (
            <button type="button" onClick={more}>
              More records
            </button>
          )}
        </section>
      )}
    </div>
  );
}
