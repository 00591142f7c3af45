import { spawn } from 'node:child_process';
import type { Command } from 'commander';
import type { ConsoleLink } from '../../api/console.js';
import { mintSignInCode } from '../../engine/auth/localSession.js';
import { SIGN_IN_TTL } from '../../engine/auth/consoleSessions.js';
import { mapSizeFromEnv } from '../../engine/config.js';
import { Unavailable } from '../../engine/errors.js';
import { liveServer } from '../../engine/serverInfo.js';
import { dataDirOf, type GlobalOptions } from '../connect.js';
import { emit, outputFormat } from '../output.js';

export function consoleCommand(program: Command): void {
  program
    .command('console')
    .description(`print a one-time sign-in link to the web console (valid ${SIGN_IN_TTL / 60} minutes), and open it on a desktop`)
    .option('--email <email>', "the user who signs in (default: the tenant's first admin)")
    .option('--url <url>', 'the server the link points at (default: the `svc serve` holding the data dir)')
    .option('--no-open', 'print the link only')
    .addHelpText('after', '\nExamples:\n  svc serve --port 7360 &  svc console\n  svc console --email dev@example.test --output json | jq -r .url')
    .action(async (opts: { email?: string; url?: string; open: boolean }, cmd: Command) => {
      const g = cmd.optsWithGlobals<GlobalOptions>();
      const dataDir = dataDirOf(g);
      const base = opts.url ?? liveServer(dataDir)?.url;
      if (!base) throw new Unavailable(`no server holds ${dataDir}: start \`svc serve\` first, or give --url`);
      const { code, user_id, expires_at } = await mintSignInCode(dataDir, { email: opts.email, tenant: g.tenant }, SIGN_IN_TTL, { mapSize: mapSizeFromEnv() });
      const link: ConsoleLink = { url: `${base.replace(/\/+$/, '')}/#/signin?code=${code}`, user_id, expires_at };
      const fmt = outputFormat(g);
      if (fmt === 'table') process.stdout.write(`Sign in to the console with this link (it works once, until ${expires_at}):\n${link.url}\n`);
      else await emit(fmt, link);
      if (opts.open && process.stdout.isTTY) openInBrowser(link.url);
    });
}

/** Opens the link with the desktop's browser, when there is a desktop; any failure leaves the printed link to be used by hand. */
function openInBrowser(url: string): void {
  const opener = process.platform === 'darwin' ? 'open' : process.env.DISPLAY || process.env.WAYLAND_DISPLAY ? 'xdg-open' : null;
  if (!opener) return;
  const child = spawn(opener, [url], { detached: true, stdio: 'ignore' });
  child.on('error', () => {});
  child.unref();
}
