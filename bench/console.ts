/**
 * The web console in Debian's Chromium against `svc serve` with the HDFS sample: what its page
 * weighs (gzipped, as served), its first contentful paint, and how long results take to be on
 * screen once the search response has arrived, beside the search request's own time.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { fixed, printTable } from './lib/table.js';
import { DATA, ROOT } from './lib/paths.js';
import { quantile } from './lib/stats.js';
import { serve, svc, tempDir } from './lib/svc.js';

const CHROMIUM = '/usr/bin/chromium';
const SEARCHES = 20;
const WORDS = ['PacketResponder', 'terminating', 'block', 'NameSystem', 'allocateBlock', 'Receiving', 'served', 'Verification', 'succeeded', 'DataNode'];

export async function consoleBench(): Promise<void> {
  const dist = join(ROOT, 'dist/console');
  const weights = readdirSync(dist).map((f) => {
    const bytes = readFileSync(join(dist, f));
    return [f, bytes.length, gzipSync(bytes).length] as const;
  });
  const scripts = weights.filter(([f]) => f.endsWith('.js')).reduce((n, [, , gz]) => n + gz, 0);
  printTable('Console files (dist/console)', ['file', 'bytes', 'gzipped'], [...weights.map(([f, raw, gz]) => [f, raw, gz]), ['scripts, gzipped (goal < 300 KB)', '', scripts]]);
  if (!existsSync(CHROMIUM)) {
    console.log(`no ${CHROMIUM}: first paint and results timing not measured (apt-get install chromium)`);
    return;
  }

  const dir = tempDir('svc-bench-console-');
  const dataDir = join(dir.path, 'data');
  svc(dataDir, ['init', '--yes']);
  svc(dataDir, ['datasets', 'create', 'hdfs', '--no-semantic']);
  svc(dataDir, ['ingest', 'hdfs', join(DATA, 'loghub/HDFS/HDFS_2k.log'), '--format', 'text', '--wait']);
  const server = await serve(dataDir);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const link = svc(dataDir, ['console', '--no-open']).out.url as string;
    await page.goto(link);
    await page.getByTestId('search-text').waitFor();
    await page.reload(); // the signed-in page, as a returning user loads it
    await page.getByTestId('search-text').waitFor();
    const paint = await page.evaluate(() => performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? NaN);
    const transferred = await page.evaluate(() =>
      (performance.getEntriesByType('resource') as PerformanceResourceTiming[]).filter((r) => r.name.includes('/console/')).reduce((n, r) => n + r.transferSize, 0),
    );

    const onScreen: number[] = [];
    const request: number[] = [];
    for (let i = 0; i < SEARCHES; i++) {
      const word = WORDS[i % WORDS.length];
      await page.getByTestId('search-text').fill(word);
      // the moment a result of this search (its word marked) is in the DOM and painted
      const shown = page.evaluate(
        (w) =>
          new Promise<number>((resolve) => {
            const seen = () => [...document.querySelectorAll('[data-testid="result"] mark')].some((el) => el.textContent?.toLowerCase() === w.toLowerCase());
            new MutationObserver((_, obs) => {
              if (!seen()) return;
              obs.disconnect();
              requestAnimationFrame(() => resolve(performance.now()));
            }).observe(document.body, { childList: true, subtree: true, characterData: true });
          }),
        word,
      );
      await page.getByTestId('search-submit').click();
      const at = await shown;
      const timing = await page.evaluate(() => {
        const searches = (performance.getEntriesByType('resource') as PerformanceResourceTiming[]).filter((r) => r.name.endsWith('/v1/search'));
        const last = searches[searches.length - 1];
        performance.clearResourceTimings();
        return { start: last.startTime, end: last.responseEnd };
      });
      request.push(timing.end - timing.start);
      onScreen.push(at - timing.end);
    }
    printTable(
      `Console in Chromium, HDFS 2k lines (${SEARCHES} searches)`,
      ['measure', 'ms', 'goal'],
      [
        ['first contentful paint (signed in, reload)', fixed(paint), ''],
        ['console files transferred (bytes)', transferred, ''],
        ['search request, p50 (baseline)', fixed(quantile(request, 0.5)), ''],
        ['response → results on screen, p50', fixed(quantile(onScreen, 0.5)), '< 300'],
        ['response → results on screen, max', fixed(Math.max(...onScreen)), '< 300'],
      ],
    );
  } finally {
    await browser.close();
    await server.stop();
    dir.remove();
  }
}
