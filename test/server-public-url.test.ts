/**
 * Signed part URLs point at the configured public URL (SVC_PUBLIC_URL) or at the server's own
 * address the client reached — never at the `Host` header, which would let a client have the
 * server sign URLs to a host of the client's choosing.
 */
import { describe, expect, it } from 'vitest';
import { parsePublicUrl } from '../src/server/publicUrl.js';
import { useApp } from './helpers/app.js';
import { init, serve, tempDir } from './helpers/cli.js';
import { client, expectStatus } from './helpers/http.js';

const EVIL = { host: 'evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' };

/** A dataset, an upload session on its hosted source, and the URL of part 1 as the server signed it. */
async function partUrl(http: ReturnType<typeof client>, dataset: string): Promise<string> {
  expectStatus(await http.post('/v1/admin/datasets', { dataset_id: dataset }), 201);
  const session = expectStatus(await http.post(`/v1/ingest/sources/${dataset}/uploads`, { filename: 'a.ndjson' }), 201);
  const parts = await http.post(`/v1/ingest/sources/${dataset}/uploads/parts`, { upload_session_id: session.upload_session_id, part_numbers: [1] }, { headers: EVIL });
  return expectStatus(parts, 200).parts[0].upload_url;
}

describe('part URLs of an app with no public URL', () => {
  const { t, http } = useApp();

  it('use the address the client reached, whatever Host says, and work there', async () => {
    const url = await partUrl(http, 'bound');
    expect(url.startsWith(`${t.url}/v1/uploads/`), url).toBe(true);
    const put = await http.call('PUT', url, { body: '{"a":1}\n', token: null, tenant: null, headers: EVIL });
    expectStatus(put, 200);
  });
});

describe('part URLs of an app with a public URL', () => {
  const { t, http } = useApp({ publicUrl: parsePublicUrl('https://svc.example.com/base/') });

  it('use it, whatever Host says', async () => {
    expect(await partUrl(http, 'public')).toMatch(/^https:\/\/svc\.example\.com\/base\/v1\/uploads\/[^/]+\/parts\/1\?/);
  });
});

describe('SVC_PUBLIC_URL', () => {
  it('is an http(s) origin with an optional path, kept without its trailing slash', () => {
    expect(parsePublicUrl('https://svc.example.com')).toBe('https://svc.example.com');
    expect(parsePublicUrl('http://10.0.0.5:8080/svc//')).toBe('http://10.0.0.5:8080/svc');
    for (const bad of ['svc.example.com', 'ftp://svc.example.com', 'https://svc.example.com/?a=1', 'https://u:p@svc.example.com', 'https://svc.example.com/#x']) {
      expect(() => parsePublicUrl(bad), bad).toThrow(/SVC_PUBLIC_URL/);
    }
  });

  it('sets the origin of the part URLs `svc serve` hands out', async () => {
    const dir = tempDir('svc-public-url-');
    const admin = init(dir.path);
    process.env.SVC_PUBLIC_URL = 'https://svc.example.com';
    const server = await serve(dir.path).finally(() => delete process.env.SVC_PUBLIC_URL);
    try {
      const http = client(server.url, { token: admin.token, tenant: admin.tenant_id });
      expect(await partUrl(http, 'served')).toMatch(/^https:\/\/svc\.example\.com\/v1\/uploads\//);
    } finally {
      await server.stop();
      dir.remove();
    }
  });
});
