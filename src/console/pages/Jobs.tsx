// Jobs: the tenant's durable jobs, with cancel for admins.
import { useEffect } from 'preact/hooks';
import type { Job } from '../../api/jobs';
import { enc, get, post } from '../api';
import { ErrorBox } from '../components/ErrorBox';
import { Table } from '../components/Table';
import { fmtTime } from '../format';
import { isAdmin } from '../session';
import { useAsync } from '../useAsync';
import { useState } from 'preact/hooks';

export function JobsPage() {
  const admin = isAdmin();
  const jobs = useAsync(() => get<{ jobs: Job[] }>('/v1/admin/jobs?limit=100').then((r) => r.jobs));
  const [error, setError] = useState<string | null>(null);
  const active = (jobs.data ?? []).some((j) => j.status === 'pending' || j.status === 'running');
  useEffect(() => {
    if (!active) return;
    const t = setInterval(() => void jobs.reload(), 2000);
    return () => clearInterval(t);
  }, [active]);
  const cancel = async (j: Job) => {
    if (!confirm(`Cancel the ${j.type} job ${j.job_id}?`)) return;
    setError(null);
    try {
      await post(`/v1/admin/jobs/${enc(j.job_id)}/cancel`);
      await jobs.reload();
    } catch (e) {
      setError((e as Error).message);
    }
  };
  return (
    <div>
      <h1>Jobs</h1>
      <ErrorBox error={error ?? jobs.error} />
      <section class="card">
        <Table caption="Jobs" head={['Created', 'Type', 'Status', 'Attempts', 'Completed', ...(admin ? [''] : [])]}>
          {(jobs.data ?? []).map((j) => (
            <tr key={j.job_id}>
              <td>{fmtTime(j.created_at)}</td>
              <td>
                {j.type}
                <div class="muted small">{j.job_id}</div>
              </td>
              <td>
                <span class={`status status-${j.status}`}>{j.status}</span>
                {j.error_message && <div class="error-text">{j.error_message}</div>}
              </td>
              <td class="num">
                {j.attempts}/{j.max_attempts}
              </td>
              <td>{fmtTime(j.completed_at)}</td>
              {admin && (
                <td>
                  {(j.status === 'pending' || j.status === 'running') && (
                    <button type="button" class="danger" onClick={() => cancel(j)} disabled={j.cancel_requested}>
                      {j.cancel_requested ? 'Cancelling' : 'Cancel'}
                    </button>
                  )}
                </td>
              )}
            </tr>
          ))}
        </Table>
        {jobs.data && !jobs.data.length && <p class="muted">No jobs.</p>}
      </section>
    </div>
  );
}
