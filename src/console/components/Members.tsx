// The tenant's members, and adding one (admin).
import { useState } from 'preact/hooks';
import type { Member } from '../../api/identity';
import { get, post } from '../api';
import { fmtTime } from '../format';
import { useAsync } from '../useAsync';
import { ErrorBox } from './ErrorBox';
import { Table } from './Table';

export function Members({ admin }: { admin: boolean }) {
  const members = useAsync(() => get<{ members: Member[] }>('/v1/admin/members').then((r) => r.members));
  const [email, setEmail] = useState('');
  const [role, setRole] = useState('Member');
  const [error, setError] = useState<string | null>(null);
  const add = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      await post('/v1/admin/members', { email: email.trim(), role });
      setEmail('');
      await members.reload();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <section class="card" aria-labelledby="members-h">
      <h2 id="members-h">Members</h2>
      {admin && (
        <form class="row" onSubmit={add}>
          <label class="grow">
            <span>E-mail</span>
            <input type="email" value={email} required onInput={(e) => setEmail(e.currentTarget.value)} />
          </label>
          <label>
            <span>Role</span>
            <select value={role} onChange={(e) => setRole(e.currentTarget.value)}>
              <option>Member</option>
              <option>Admin</option>
            </select>
          </label>
          <button type="submit" disabled={!email.trim()}>
            Add member
          </button>
        </form>
      )}
      <ErrorBox error={error ?? members.error} />
      <Table caption="Members" head={['E-mail', 'Role', 'Since']}>
        {(members.data ?? []).map((m) => (
          <tr key={m.user_id}>
            <td>{m.email}</td>
            <td>{m.role}</td>
            <td>{fmtTime(m.created_at)}</td>
          </tr>
        ))}
      </Table>
    </section>
  );
}
