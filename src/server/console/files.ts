import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

export interface ConsoleFile { type: string; body: Buffer; gzip: Buffer | null; etag: string }

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

// Under vitest the server runs from its TypeScript source; the console is always the built one.
const BUILT = fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? '../../../dist/console/' : '../../console/', import.meta.url));

/** Each file of a built console folder by name; none when there is no folder. */
export function readConsoleDir(dir: string): Map<string, Buffer> {
  if (!existsSync(dir)) return new Map();
  return new Map(readdirSync(dir, { withFileTypes: true }).filter((e) => e.isFile()).map((e) => [e.name, readFileSync(join(dir, e.name))]));
}

/** Each file of the built console by name (the single executable lists its own copies instead). */
let source: () => Map<string, Buffer> = () => readConsoleDir(BUILT);

export function setConsoleSource(read: () => Map<string, Buffer>): void {
  source = read;
  loaded = null;
}

let loaded: Map<string, ConsoleFile> | null = null;

/** The console's files, read once and compressed once: a few hundred kilobytes at most. */
export function consoleFiles(): Map<string, ConsoleFile> {
  if (loaded) return loaded;
  const files = new Map(
    [...source()].filter(([name]) => TYPES[extname(name)]).map(([name, body]) => {
      const type = TYPES[extname(name)];
      const gzip = /^(text|image\/svg)/.test(type) ? gzipSync(body) : null;
      return [name, { type, body, gzip, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 16)}"` }] as const;
    }),
  );
  if (files.size > 0) loaded = files; // not built yet: look again next time
  return files;
}
