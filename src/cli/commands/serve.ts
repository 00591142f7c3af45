import type { Command } from 'commander';
import { checkEmbedder, configFromEnv } from '../../engine/config.js';
import { logProblem } from '../../engine/log.js';
import { writeServerInfo } from '../../engine/serverInfo.js';
import { dataDirOf, type GlobalOptions } from '../connect.js';
import { handleProcessErrors } from '../processErrors.js';

const LOCK_WAIT_MS = 5000;

export function serveCommand(program: Command): void {
  program
    .command('serve')
    .description('serve the /v1 API on this data dir (one JSON log line per request on stdout)')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port (0 picks a free one)', '7360')
    .addHelpText('after', '\nExample:\n  svc serve --port 7360\n\nEnvironment:\n  SVC_PUBLIC_URL   origin of the upload URLs it hands out (default: the address a client reached)\n  SVC_RATE_LIMIT   requests per minute per credential (default 6000; 0 or off: none)')
    .action(async (opts: { host: string; port: string }, cmd: Command) => {
      const dataDir = dataDirOf(cmd.optsWithGlobals<GlobalOptions>());
      let stop = async (exitCode = 0): Promise<void> => process.exit(exitCode); // until there is something to close
      handleProcessErrors((code) => void stop(code));
      // the HTTP stack loads only for serve
      const [{ buildApp }, { parsePublicUrl }, { rateLimitFromEnv }] = await Promise.all([
        import('../../server/app.js'),
        import('../../server/publicUrl.js'),
        import('../../server/rateLimit.js'),
      ]);
      const publicUrl = process.env.SVC_PUBLIC_URL ? parsePublicUrl(process.env.SVC_PUBLIC_URL) : undefined;
      const rateLimit = rateLimitFromEnv(process.env.SVC_RATE_LIMIT);
      const config = configFromEnv();
      checkEmbedder(config);
      // a few seconds for a holder on its way out (a restart right after a kill); a live server is not waited for long
      const { Engine } = await import('../../engine/index.js');
      const engine = await Engine.open(dataDir, { lockWaitMs: LOCK_WAIT_MS, background: true, config });
      const app = await buildApp(engine, { log: (line) => process.stdout.write(line + '\n'), publicUrl, rateLimit });
      const address = await app.listen({ host: opts.host, port: Number(opts.port) });
      const removeInfo = writeServerInfo(dataDir, address);
      process.stderr.write(`svc: serving ${dataDir} on ${address}\n`);
      let stopping = false;
      stop = async (exitCode = 0) => {
        if (stopping) return;
        stopping = true;
        removeInfo();
        try {
          await app.close();
          await engine.close({ drain: false });
        } catch (err) {
          logProblem('close_failed', err); // the data dir is released all the same; the next open catches up
        }
        process.exit(exitCode);
      };
      process.on('SIGINT', () => stop());
      process.on('SIGTERM', () => stop());
    });
}
