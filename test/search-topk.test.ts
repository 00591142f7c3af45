import { describe, expect, it } from 'vitest';
import { TopK } from '../src/engine/search/topK.js';

interface Item { score: number; seq: number }
const better = (a: Item, b: Item) => a.score > b.score || (a.score === b.score && a.seq > b.seq);

/** A seeded stream of items with many equal scores, so that ties decide too. */
function items(n: number, seed = 7): Item[] {
  let x = seed;
  const next = () => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  return Array.from({ length: n }, (_, seq) => ({ score: Math.floor(next() * 50), seq }));
}

describe('TopK', () => {
  it('keeps the best k of a stream, best first', () => {
    const all = items(5000);
    const top = new TopK<Item>(100, better);
    for (const it of all) top.push(it);
    const expected = [...all].sort((a, b) => (better(a, b) ? -1 : 1)).slice(0, 100);
    expect(top.sorted()).toEqual(expected);
  });

  it('drain gives what sorted gives, handing the event loop back whenever it is due', async () => {
    const all = items(20_000);
    const a = new TopK<Item>(15_000, better);
    const b = new TopK<Item>(15_000, better);
    for (const it of all) {
      a.push(it);
      b.push(it);
    }
    let pauses = 0;
    let calls = 0;
    const drained = await b.drain({ due: () => ++calls % 1000 === 0, pause: async () => void pauses++ });
    expect(drained).toEqual(a.sorted());
    expect(drained).toHaveLength(15_000);
    expect(pauses).toBe(15);
    expect(b.sorted()).toEqual([]); // drained: the heap is empty
  });
});
