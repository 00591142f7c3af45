/**
 * Hosted multipart upload of a 200 MB log file: the PUTs (4 parts in flight, 8 MiB each), the
 * complete that assembles the object, and the CLI's remote ingest end to end, against writing the
 * same bytes with fs.writeFile; and the server's peak RSS (VmHWM) before and after, which stays
 * near its idle figure because every step streams.
 *
 *   npm run build && tsc -p bench/tsconfig.json && node .bench/bench/run.js upload (SVC_BENCH_SIZE=MB, default 200)
 */
import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, readFileSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { once } from 'node:events';
import { Agent, request } from 'undici';
import { remoteService } from '../src/cli/remoteService.js';
import { DATA } from './lib/paths.js';
import { serve, svc, tempDir } from './lib/svc.js';
import { fixed, printTable } from './lib/table.js';

const MiB = 2 ** 20;
const PART = 8 * MiB;
const PARALLEL = 4;

const peakRssMiB = (pid: number) => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

/** A text log of about `mb` MB, written line by line from the sample access log. */
async function makeLog(path: string, mb: number): Promise<number> {
  const lines = readFileSync(join(DATA, 'ingest/apache_access_combined.log'), 'utf8').split('\n').filter(Boolean);
  const out = createWriteStream(path);
  let bytes = 0;
  for (let i = 0; bytes < mb * 1e6; i++) {
    const line = `${lines[i % lines.length]} #${i}\n`;
    bytes += Buffer.byteLength(line);
    if (!out.write(line)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return bytes;
}

async function json(url: string, token: string, tenant: string, body: unknown): Promise<any> {
  const res = await request(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'x-service-tenant-id': tenant, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const parsed = await res.body.json();
  if (res.statusCode >= 300) throw new Error(`${url}: HTTP ${res.statusCode} ${JSON.stringify(parsed)}`);
  return parsed;
}

/** Session, PUTs (file ranges streamed, PARALLEL at a time), complete: seconds of the PUTs and of complete. */
async function uploadParts(base: string, token: string, tenant: string, file: string, size: number): Promise<{ put: number; complete: number; etag: string }> {
  const src = `${base}/v1/ingest/sources/bulk/uploads`;
  const session = await json(src, token, tenant, { filename: 'bulk.log', size_bytes: size });
  const count = Math.ceil(size / PART);
  const numbers = Array.from({ length: count }, (_, i) => i + 1);
  const { parts } = await json(`${src}/parts`, token, tenant, { upload_session_id: session.upload_session_id, part_numbers: numbers });
  const agent = new Agent({ connections: PARALLEL });
  const etags: { part_number: number; etag: string }[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      for (let i = next++; i < count; i = next++) {
        const start = i * PART;
        const end = Math.min(size, start + PART) - 1;
        const res = await request(parts[i].upload_url, { method: 'PUT', body: createReadStream(file, { start, end }), headers: { 'content-length': String(end - start + 1) }, dispatcher: agent });
        const body = (await res.body.json()) as any;
        if (res.statusCode !== 200) throw new Error(`part ${i + 1}: ${JSON.stringify(body)}`);
        etags.push({ part_number: i + 1, etag: body.etag });
      }
    }),
  );
  const t1 = performance.now();
  etags.sort((a, b) => a.part_number - b.part_number);
  const done = await json(`${src}/complete`, token, tenant, { upload_session_id: session.upload_session_id, parts: etags });
  const t2 = performance.now();
  await agent.close();
  return { put: (t1 - t0) / 1000, complete: (t2 - t1) / 1000, etag: done.etag };
}

async function main(): Promise<void> {
  const mb = Number(process.env.SVC_BENCH_SIZE ?? 200);
  const work = tempDir('svc-bench-upload-');
  const servers: ChildProcess[] = [];
  try {
    const file = join(work.path, 'bulk.log');
    const size = await makeLog(file, mb);
    const bytes = readFileSync(file);
    const md5 = createHash('md5').update(bytes).digest('hex');
    const MB = size / 1e6;

    let t = performance.now();
    await writeFile(join(work.path, 'copy.log'), bytes);
    const writeSeconds = (performance.now() - t) / 1000;

    const rows: (string | number)[][] = [['fs.writeFile (bytes in memory)', fixed(writeSeconds, 2), fixed(MB / writeSeconds, 0), '', '']];
    for (const how of ['parts', 'cli'] as const) {
      const dir = join(work.path, how);
      const { token, tenant_id } = svc(dir, ['init', '--yes']).out;
      svc(dir, ['datasets', 'create', 'bulk']);
      const server = await serve(dir);
      servers.push(server.proc);
      const idle = peakRssMiB(server.proc.pid!);
      if (how === 'parts') {
        const r = await uploadParts(server.url, token, tenant_id, file, size);
        if (r.etag !== md5) throw new Error('etag differs from the md5 of the file');
        const peak = peakRssMiB(server.proc.pid!);
        rows.push([`PUT ${Math.ceil(size / PART)} parts of 8 MiB, ${PARALLEL} at a time`, fixed(r.put, 2), fixed(MB / r.put, 0), fixed(idle, 0), '']);
        rows.push(['complete (assemble + md5)', fixed(r.complete, 2), fixed(MB / r.complete, 0), '', fixed(peak, 0)]);
        rows.push(['parts + complete', fixed(r.put + r.complete, 2), fixed(MB / (r.put + r.complete), 0), '', '']);
      } else {
        const service = remoteService({ url: server.url, token, tenant: tenant_id });
        t = performance.now();
        const run = await service.ingest(createReadStream(file, { highWaterMark: MiB }), { dataset_id: 'bulk', filename: 'bulk.log', path: file, size: statSync(file).size });
        const seconds = (performance.now() - t) / 1000;
        await service.close();
        if (run.etag !== md5) throw new Error('etag differs from the md5 of the file');
        rows.push(['svc ingest client (session, parts, complete)', fixed(seconds, 2), fixed(MB / seconds, 0), fixed(idle, 0), fixed(peakRssMiB(server.proc.pid!), 0)]);
      }
      // the ingest run that complete queued would take the server's memory figure elsewhere: stop here
      server.proc.kill('SIGKILL');
    }
    printTable(`Upload of ${fixed(MB, 0)} MB (server peak RSS in MiB)`, ['step', 'seconds', 'MB/s', 'RSS idle', 'RSS peak'], rows);
  } finally {
    for (const p of servers) if (p.exitCode === null) p.kill('SIGKILL');
    work.remove();
  }
}

export const uploadBench = main;
if (process.argv[1] === import.meta.filename) await main();
