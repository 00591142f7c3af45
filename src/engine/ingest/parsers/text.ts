import type { ParsedItem } from '../../records.js';
import { lineBatches } from '../lines.js';

/** One item per non-empty line; blank lines are skipped but still counted. */
export async function* parseText(input: AsyncIterable<Buffer>): AsyncGenerator<ParsedItem> {
  for await (const batch of lineBatches(input)) {
    for (const item of batch) {
      if ('value' in item && item.value.length === 0) continue;
      yield item;
    }
  }
}
