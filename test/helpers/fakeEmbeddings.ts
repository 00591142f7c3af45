import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export const FAKE_DIMS = 64;

/** A deterministic vector: each word adds a fixed pseudo-random direction, so shared words mean nearby vectors. */
export function fakeVector(text: string): number[] {
  const v = new Array(FAKE_DIMS).fill(0);
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    const h = createHash('sha256').update(word).digest();
    for (let i = 0; i < FAKE_DIMS; i++) v[i] += (h[i % 32] - 127.5) / 127.5 * (i < 32 ? 1 : -1);
  }
  return v;
}

export type FakeMode = 'ok' | 'error500' | 'rate429' | 'hang' | 'reset' | 'bad400';

/**
 * An OpenAI-compatible `/v1/embeddings` on loopback for tests: real HTTP, vectors from the words
 * of each input, and a switch that makes it fail the ways providers fail.
 */
export async function fakeEmbeddings() {
  const state = { mode: 'ok' as FakeMode, requests: 0, inputs: 0, lastModel: '' };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      state.requests++;
      if (req.url !== '/v1/embeddings' || req.method !== 'POST') return void res.writeHead(404).end('{}');
      switch (state.mode) {
        case 'error500':
          return void res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"boom"}');
        case 'rate429':
          return void res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '0' }).end('{"error":"slow down"}');
        case 'bad400':
          return void res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"bad input"}');
        case 'hang':
          return; // never answers: the client's timeout must fire
        case 'reset':
          return void req.socket.destroy();
      }
      const { input, model } = JSON.parse(body) as { input: string[]; model: string };
      state.inputs += input.length;
      state.lastModel = model;
      const data = input.map((text, index) => ({ object: 'embedding', index, embedding: fakeVector(text) }));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data, model }));
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    state,
    set: (mode: FakeMode) => (state.mode = mode),
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}
