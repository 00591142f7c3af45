import type { ParsedItem } from '../../records.js';
import { isBlank, lineBatches } from '../lines.js';

/** One item per line with something in it; blank and whitespace-only lines are skipped but still counted. */
export async function* parseText(input: AsyncIterable<Buffer>): AsyncGenerator<ParsedItem> {
  for await (const batch of lineBatches(input)) {
    for (const item of batch) {
      if ('value' in item && isBlank(item.value)) continue;
      yield item;
    }
  }
}
