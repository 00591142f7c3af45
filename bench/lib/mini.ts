import MiniSearch, { type Options } from 'minisearch';
import { normalizeTerm, tokenize } from '../../src/engine/text/analyzer.js';
import type { Doc } from './scifact.js';

/** Plain MiniSearch over SciFact, title and text as two fields: out of the box, or with the engine's analyzer. */
export function miniScifact(docs: Doc[], analyzer: boolean): MiniSearch<Doc> {
  const options: Options<Doc> = { idField: '_id', fields: ['title', 'text'] };
  if (analyzer) Object.assign(options, { tokenize, processTerm: normalizeTerm });
  const mini = new MiniSearch<Doc>(options);
  mini.addAll(docs);
  return mini;
}
