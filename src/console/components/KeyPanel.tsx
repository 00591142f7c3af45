// One kind of API key: listed, minted (the plaintext shown once), revoked.
import { useState } from 'preact/hooks';
import { del, enc, post } from '../api';
import { fmtTime } from '../format';
import { useAsync } from '../useAsync';
import { Dialog } from './Dialog';
import { ErrorBox } from './ErrorBox';
import { Table } from './Table';

export interface KeyLike {
  id: number;
  name: string;
  role?: string;
  prefix?: string;
  created_at: string;
  last_used_at?: string | null;
  revoked_at?: string | null;
  expires_at?: string | null;
  token?: string | null;
}

interface Props {
  title: string;
  path: string; // /v1/admin/api-keys or /v1/admin/platform-keys
  load: () => Promise<KeyLike[]>;
  withRole: boolean;
  admin: boolean;
  /** prefix of the data-testid hooks: `key` for tenant keys */
  testPrefix: string;
}

export function KeyPanel({ title, path, load, withRole, admin, testPrefix }: Props) {
  const keys = useAsync(load);
  const [name, setName] = useState('');
  const [role, setRole] = useState('Member');
  const [minted, setMinted] = useState<KeyLike | null>(null);
  const [copied, setCopied] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const id = title.toLowerCase().replace(/\W+/g, '-');

  const mint = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      const k = await post<KeyLike>(path, withRole ? { name: name.trim(), role } : { name: name.trim() });
      setMinted(k);
      setCopied(false);
      setName('');
      await keys.reload();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  const revoke = async (k: KeyLike) => {
    if (!confirm(`Revoke the key “${k.name}”? Anything using it stops working at once.`)) return;
    setError(null);
    try {
      await del(`${path}/${enc(String(k.id))}`);
      await keys.reload();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(minted?.token ?? '');
      setCopied(true);
    } catch {
      setError('The clipboard is not available: select the key and copy it.');
    }
  };
  const live = (keys.data ?? []).filter((k) => !k.revoked_at);

  return (
    <section class="card" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {admin && (
        <form class="row" onSubmit={mint}>
          <label class="grow">
            <span>Name of the new key</span>
            <input data-testid={`${testPrefix}-name`} value={name} required maxLength={255} onInput={(e) => setName(e.currentTarget.value)} />
          </label>
          {withRole && (
            <label>
              <span>Role</span>
              <select value={role} onChange={(e) => setRole(e.currentTarget.value)}>
                <option>Member</option>
                <option>Admin</option>
              </select>
            </label>
          )}
          <button type="submit" class="primary" data-testid={`${testPrefix}-mint`} disabled={!name.trim()}>
            Mint key
          </button>
        </form>
      )}
      <ErrorBox error={error ?? keys.error} />
      <Table caption={title} head={['Name', ...(withRole ? ['Role', 'Prefix'] : []), 'Created', 'Last used', ...(admin ? [''] : [])]}>
        {live.map((k) => (
          <tr key={k.id} data-testid={`${testPrefix}-row`}>
            <td>{k.name}</td>
            {withRole && <td>{k.role}</td>}
            {withRole && (
              <td>
                <code>{k.prefix}</code>
              </td>
            )}
            <td>{fmtTime(k.created_at)}</td>
            <td>{fmtTime(k.last_used_at)}</td>
            {admin && (
              <td>
                <button type="button" class="danger" data-testid={`${testPrefix}-revoke`} onClick={() => revoke(k)} aria-label={`Revoke ${k.name}`}>
                  Revoke
                </button>
              </td>
            )}
          </tr>
        ))}
      </Table>
      {!keys.loading && !live.length && <p class="muted">No keys.</p>}
      {minted && (
        <Dialog title={`Key “${minted.name}” minted`} onClose={() => setMinted(null)}>
          <p>This is the only time the key is shown. Copy it now.</p>
          <div class="row">
            <code class="plaintext" data-testid={`${testPrefix}-plaintext`}>
              {minted.token}
            </code>
            <button type="button" onClick={copy}>
              {copied ? 'Copied' : 'Copy'}
            </button>
          </div>
        </Dialog>
      )}
    </section>
  );
}
