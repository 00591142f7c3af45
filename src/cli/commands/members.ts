import { Option, type Command } from 'commander';
import { withService } from '../context.js';
import { modeOf } from '../target.js';

export function membersCommand(program: Command): void {
  const members = program.command('members').description('users of the tenant and their roles');
  members
    .command('add <email>')
    .description('add a user to the tenant (or change their role)')
    .addOption(new Option('--role <role>', 'role in the tenant').choices(['admin', 'member']).default('member'))
    .addHelpText('after', '\nExample:\n  svc members add dev@example.test --role member && svc token create --email dev@example.test')
    .action((email: string, o: { role: 'admin' | 'member' }, cmd: Command) => withService(cmd, async ({ service, emit }) => emit(await service.addMember({ email, role: o.role }))));
  members
    .command('list')
    .description('members of the tenant')
    .addHelpText('after', '\nExample:\n  svc members list')
    .action((_o, cmd: Command) =>
      withService(cmd, async ({ service, emit }) => {
        const list = await service.listMembers();
        await emit({ members: list, next_cursor: null }, { rows: list, columns: ['user_id', 'email', 'role', 'created_at'] });
      }),
    );
}

export function whoamiCommand(program: Command): void {
  program
    .command('whoami')
    .description('who the current credentials are, and the tenants they reach (GET /v1/me)')
    .addHelpText('after', '\nExample:\n  svc whoami --url http://127.0.0.1:7360 --token "$TOKEN"')
    // a table says too whether svc acts on a data dir here or on a server; JSON stays GET /v1/me's (`svc status` has the mode)
    .action((_o, cmd: Command) =>
      withService(cmd, async ({ service, emit, globals, format }) => {
        const me = await service.me();
        await emit(format === 'table' ? { mode: modeOf(globals), ...me } : me);
      }),
    );
}
