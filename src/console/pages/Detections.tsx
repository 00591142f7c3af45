// Detections: the tenant's rules and the hits of one.
import { useState } from 'preact/hooks';
import type { DetectionList, HitList } from '../../api/detections';
import { enc, get } from '../api';
import { ErrorBox } from '../components/ErrorBox';
import { Table } from '../components/Table';
import { fmtInt, fmtTime } from '../format';
import { useAsync } from '../useAsync';

export function DetectionsPage() {
  const list = useAsync(() => get<DetectionList>('/v1/admin/detections?limit=100').then((r) => r.detections));
  const [hits, setHits] = useState<{ id: string; name: string; hits: HitList['hits'] } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const show = async (id: string, name: string) => {
    setError(null);
    try {
      setHits({ id, name, hits: (await get<HitList>(`/v1/detections/${enc(id)}/hits?limit=50`)).hits });
    } catch (e) {
      setError((e as Error).message);
    }
  };
  return (
    <div>
      <h1>Detections</h1>
      <ErrorBox error={error ?? list.error} />
      <section class="card">
        <Table caption="Detections" head={['Name', 'Severity', 'Datasets', 'Trigger', 'Enabled', 'Last run', '']}>
          {(list.data ?? []).map((d) => (
            <tr key={d.detection_id}>
              <td>{d.name}</td>
              <td>
                <span class={`sev sev-${d.severity}`}>{d.severity}</span>
              </td>
              <td>{d.datasets.join(', ')}</td>
              <td>{d.trigger.on_ingest ? 'on ingest' : d.trigger.cron ? `cron ${d.trigger.cron}` : '—'}</td>
              <td>{d.enabled ? 'yes' : 'no'}</td>
              <td>{fmtTime(d.last_run_at)}</td>
              <td>
                <button type="button" onClick={() => show(d.detection_id, d.name)}>
                  Hits
                </button>
              </td>
            </tr>
          ))}
        </Table>
        {list.data && !list.data.length && <p class="muted">No detections (create them with `svc detections create`).</p>}
      </section>
      {hits && (
        <section class="card" aria-label="Hits">
          <h2>Hits of {hits.name}</h2>
          <Table caption="Hits" head={['Triggered', 'Group', 'Count', 'Window', 'First record']}>
            {hits.hits.map((h) => (
              <tr key={h.hit_id}>
                <td>{fmtTime(h.triggered_at)}</td>
                <td>{h.group_value ?? '—'}</td>
                <td class="num">{fmtInt(h.count)}</td>
                <td>
                  {fmtTime(h.window_start)} – {fmtTime(h.window_end)}
                </td>
                <td class="break">{h.records[0]?.body?.slice(0, 200) ?? ''}</td>
              </tr>
            ))}
          </Table>
          {!hits.hits.length && <p class="muted">No hits.</p>}
        </section>
      )}
    </div>
  );
}
