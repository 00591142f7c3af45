/**
 * The access log never holds a credential from a query string: names are matched after
 * percent-decoding, as the query parser decodes them (`%73ig=` is `sig=`), and a malformed escape
 * neither throws nor hides a request from the log.
 */
import { describe, expect, it } from 'vitest';
import { redactUrl } from '../src/server/redact.js';
import { useApp } from './helpers/app.js';
import { client, expectStatus } from './helpers/http.js';

describe('redactUrl', () => {
  it('drops the value of any parameter whose decoded name holds token, sig, signature, secret or key', () => {
    expect(redactUrl('/v1/uploads/u/parts/1?tenant=t&expires=9&%73ig=abc')).toBe('/v1/uploads/u/parts/1?tenant=t&expires=9&%73ig=REDACTED');
    expect(redactUrl('/x?api%5Fkey=k1&My%54oken=k2&SIGNATURE=k3&client+secret=k4&keep=v')).toBe(
      '/x?api%5Fkey=REDACTED&My%54oken=REDACTED&SIGNATURE=REDACTED&client+secret=REDACTED&keep=v',
    );
    expect(redactUrl('/x?token')).toBe('/x?token=REDACTED');
    expect(redactUrl('/x?a=1&b=%73ig')).toBe('/x?a=1&b=%73ig'); // a value is not a name
    expect(redactUrl('/v1/datasets')).toBe('/v1/datasets');
  });

  it('keeps going past a malformed escape', () => {
    expect(redactUrl('/x?%zz=1&%E0%A4%A=2&si%67=s')).toBe('/x?%zz=1&%E0%A4%A=2&si%67=REDACTED');
  });
});

describe('the access log', () => {
  const { t, http } = useApp();

  it('redacts ?%73ig=secret and survives a malformed escape', async () => {
    expectStatus(await http.get('/v1/datasets?%73ig=s3cr3t-value&%zz=1&ok=yes'), 200);
    const line = t.lines().find((l) => l.route === '/v1/datasets' && l.url.includes('%73ig'));
    expect(line).toMatchObject({ url: '/v1/datasets?%73ig=REDACTED&%zz=1&ok=yes', status: 200 });
    expect(JSON.stringify(t.lines())).not.toContain('s3cr3t-value');
  });
});
