import type { Command } from 'commander';
import { confirmDestructive, withService } from '../context.js';

export function tenantsCommand(program: Command): void {
  const tenants = program.command('tenants').description('tenants a platform provisions (use a platform key in remote mode)');
  tenants
    .command('create <name>')
    .description('provision a tenant')
    .addHelpText('after', '\nExample:\n  SVC_TOKEN=svcpk.v1.… svc --url http://127.0.0.1:7360 tenants create "Customer 42"')
    .action((name: string, _o, cmd: Command) => withService(cmd, async ({ service, emit }) => emit(await service.createTenant({ name }))));
  tenants
    .command('list')
    .description('tenants this platform provisioned')
    .addHelpText('after', '\nExample:\n  svc tenants list --output json')
    .action((_o, cmd: Command) =>
      withService(cmd, async ({ service, emit }) => {
        const list = await service.listTenants();
        await emit({ tenants: list, next_cursor: null }, { rows: list, columns: ['tenant_id', 'name', 'created_at'] });
      }),
    );
  tenants
    .command('delete <tenant_id>')
    .description('delete a provisioned tenant and all its data; prints the data-deletion job')
    .addHelpText('after', '\nExample:\n  svc tenants delete ten_01jd… --yes')
    .action((id: string, _o, cmd: Command) =>
      withService(cmd, async ({ service, emit, globals }) => {
        await confirmDestructive(globals, `Delete tenant '${id}' and everything it holds?`);
        await emit(await service.deleteTenant(id));
      }),
    );
}
