import { readdirSync, statSync, type Stats } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import { NotFound } from '../engine/errors.js';
import { EXIT, Exit } from './context.js';

/** Whether a path is a pattern for svc to expand: it holds a wildcard (`*`, `?`), a class (`[…]`) or braces (`{a,b}`). */
export const isGlob = (path: string): boolean => /[*?[\]{}]/.test(path);

/** Whether one path names more than one file may be: a directory, or a glob (an existing file of that name is a file). */
export function namesMany(path: string): boolean {
  const stat = statOf(path);
  return stat ? stat.isDirectory() : path !== '-' && isGlob(path);
}

/** Whether a name is hidden (a dot file or folder): a directory or a glob passes over it. */
const hidden = (name: string) => name.startsWith('.');

function statOf(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

/** The files under `dir`, recursively, in name order, hidden files and folders left out. */
function walk(dir: string, out: string[], seen: Set<string>): void {
  const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    if (hidden(entry.name)) continue;
    const path = join(dir, entry.name);
    // a link is followed to what it names; a folder is entered once, so that a loop of links ends
    const stat = entry.isSymbolicLink() ? statOf(path) : entry;
    if (stat?.isDirectory()) {
      const real = resolve(path);
      if (seen.has(real)) continue;
      seen.add(real);
      walk(path, out, seen);
    } else if (stat?.isFile()) out.push(path);
  }
}

/**
 * A glob expanded by svc itself (so a quoted pattern works in any shell): the part of the pattern
 * before its first wildcard segment is the folder searched, the rest is matched below it. Hidden
 * files match only a pattern that names the dot.
 */
async function expandGlob(pattern: string): Promise<string[]> {
  const { globSync } = await import('tinyglobby'); // loaded when a glob is given, not at every start
  const parts = pattern.split(/[\\/]/);
  let i = 0;
  while (i < parts.length - 1 && !isGlob(parts[i])) i++;
  const base = parts.slice(0, i).join(sep) || (pattern.startsWith('/') ? sep : '.');
  const rest = parts.slice(i).join('/');
  if (!statOf(base)?.isDirectory()) return [];
  return globSync(rest, { cwd: base, dot: false, onlyFiles: true, expandDirectories: false })
    .sort()
    .map((match) => (base === '.' ? match : join(base, match)));
}

/**
 * The files the paths of `svc ingest` name, in order and each once: a file as it is, a directory's
 * files recursively (hidden ones left out), a glob's matches. Every path is checked before any is
 * ingested: one missing, or a glob that matches nothing, is a one-line error (NotFound) and nothing
 * is sent.
 */
export async function expandPaths(paths: string[]): Promise<string[]> {
  const files: string[] = [];
  for (const path of paths) {
    const stat = statOf(path);
    if (stat?.isFile()) files.push(path);
    else if (stat?.isDirectory()) {
      const found: string[] = [];
      walk(path, found, new Set([resolve(path)]));
      if (found.length === 0) throw new Exit(EXIT.usage, `directory '${path}' holds no files to ingest`);
      files.push(...found);
    } else if (stat) throw new Exit(EXIT.usage, `'${path}' is not a file or a directory`);
    else if (isGlob(path)) {
      const found = await expandGlob(path);
      if (found.length === 0) throw new NotFound(`no files match '${path}'`);
      files.push(...found);
    } else throw new NotFound(`file '${path}' not found`);
  }
  const seen = new Set<string>();
  return files.filter((f) => {
    const key = resolve(f);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
