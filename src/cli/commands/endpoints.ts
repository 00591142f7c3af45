import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { EndpointCreate } from '../../api/endpoints.js';
import { confirmDestructive, EXIT, Exit, withService } from '../context.js';
import { recordColumns, recordRow } from '../recordRows.js';

const COLUMNS = ['name', 'description', 'cache_ttl_s', 'created_at', 'updated_at'];

/** `k=v` flags as a record: a repeated name gives a list (what a `string[]` parameter takes; any other keeps the last). */
function keyValues(pairs: string[]): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new Exit(EXIT.usage, `--param takes NAME=VALUE, not '${pair}'`);
    const [k, v] = [pair.slice(0, at), pair.slice(at + 1)];
    const had = out[k];
    out[k] = had === undefined ? v : [...(Array.isArray(had) ? had : [had]), v];
  }
  return out;
}
const collect = (v: string, all: string[]) => [...all, v];

type CreateFlags = { fromFile?: string; sql?: string; description?: string; cacheTtl?: number };

/** The definition: a file's, with --sql, --description and --cache-ttl over it; the name is NAME. */
function definition(name: string, o: CreateFlags): EndpointCreate {
  let base: Partial<EndpointCreate> = {};
  if (o.fromFile) {
    try {
      base = JSON.parse(readFileSync(o.fromFile, 'utf8'));
    } catch (err) {
      throw new Exit(EXIT.usage, `--from-file ${o.fromFile}: ${(err as Error).message}`);
    }
  }
  const def = { ...base, name, ...(o.sql !== undefined ? { sql: o.sql } : {}), ...(o.description !== undefined ? { description: o.description } : {}), ...(o.cacheTtl !== undefined ? { cache_ttl_s: o.cacheTtl } : {}) };
  if (def.sql === undefined && def.search_request === undefined) throw new Exit(EXIT.usage, 'nothing to publish: give --sql or --from-file with sql or search_request');
  return def as EndpointCreate;
}

export function endpointsCommand(program: Command): void {
  const endpoints = program.command('endpoints').alias('endpoint').description('query endpoints: saved searches or SQL statements with typed parameters');
  endpoints
    .command('create <name>')
    .description('publish a query endpoint (admin)')
    .option('--from-file <file>', 'the definition as JSON: {description?, sql | search_request, params: [...], cache_ttl_s?}')
    .option('--sql <statement>', 'a read-only statement; its parameters are $name')
    .option('--description <text>', 'what it answers')
    .option('--cache-ttl <seconds>', 'keep answers this long', (v) => Number(v))
    .addHelpText('after', `\nExamples:\n  svc endpoints create by-level --from-file by-level.json\n  svc endpoints create levels --sql 'SELECT Level, count(*) AS n FROM hdfs GROUP BY Level'`)
    .action((name: string, o: CreateFlags, cmd: Command) => {
      const def = definition(name, o);
      return withService(cmd, async ({ service, emit }) => emit(await service.createEndpoint(def)));
    });
  endpoints
    .command('list')
    .description('query endpoints of the tenant')
    .action((_o, cmd: Command) =>
      withService(cmd, async ({ service, emit }) => {
        const list = await service.listEndpoints();
        await emit(list, { rows: list.query_endpoints, columns: COLUMNS });
      }),
    );
  endpoints
    .command('get <name>')
    .description('show a query endpoint')
    .action((name: string, _o, cmd: Command) => withService(cmd, async ({ service, emit }) => emit(await service.getEndpoint(name))));
  endpoints
    .command('delete <name>')
    .description('delete a query endpoint (admin)')
    .action((name: string, _o, cmd: Command) =>
      withService(cmd, async ({ service, emit, globals }) => {
        await confirmDestructive(globals, `Delete query endpoint '${name}'?`);
        await emit(await service.deleteEndpoint(name));
      }),
    );
  endpoints
    .command('run <name>')
    .description('run a query endpoint')
    .option('--param <name=value>', 'a parameter (repeat for more)', collect, [] as string[])
    .addHelpText('after', '\nExample:\n  svc endpoints run by-level --param level=WARN --output json')
    .action((name: string, o: { param: string[] }, cmd: Command) => {
      const params = keyValues(o.param);
      return withService(cmd, async ({ service, emit, format }) => {
        const answer = await service.runEndpoint(name, params);
        if ('columns' in answer) await emit(answer, { rows: answer.records.map((r) => r.metadata), columns: answer.columns.map((c: { name: string }) => c.name) });
        else await emit(answer, { rows: answer.records.map((r) => recordRow(r, format)), columns: recordColumns(answer, format) });
      });
    });
}
