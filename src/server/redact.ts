/** Query parameters whose values may be credentials: signed URLs' `sig`, tokens, keys, secrets. */
const SECRET_NAME = /token|sig|signature|secret|key/i;

/** A parameter name as the query parser will see it; a malformed escape stays as it was sent. */
function decodeName(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw;
  }
}

/**
 * A request URL fit for a log line: the value of every query parameter whose *decoded* name looks
 * like a credential is replaced, so that `%73ig=` is caught like `sig=`.
 */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const params = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = eq < 0 ? pair : pair.slice(0, eq);
      return SECRET_NAME.test(decodeName(name)) ? `${name}=REDACTED` : pair;
    });
  return `${url.slice(0, q + 1)}${params.join('&')}`;
}
