import { prompts } from '../prompts.js';
import type { Command } from 'commander';
import type { Me } from '../../api/identity.js';
import { Forbidden, Unauthenticated } from '../../engine/errors.js';
import { given, type GlobalOptions } from '../connect.js';
import { EXIT, Exit, exitCodeOf } from '../context.js';
import { deleteToken, saveToken } from '../credentials.js';
import { emit, outputFormat } from '../output.js';
import { normalizeUrl, removeProfile, resolveProfile, setProfile } from '../profiles.js';
import { remoteService } from '../remoteService.js';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').trim();
}

/** --token-stdin, else --token/SVC_TOKEN, else a hidden prompt on a terminal, else stdin. */
async function readToken(tokenStdin: boolean | undefined, g: GlobalOptions): Promise<string> {
  if (tokenStdin) return readStdin();
  if (given(g.token)) return g.token!.trim();
  if (process.stdin.isTTY) return (await (await prompts()).password({ message: 'Token', mask: true })).trim();
  return readStdin();
}

async function whoAmI(url: string, token: string): Promise<Me> {
  const service = remoteService({ url, token });
  try {
    return await service.me();
  } catch (err) {
    // a clearer message, the exit code the error table gives any such failure
    if (err instanceof Unauthenticated || err instanceof Forbidden) throw new Exit(exitCodeOf(err), `${url} refused this token: ${(err as Error).message}`);
    throw new Exit(exitCodeOf(err), `cannot log in to ${url}: ${(err as Error).message.split('\n')[0]}`);
  } finally {
    await service.close();
  }
}

function serverUrl(g: GlobalOptions): string {
  const url = given(g.url);
  if (!url) throw new Exit(EXIT.usage, 'svc login needs --url URL (or SVC_URL)');
  if (!/^https?:\/\//i.test(url) || !URL.canParse(url)) throw new Exit(EXIT.usage, `not an http(s) URL: ${url}`);
  return normalizeUrl(url);
}

export function loginCommand(program: Command): void {
  program
    .command('login')
    .description('check a token against a server and store it (OS keyring, else a 0600 file) for later commands')
    .option('--token-stdin', 'read the token from stdin')
    .configureHelp({ showGlobalOptions: true })
    .addHelpText('after', '\nExample:\n  svc token create --email admin@localhost --output json | jq -r .token \\\n    | svc login --url http://127.0.0.1:7360 --token-stdin')
    .action(async (o: { tokenStdin?: boolean }, cmd: Command) => {
      const g = cmd.optsWithGlobals<GlobalOptions>();
      const url = serverUrl(g);
      const token = await readToken(o.tokenStdin, g);
      if (!token) throw new Exit(EXIT.usage, 'no token given: pipe one with --token-stdin, pass --token or type it at the prompt');
      const me = await whoAmI(url, token);
      const tenants = me.tenants.map((t) => t.tenant_id);
      const tenant = given(g.tenant) ?? (tenants.length === 1 ? tenants[0] : undefined);
      if (given(g.tenant) && !me.is_staff && !tenants.includes(g.tenant!)) throw new Forbidden(`${me.email} is not a member of tenant ${g.tenant}`);
      const { name, profile: before } = resolveProfile(given(g.profile));
      // The token first: a profile without its token would only fail later, further from the cause.
      saveToken(name, url, token);
      if (before?.url && before.url !== url) deleteToken(name, before.url);
      setProfile(name, { url, tenant });
      await emit(outputFormat(g), { profile: name, url, user_id: me.user_id, email: me.email, tenant_id: tenant ?? null });
    });
}

export function logoutCommand(program: Command): void {
  program
    .command('logout')
    .description("forget a profile's stored token and server")
    .configureHelp({ showGlobalOptions: true })
    .addHelpText('after', '\nExample:\n  svc logout --profile staging')
    .action(async (_o, cmd: Command) => {
      const g = cmd.optsWithGlobals<GlobalOptions>();
      const { name, profile } = resolveProfile(given(g.profile));
      const url = profile?.url ?? (given(g.url) && normalizeUrl(g.url!));
      const forgotToken = url ? deleteToken(name, url) : false;
      const forgotProfile = removeProfile(name);
      await emit(outputFormat(g), { profile: name, url: url ?? null, logged_out: forgotToken || forgotProfile });
    });
}
