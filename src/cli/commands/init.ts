import type { Command } from 'commander';
import { prompts } from '../prompts.js';
import { mintLocalSession } from '../../engine/auth/localSession.js';
import { configFromEnv, mapSizeFromEnv } from '../../engine/config.js';
import { parseTtl } from '../../engine/auth/sessions.js';
import { Invalid } from '../../engine/errors.js';
import { DEFAULT_SESSION_TTL } from '../../engine/sessionTtl.js';
import { dataDirOf, type GlobalOptions } from '../connect.js';
import { emit, outputFormat } from '../output.js';

const DEFAULT_TENANT_NAME = 'default';
const DEFAULT_EMAIL = 'admin@localhost';

function ttlSeconds(ttl: string | undefined): number {
  if (!ttl) return DEFAULT_SESSION_TTL;
  const seconds = parseTtl(ttl);
  if (seconds === null) throw new Invalid(`invalid --ttl '${ttl}': use e.g. 30m, 12h, 7d`);
  return seconds;
}

export function initCommand(program: Command): void {
  program
    .command('init')
    .description('create the data dir, the first tenant and its admin; print a console token (shown once)')
    .option('--tenant-name <name>', 'name of the first tenant')
    .option('--email <email>', "the admin's e-mail")
    .option('--ttl <duration>', 'lifetime of the printed token', '24h')
    .addHelpText('after', '\nExample:\n  svc init --tenant-name acme --email ops@acme.test --yes')
    .action(async (opts: { tenantName?: string; email?: string; ttl?: string }, cmd: Command) => {
      const g = cmd.optsWithGlobals<GlobalOptions>();
      const ask = process.stdin.isTTY && process.stdout.isTTY && !g.yes;
      const tenantName = opts.tenantName ?? (ask ? await (await prompts()).input({ message: 'Tenant name', default: DEFAULT_TENANT_NAME }) : DEFAULT_TENANT_NAME);
      const email = opts.email ?? (ask ? await (await prompts()).input({ message: 'Admin e-mail', default: DEFAULT_EMAIL }) : DEFAULT_EMAIL);
      const { Engine } = await import('../../engine/index.js');
      const engine = await Engine.open(dataDirOf(g), { config: configFromEnv() });
      try {
        await emit(outputFormat(g), await engine.init(tenantName, email, ttlSeconds(opts.ttl)));
      } finally {
        await engine.close();
      }
    });
}

export function tokenCommand(program: Command): void {
  program
    .command('token')
    .description('console sessions')
    .command('create')
    .description("mint a console session for a user of this data dir (needs read access to the data dir)")
    .requiredOption('--email <email>', "the user's e-mail")
    .option('--ttl <duration>', 'lifetime, e.g. 30m, 12h, 7d', '24h')
    .addHelpText('after', '\nExample:\n  export SVC_TOKEN=$(svc token create --email admin@localhost --output json | jq -r .token)')
    .action(async (opts: { email: string; ttl?: string }, cmd: Command) => {
      const g = cmd.optsWithGlobals<GlobalOptions>();
      await emit(outputFormat(g), await mintLocalSession(dataDirOf(g), { email: opts.email, tenant: g.tenant }, ttlSeconds(opts.ttl), { mapSize: mapSizeFromEnv() }));
    });
}
