import type { Command } from 'commander';

type Adder = (program: Command) => void;

/**
 * Each top-level command (and its aliases) with the module that adds it: `svc` loads only the
 * module of the command typed, so a command starts without loading all the others (and the
 * schemas and engine parts they import). Help, completion and an unknown name load them all.
 */
export const COMMANDS: [names: string[], load: () => Promise<Adder[]>][] = [
  [['init'], async () => [(await import('./commands/init.js')).initCommand]],
  [['token'], async () => [(await import('./commands/init.js')).tokenCommand]],
  [['serve'], async () => [(await import('./commands/serve.js')).serveCommand]],
  [['datasets'], async () => [(await import('./commands/datasets.js')).datasetsCommand]],
  [['sources'], async () => [(await import('./commands/sources.js')).sourcesCommand]],
  [['delete'], async () => [(await import('./commands/delete.js')).deleteCommand]],
  [['ingest'], async () => [(await import('./commands/ingest.js')).ingestCommand]],
  [['search'], async () => [(await import('./commands/search.js')).searchCommand]],
  [['sql'], async () => [(await import('./commands/sql.js')).sqlCommand]],
  [['view', 'views'], async () => [(await import('./commands/views.js')).viewsCommand]],
  [['detections', 'detection'], async () => [(await import('./commands/detections.js')).detectionsCommand]],
  [['endpoints', 'endpoint'], async () => [(await import('./commands/endpoints.js')).endpointsCommand]],
  [['connectors', 'connector'], async () => [(await import('./commands/connectors.js')).connectorsCommand]],
  [['export', 'exports'], async () => [(await import('./commands/exports.js')).exportsCommand]],
  [['fields'], async () => [(await import('./commands/fields.js')).fieldsCommand]],
  [['reindex'], async () => [(await import('./commands/reindex.js')).reindexCommand]],
  [['runs'], async () => [(await import('./commands/runs.js')).runsCommand]],
  [['jobs'], async () => [(await import('./commands/jobs.js')).jobsCommand]],
  [['keys'], async () => [(await import('./commands/keys.js')).keysCommand]],
  [['tenants'], async () => [(await import('./commands/tenants.js')).tenantsCommand]],
  [['members'], async () => [(await import('./commands/members.js')).membersCommand]],
  [['whoami'], async () => [(await import('./commands/members.js')).whoamiCommand]],
  [['login'], async () => [(await import('./commands/login.js')).loginCommand]],
  [['logout'], async () => [(await import('./commands/login.js')).logoutCommand]],
  [['console'], async () => [(await import('./commands/console.js')).consoleCommand]],
  [['status'], async () => [(await import('./commands/status.js')).statusCommand]],
  [['completion'], async () => [(await import('./commands/completion.js')).completionCommand]],
];

/** Commands that need every other one beside them (completion describes them all). */
const NEEDS_ALL = new Set(['completion']);

/** Global options that take a value: the word after one is not a command name. */
const VALUED = new Set(['--data-dir', '--url', '--token', '--tenant', '--profile', '--output', '-o']);

/** The command a command line names (its first word that is no option or option value), if any. */
export function commandNamed(args: string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--') return undefined;
    if (!arg.startsWith('-')) return arg;
    if (VALUED.has(arg)) i++;
  }
  return undefined;
}

/** The adders for a command line: its own command's, or every one when it names none that is known (help, an unknown name). */
export async function addersFor(args: string[]): Promise<Adder[]> {
  const name = commandNamed(args);
  if (name === undefined && (args.includes('--version') || args.includes('-V'))) return [];
  const own = COMMANDS.find(([names]) => name !== undefined && names.includes(name));
  const wanted = own && !NEEDS_ALL.has(name!) && !args.includes('--help') && !args.includes('-h') ? [own] : COMMANDS;
  return (await Promise.all(wanted.map(([, load]) => load()))).flat();
}
