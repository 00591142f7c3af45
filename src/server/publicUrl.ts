import type { AddressInfo } from 'node:net';
import type { FastifyRequest } from 'fastify';
import { Invalid } from '../engine/errors.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** SVC_PUBLIC_URL: the origin of the URLs this server hands out, when clients reach it through a proxy */
    publicUrl: string | null;
  }
}

/** SVC_PUBLIC_URL as an origin with an optional path prefix, without a trailing slash. */
export function parsePublicUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Invalid(`SVC_PUBLIC_URL is not a URL: '${value}'`);
  }
  if (!/^https?:$/.test(url.protocol) || url.search || url.hash || url.username || url.password) {
    throw new Invalid(`SVC_PUBLIC_URL must be an http(s) URL without query, fragment or credentials: '${value}'`);
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

const hostPart = (address: string) => {
  const v4 = address.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '');
  return v4.includes(':') ? `[${v4}]` : v4;
};

/**
 * Where URLs this server signs (upload parts) point: the configured public URL, else the address
 * of this server that the client's connection reached — never the `Host` header, which the client
 * chooses and which would let it have the server sign URLs to another host.
 */
export function serverOrigin(req: FastifyRequest): string {
  if (req.server.publicUrl) return req.server.publicUrl;
  const { localAddress, localPort } = req.socket;
  if (localAddress && localPort) return `http://${hostPart(localAddress)}:${localPort}`;
  const bound = req.server.server.address() as AddressInfo | null; // an injected request has no socket of its own
  return bound ? `http://${hostPart(bound.address)}:${bound.port}` : 'http://localhost';
}
