/**
 * The `rel="next"` target of a Link header (RFC 8288), resolved against the page's URL.
 * Parameters are read loosely (quoted or not, any case), and `rel` may list several relations.
 */
export function nextFromLinkHeader(header: string | string[] | undefined, base: string): string | undefined {
  if (header === undefined) return undefined;
  const text = Array.isArray(header) ? header.join(',') : header;
  for (const m of text.matchAll(/<([^>]*)>([^<]*)/g)) {
    const rel = /;\s*rel\s*=\s*(?:"([^"]*)"|([^;,\s]+))/i.exec(m[2]);
    const rels = (rel?.[1] ?? rel?.[2] ?? '').toLowerCase().split(/\s+/);
    if (rels.includes('next')) return resolveUrl(m[1], base);
  }
  return undefined;
}

/** A URL a server named, resolved against the page it came in; undefined when it is no http(s) URL. */
export function resolveUrl(ref: string, base: string): string | undefined {
  try {
    const url = new URL(ref, base);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}
