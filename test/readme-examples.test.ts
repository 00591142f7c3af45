import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DATA, ROOT, SVC, tempDir } from './helpers/cli.js';

/** Blocks of the README that are not commands to run: set-up (this is it), and the data dir's layout. */
const NOT_COMMANDS = [/^npm ci$/m, /^meta\/\s/m];

/** The README's example blocks, in order. */
function examples(): string[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  return [...readme.matchAll(/^```\n([\s\S]*?)^```$/gm)].map((m) => m[1]).filter((block) => !NOT_COMMANDS.some((re) => re.test(block)));
}

const freePort = () =>
  new Promise<number>((ok) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => ok(port));
    });
  });

/**
 * The blocks as one shell script, run as written but for where things are: `npx svc` is this
 * checkout's svc, `../shared/data` the data beside it, port 7360 a free one, /tmp this test's
 * folder. A `svc serve` starts the server once, in the background, and waits for it. curl fails
 * on an HTTP error, and `jq -r` on a null (so a variable a block captures is never empty).
 */
function script(blocks: string[], port: number, work: string): string {
  const body = blocks
    .join('\n')
    .replace(/\\\n/g, ' ') // continued lines, joined
    .split('\n')
    .map((line) => {
      if (/^npx svc serve\b/.test(line)) return 'start_server';
      // /tmp/ first: the data's own path may be under /tmp
      return line
        .replaceAll('/tmp/', `${work}/`)
        .replaceAll('npx svc', 'svc')
        .replaceAll('../shared/data', DATA)
        .replaceAll('localhost:7360', `localhost:${port}`)
        .replace(/\bcurl -s /g, 'curl -sf ')
        .replace(/\bjq -r /g, 'jq -er ');
    })
    .join('\n');
  return `set -e
cd ${JSON.stringify(work)}
svc() { node ${JSON.stringify(SVC)} "$@"; }
start_server() {
  [ -n "$SERVER" ] && return 0
  node ${JSON.stringify(SVC)} serve --port ${port} > server.log 2>&1 &
  SERVER=$!
  for i in $(seq 100); do curl -sf localhost:${port}/healthz > /dev/null && return 0; sleep 0.1; done
  echo "the server did not start" >&2; cat server.log >&2; exit 1
}
trap '[ -n "$SERVER" ] && kill $SERVER' EXIT
${body}
`;
}

describe('the README examples', () => {
  const dir = tempDir('svc-readme-');
  afterAll(() => dir.remove());

  it('run as written on a fresh data dir, one after another', async () => {
    const blocks = examples();
    expect(blocks.length).toBeGreaterThanOrEqual(10);
    const file = join(dir.path, 'readme.sh');
    writeFileSync(file, script(blocks, await freePort(), dir.path));
    const env = { ...process.env, SVC_DATA_DIR: join(dir.path, 'data'), SVC_URL: '', SVC_TOKEN: '', SVC_TENANT: '', SVC_PROFILE: '', XDG_CONFIG_HOME: join(dir.path, 'config') };
    const r = spawnSync('bash', [file], { env, encoding: 'utf8', maxBuffer: 256 * 2 ** 20, timeout: 240_000 });
    expect(r.status, `${r.stderr.slice(-3000)}\n--- stdout ---\n${r.stdout.slice(-2000)}`).toBe(0);
    // what the examples show came out: a search hit, a SQL answer, a detection's hits, a followed line
    expect(r.stdout).toContain('PacketResponder');
    expect(r.stdout).toMatch(/"group_value":"\d+\.\d+\.\d+\.\d+"/);
    expect(r.stdout).toContain('deploybot');
    expect(readFileSync(join(dir.path, 'photo.png')).subarray(1, 4).toString()).toBe('PNG');
  }, 300_000);
});
