import type { Command } from 'commander';
import { Engine } from '../../engine/index.js';
import { writeServerInfo } from '../../engine/serverInfo.js';
import { dataDirOf, type GlobalOptions } from '../connect.js';

export function serveCommand(program: Command): void {
  program
    .command('serve')
    .description('serve the /v1 API on this data dir (one JSON log line per request on stdout)')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port (0 picks a free one)', '7360')
    .addHelpText('after', '\nExample:\n  svc serve --port 7360')
    .action(async (opts: { host: string; port: string }, cmd: Command) => {
      const dataDir = dataDirOf(cmd.optsWithGlobals<GlobalOptions>());
      const engine = await Engine.open(dataDir, { lockWaitMs: 0, background: true });
      const { buildApp } = await import('../../server/app.js'); // the HTTP stack loads only for serve
      const app = await buildApp(engine, { log: (line) => process.stdout.write(line + '\n') });
      const address = await app.listen({ host: opts.host, port: Number(opts.port) });
      const removeInfo = writeServerInfo(dataDir, address);
      process.stderr.write(`svc: serving ${dataDir} on ${address}\n`);
      let stopping = false;
      const stop = async () => {
        if (stopping) return;
        stopping = true;
        removeInfo();
        await app.close();
        await engine.close({ drain: false });
        process.exit(0);
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
    });
}
