/**
 * The web console in Debian's Chromium (through playwright-core) against a real `svc serve` holding
 * the HDFS sample: sign-in with a one-time link, search with highlights and a histogram, a record's
 * line in context, SQL and its errors, minting and revoking a tenant key, sign-out. A screenshot of
 * each page goes to test-output/console/. Without /usr/bin/chromium the tests are reported skipped.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATA, ROOT, init, serve, svc, tempDir, type Server } from './helpers/cli.js';

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = join(ROOT, 'test-output/console');
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

describe.skipIf(!existsSync(CHROMIUM))('web console in Chromium', () => {
  const dir = tempDir('svc-console-');
  const dataDir = join(dir.path, 'data');
  let server: Server;
  let browser: Browser;
  let page: Page;
  let link = '';
  let admin: { tenant_id: string; token: string };

  const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  const go = async (route: string) => {
    await page.goto(`${server.url}/#/${route}`);
  };
  const newLink = (email: string) => {
    const r = svc(['console', '--email', email, '--no-open', '--output', 'json'], { dataDir });
    if (r.status !== 0) throw new Error(`svc console: ${r.stderr}`);
    return r.json().url as string;
  };
  /** `use` on a page of a browser context of its own, signed in as `email` with a fresh link. */
  const signedInElsewhere = async (email: string, use: (p: Page, context: BrowserContext) => Promise<void>) => {
    const context = await browser.newContext();
    try {
      const p = await context.newPage();
      await p.goto(newLink(email));
      await p.getByTestId('user-email').filter({ hasText: email }).waitFor();
      await use(p, context);
    } finally {
      await context.close();
    }
  };

  beforeAll(async () => {
    // npm test builds it (npm run build); after changing src/console, build before running this file alone
    if (!existsSync(join(ROOT, 'dist/console/app.js'))) throw new Error('dist/console is not built: run `npm run build`');
    mkdirSync(SHOTS, { recursive: true });
    admin = init(dataDir);
    for (const args of [['datasets', 'create', 'hdfs', '--no-semantic'], ['ingest', 'hdfs', join(DATA, 'loghub/HDFS/HDFS_2k.log'), '--format', 'text', '--wait']]) {
      const r = svc(args, { dataDir });
      if (r.status !== 0) throw new Error(`svc ${args[0]}: ${r.stderr}`);
    }
    server = await serve(dataDir);
    link = newLink('admin@localhost');
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    dir.remove();
  });

  it('signs in with the link, and takes the code out of the address', async () => {
    expect(link).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/#\/signin\?code=/);
    await page.goto(link);
    await page.getByTestId('search-text').waitFor();
    expect(page.url()).not.toContain('code=');
    expect(page.url()).toMatch(/#\/search$/);
    expect(await page.getByTestId('user-email').innerText()).toBe('admin@localhost');
  });

  it('does not take the same code twice', async () => {
    const other = await browser.newContext();
    try {
      const p = await other.newPage();
      await p.goto(link);
      const msg = p.getByTestId('signin-message');
      await expect.poll(() => msg.innerText()).toContain('already been used');
      expect(await p.getByTestId('search-text').count()).toBe(0);
    } finally {
      await other.close();
    }
  });

  it('searches: highlighted hits and a histogram', async () => {
    await page.getByTestId('search-text').fill('PacketResponder');
    await page.getByTestId('search-submit').click();
    await page.getByTestId('result').first().waitFor();
    expect(await page.getByTestId('result').count()).toBeGreaterThan(5);
    const mark = page.getByTestId('result').first().locator('mark').first();
    expect(await mark.innerText()).toBe('PacketResponder');
    await page.getByTestId('histogram').locator('canvas').waitFor();
    const box = await page.getByTestId('histogram').boundingBox();
    expect(box!.height).toBeGreaterThan(100);
  });

  it('narrows the time range by dragging across the histogram', async () => {
    const summary = page.getByRole('status').filter({ hasText: 'records' });
    const before = parseInt((await summary.innerText()).replace(/,/g, ''), 10);
    const plot = await page.getByTestId('histogram').locator('.u-over').boundingBox();
    const y = plot!.y + plot!.height / 2;
    await page.mouse.move(plot!.x + plot!.width * 0.3, y);
    await page.mouse.down();
    await page.mouse.move(plot!.x + plot!.width * 0.5, y, { steps: 5 });
    await page.mouse.up();
    await expect.poll(() => page.getByLabel('From', { exact: true }).inputValue()).not.toBe('');
    await expect.poll(async () => parseInt((await summary.innerText()).replace(/,/g, ''), 10)).toBeLessThan(before);
    await page.getByRole('button', { name: 'All', exact: true }).click();
    await page.getByTestId('search-submit').click();
    await expect.poll(async () => parseInt((await summary.innerText()).replace(/,/g, ''), 10)).toBe(before);
  });

  it("opens a record: its line in context is the record's body", async () => {
    const first = page.getByTestId('result').first();
    const body = await first.getByTestId('result-snippet').first().innerText();
    await first.click();
    const current = page.getByTestId('context-panel').getByTestId('context-line-current');
    await current.waitFor();
    expect(await current.locator('code').innerText()).toBe(body);
    expect(await page.getByTestId('context-panel').locator('li').count()).toBeGreaterThan(1);
    await shot('search');
  });

  it('saves the search as a view, and exports it', async () => {
    await page.getByLabel('View name').fill('responders');
    await page.getByRole('button', { name: 'Save as view' }).click();
    await page.getByText(/Saved as view “responders” \(603 records\)/).waitFor();
    await page.getByRole('button', { name: 'Export', exact: true }).click();
    const download = page.getByRole('link', { name: /^Download 603 rows$/ });
    await download.waitFor({ timeout: 20_000 });
    expect(await download.getAttribute('href')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1\/export\//);
    await page.getByRole('link', { name: 'Views' }).click();
    const row = page.getByRole('row').filter({ hasText: 'responders' });
    await row.getByRole('button', { name: 'Open records' }).click();
    await page.getByText('Records of responders (603)').waitFor();
    await shot('views');
  });

  it('runs SQL, and shows its errors', async () => {
    await page.getByTestId('nav-sql').click();
    await page.getByTestId('sql-editor').fill('SELECT count(*) AS n FROM hdfs');
    await page.getByTestId('sql-run').click();
    const table = page.getByTestId('sql-table');
    await table.waitFor();
    expect(await table.locator('tbody td').first().innerText()).toBe('2000');
    await shot('sql');
    await page.getByTestId('sql-editor').fill('SELECT nope FROM hdfs');
    await page.getByTestId('sql-editor').press('Control+Enter');
    const error = page.getByTestId('sql-error');
    await error.waitFor();
    expect(await error.innerText()).toContain('Referenced column "nope" not found');
    await shot('sql-error');
  });

  it('lists datasets with their ingest runs, and uploads a file into one', async () => {
    await page.getByTestId('nav-datasets').click();
    await page.getByText('HDFS_2k.log').waitFor();
    const lines = Array.from({ length: 50 }, (_, i) => `2026-11-22T07:00:${String(i).padStart(2, '0')}Z WARN uploaded line ${i}`).join('\n');
    await page.getByTestId('upload-file').setInputFiles({ name: 'uploaded.log', mimeType: 'text/plain', buffer: Buffer.from(`${lines}\n`) });
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await page.getByText(/ingest run \S+ started/).waitFor();
    const run = page.getByRole('row').filter({ hasText: 'uploaded.log' });
    await expect.poll(() => run.innerText(), { timeout: 20_000 }).toContain('ready');
    expect(await run.innerText()).toContain('50');
    await shot('datasets');
  });

  it('mints a tenant key (shown once), lists it, and revokes it', async () => {
    await page.getByTestId('nav-keys').click();
    await page.getByTestId('key-name').fill('browser test key');
    await page.getByTestId('key-mint').click();
    const plaintext = page.getByTestId('key-plaintext');
    await plaintext.waitFor();
    const token = await plaintext.innerText();
    expect(token).toMatch(/^svctk\.v1\./);
    await shot('keys-minted');
    await page.getByRole('button', { name: 'Close' }).click();
    await expect.poll(() => plaintext.count()).toBe(0);
    expect(await page.content()).not.toContain(token);
    const row = page.getByTestId('key-row').filter({ hasText: 'browser test key' });
    await row.waitFor();
    await shot('keys');
    page.once('dialog', (d) => void d.accept());
    await row.getByTestId('key-revoke').click();
    await expect.poll(() => page.getByTestId('key-row').filter({ hasText: 'browser test key' }).count()).toBe(0);
  });

  it('goes back to sign-in when the session ends under it', async () => {
    await signedInElsewhere('admin@localhost', async (p, context) => {
      await context.clearCookies();
      await p.getByTestId('nav-sql').click();
      await p.getByTestId('sql-editor').fill('SELECT 1');
      await p.getByTestId('sql-run').click();
      const msg = p.getByTestId('signin-message');
      await msg.waitFor();
      expect(await msg.innerText()).toBe('Your session has ended. Run svc console for a new sign-in link.');
    });
  });

  it("shows a member no admin actions (the API decides anyway)", async () => {
    expect(svc(['members', 'add', 'member@localhost', '--role', 'member'], { dataDir }).status).toBe(0);
    await signedInElsewhere('member@localhost', async (p) => {
      await p.getByTestId('nav-keys').click();
      await p.getByRole('heading', { name: 'Members', exact: true }).waitFor();
      await p.getByRole('cell', { name: 'member@localhost' }).waitFor();
      expect(await p.getByTestId('key-mint').count()).toBe(0);
      expect(await p.getByTestId('key-name').count()).toBe(0);
      await p.getByTestId('nav-datasets').click();
      await p.getByRole('cell', { name: 'hdfs' }).first().waitFor();
      expect(await p.getByRole('button', { name: 'Create dataset' }).count()).toBe(0);
    });
  });

  it('switches tenants for a user in two, each page with the role it has there', async () => {
    // a second tenant, provisioned with a platform key, where the admin of the first is a member
    const call = async (path: string, token: string, tenant: string | null, body: unknown) => {
      const res = await fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(tenant ? { 'x-service-tenant-id': tenant } : {}) },
        body: JSON.stringify(body),
      });
      expect(res.status, `${path}: ${await res.clone().text()}`).toBeLessThan(300);
      return res.json();
    };
    const platformKey = (await call('/v1/admin/platform-keys', admin.token, admin.tenant_id, { name: 'provisioning' })).token;
    const second = await call('/v1/platform/tenants', platformKey, null, { name: 'second' });
    await call('/v1/admin/members', platformKey, second.tenant_id, { email: 'admin@localhost', role: 'member' });

    await signedInElsewhere('admin@localhost', async (p) => {
      const switcher = p.getByTestId('tenant-switcher');
      expect(await switcher.locator('option').count()).toBe(2);
      await p.getByTestId('nav-datasets').click();
      await p.getByRole('cell', { name: 'hdfs' }).first().waitFor();
      await switcher.selectOption(second.tenant_id);
      await expect.poll(() => p.getByRole('cell', { name: 'hdfs' }).count()).toBe(0);
      expect(await p.getByRole('button', { name: 'Create dataset' }).count()).toBe(0); // a member there
      await p.getByTestId('nav-keys').click();
      await p.getByRole('heading', { name: 'Members', exact: true }).waitFor();
      expect(await p.getByTestId('key-mint').count()).toBe(0);
      await switcher.selectOption(admin.tenant_id);
      await p.getByTestId('key-mint').waitFor(); // an admin again
    });
  });

  it('signs out; a reload stays signed out', async () => {
    await page.getByTestId('signout').click();
    const msg = page.getByTestId('signin-message');
    await msg.waitFor();
    expect(await msg.innerText()).toContain('svc console');
    await shot('signin');
    await page.reload();
    await page.getByTestId('signin-message').waitFor();
    expect(await page.getByTestId('search-text').count()).toBe(0);
    await go('search');
    await page.getByTestId('signin-message').waitFor();
    expect(await page.getByTestId('nav-search').count()).toBe(0);
  });
});
