import { Option, type Command } from 'commander';
import { withService } from '../context.js';
import type { KeyKind } from '../service.js';

const kindOption = () => new Option('--kind <kind>', 'tenant key (svctk.v1.…) or platform key (svcpk.v1.…)').choices(['tenant', 'platform']).default('tenant');
const COLUMNS = ['id', 'name', 'role', 'prefix', 'created_at', 'expires_at', 'last_used_at', 'revoked_at'];

export function keysCommand(program: Command): void {
  const keys = program.command('keys').description('API keys of the tenant: tenant keys and platform keys');
  keys
    .command('create')
    .description('mint a key; its token is printed once and never again')
    .addOption(kindOption())
    .requiredOption('--name <name>', 'what the key is for')
    .addOption(new Option('--role <role>', 'role of a tenant key').choices(['admin', 'member']).default('member'))
    .option('--expires-at <time>', 'ISO 8601 expiry of a tenant key')
    .addHelpText('after', '\nExample:\n  svc keys create --kind tenant --name ci-reader --role member --output json | jq -r .token')
    .action((o: { kind: KeyKind; name: string; role: 'admin' | 'member'; expiresAt?: string }, cmd: Command) =>
      withService(cmd, async ({ service, emit }) => emit(await service.createKey(o.kind, { name: o.name, role: o.role, expires_at: o.expiresAt }))),
    );
  keys
    .command('list')
    .description('keys of the tenant (never their tokens)')
    .addOption(kindOption())
    .addHelpText('after', '\nExample:\n  svc keys list --kind platform')
    .action((o: { kind: KeyKind }, cmd: Command) =>
      withService(cmd, async ({ service, emit }) => {
        const list = await service.listKeys(o.kind);
        await emit({ [o.kind === 'tenant' ? 'api_keys' : 'platform_keys']: list, next_cursor: null }, { rows: list, columns: COLUMNS });
      }),
    );
  keys
    .command('revoke <id>')
    .description('revoke a key: it stops working at once')
    .addOption(kindOption())
    .addHelpText('after', '\nExample:\n  svc keys revoke 3 --kind tenant')
    .action((id: string, o: { kind: KeyKind }, cmd: Command) => withService(cmd, async ({ service, emit }) => emit(await service.revokeKey(o.kind, Number(id)))));
}
