import type { Candidate } from './matcher.js';
import type { Rule } from './rules.js';

/**
 * For each rule, the candidates it may match: a record goes only to the rules whose needed terms it
 * holds (and to every rule that needs none). A batch meets a hundred rules at the price of a few
 * lookups per record term, instead of a hundred tests per record.
 */
export function triage(rules: Rule[], candidates: Candidate[]): Candidate[][] {
  const lists: Candidate[][] = rules.map(() => []);
  const byTerm = new Map<string, number[]>();
  const always: number[] = [];
  rules.forEach((r, i) => {
    if (r.needs === null) return always.push(i);
    for (const term of r.needs) byTerm.set(term, [...(byTerm.get(term) ?? []), i]);
  });
  const seen = new Int32Array(rules.length).fill(-1);
  candidates.forEach((c, n) => {
    for (const i of always) lists[i]!.push(c);
    if (byTerm.size === 0) return;
    for (const term of c.text.view('all').termSet) {
      for (const i of byTerm.get(term) ?? []) {
        if (seen[i] === n) continue; // reached by another of its terms
        seen[i] = n;
        lists[i]!.push(c);
      }
    }
  });
  return lists;
}
