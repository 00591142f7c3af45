import type { StoredRecord } from '../records.js';
import { analyze, tokenize } from '../text/analyzer.js';

/** What a text clause reads: the title, the body, or both. */
export type Scope = 'all' | 'title' | 'body';

/** One record's title/body token views, computed at most once however many clauses ask. */
export class RecordText {
  private views: Partial<Record<Scope, TextView>> = {};
  constructor(readonly rec: StoredRecord) {}

  view(scope: Scope): TextView {
    // without a title, the whole text is the body: analysed once for both
    if (scope === 'all' && !this.rec.title) scope = 'body';
    let v = this.views[scope];
    if (v === undefined) {
      const r = this.rec;
      const raw = scope === 'title' ? (r.title ?? '') : scope === 'body' ? r.body : r.title ? `${r.title} ${r.body}` : r.body;
      v = this.views[scope] = new TextView(raw);
    }
    return v;
  }
}

export class TextView {
  private _terms?: string[];
  private _termSet?: Set<string>;
  private _tokens?: string[];
  private _words?: string[];
  constructor(readonly raw: string) {}

  get terms(): string[] {
    return (this._terms ??= analyze(this.raw));
  }
  get termSet(): Set<string> {
    return (this._termSet ??= new Set(this.terms));
  }
  get tokens(): string[] {
    return (this._tokens ??= tokenize(this.raw));
  }
  get words(): string[] {
    return (this._words ??= this.raw.toLowerCase().split(/\s+/).filter((w) => w !== ''));
  }
}
