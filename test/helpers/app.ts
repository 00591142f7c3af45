import type { FastifyInstance } from 'fastify';
import { Engine } from '../../src/engine/index.js';
import { buildApp, type AppOptions } from '../../src/server/app.js';
import { init, tempDir } from './cli.js';

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
 * `svc init` on a fresh data dir, then the /v1 app over it in this process, listening on a free
 * loopback port: for tests that need to pass options (a log sink, a rate limit, a public URL)
 * or to reach the engine.
 */
export async function startApp(opts: Omit<AppOptions, 'log'> = {}): Promise<TestApp> {
  const dir = tempDir('svc-app-');
  const admin = init(dir.path);
  const engine = await Engine.open(dir.path);
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
