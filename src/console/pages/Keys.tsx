// Keys: tenant keys, platform keys and members.
import type { ApiKey, PlatformKey } from '../../api/identity';
import { get } from '../api';
import { KeyPanel } from '../components/KeyPanel';
import { Members } from '../components/Members';
import { isAdmin } from '../session';

export function KeysPage() {
  const admin = isAdmin();
  return (
    <div>
      <h1>Keys and members</h1>
      <KeyPanel title="Tenant keys" path="/v1/admin/api-keys" testPrefix="key" withRole admin={admin} load={() => get<{ api_keys: ApiKey[] }>('/v1/admin/api-keys').then((r) => r.api_keys)} />
      <KeyPanel
        title="Platform keys"
        path="/v1/admin/platform-keys"
        testPrefix="platform-key"
        withRole={false}
        admin={admin}
        load={() => get<{ platform_keys: PlatformKey[] }>('/v1/admin/platform-keys').then((r) => r.platform_keys)}
      />
      <Members admin={admin} />
    </div>
  );
}
