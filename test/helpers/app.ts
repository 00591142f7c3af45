import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll } from 'vitest';
import { Engine } from '../../src/engine/index.js';
import { buildApp, type AppOptions } from '../../src/server/app.js';
import { tempDir } from './cli.js';
import { client } from './http.js';

export interface TestApp {
  url: string;
  engine: Engine;
  app: FastifyInstance;
  admin: { tenant_id: string; user_id: string; token: string };
  /** the lines the app wrote to its log sink so far, parsed */
  lines: () => Record<string, any>[];
  close: () => Promise<void>;
}

/**
 * A fresh data dir initialized as `svc init` does it (first tenant `default`, admin@localhost), then the /v1 app over it in this process, listening on a free
 * loopback port: for tests that need to pass options (a log sink, a rate limit, a public URL)
 * or to reach the engine.
 */
export async function startApp(opts: Omit<AppOptions, 'log'> = {}): Promise<TestApp> {
  const dir = tempDir('svc-app-');
  // what `svc init` does, in this process: a spawned CLI would cost a second for nothing the tests look at
  const engine = await Engine.open(dir.path);
  const admin = await engine.init('default', 'admin@localhost', 24 * 3600);
  const written: string[] = [];
  const app = await buildApp(engine, { ...opts, log: (line) => written.push(line) });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    url,
    engine,
    app,
    admin,
    lines: () => written.map((l) => JSON.parse(l)),
    close: async () => {
      await app.close();
      await engine.close();
      dir.remove();
    },
  };
}

/**
 * One app for the enclosing describe block (or file), started before its tests and closed after
 * them: `t` stands for it once started, and `http` acts as its first admin.
 */
export function useApp(opts: Omit<AppOptions, 'log'> = {}): { t: TestApp; http: ReturnType<typeof client> } {
  let current: TestApp | undefined;
  beforeAll(async () => {
    current = await startApp(opts);
  });
  afterAll(async () => current?.close());
  const t = new Proxy({} as TestApp, { get: (_, key) => current![key as keyof TestApp] });
  return { t, http: client(() => t.url, () => ({ token: t.admin.token, tenant: t.admin.tenant_id })) };
}
