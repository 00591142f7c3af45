import type { ParsedItem } from '../../records.js';
import { nestsDeeperThan, TOO_DEEP } from '../depth.js';
import { isBlank, lineBatches } from '../lines.js';

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** One JSON object per line; blank and whitespace-only lines are skipped. */
export async function* parseNdjson(input: AsyncIterable<Buffer>): AsyncGenerator<ParsedItem> {
  for await (const batch of lineBatches(input)) {
    for (const item of batch) {
      if ('error' in item) {
        yield item;
        continue;
      }
      const parsed = parseObjectText(item.value);
      if (parsed === undefined) continue;
      yield 'error' in parsed ? { line: item.line, error: parsed.error } : { line: item.line, value: parsed.value };
    }
  }
}

/** JSON text that must hold one object nested at most DEPTH_LIMIT levels; undefined for blank or whitespace-only text. */
export function parseObjectText(text: string): { value: Record<string, unknown> } | { error: string } | undefined {
  // before parsing, so that a deep value costs one scan and never a tree nothing downstream could walk
  if (nestsDeeperThan(text)) return { error: TOO_DEEP };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    // Checked only on failure: trimming every line would cost on the hot path.
    if (isBlank(text)) return undefined;
    return { error: `invalid JSON: ${(e as Error).message}` };
  }
  return isPlainObject(value) ? { value } : { error: 'expected a JSON object' };
}
