import { describe, expect, it } from 'vitest';
import { Deadline } from '../src/engine/search/deadline.js';
import { Gate } from '../src/engine/search/gate.js';

describe('the search gate', () => {
  it('lets `size` searches work at once, hands a place over in order, and times out one that waited too long', async () => {
    const gate = new Gate(1);
    const order: string[] = [];
    const leaveA = await gate.enter(new Deadline(10_000));
    const b = gate.enter(new Deadline(10_000)).then((leave) => (order.push('b'), leave));
    const late = gate.enter(new Deadline(30)).catch((err) => (order.push('late timed out'), err));
    const c = gate.enter(new Deadline(10_000)).then((leave) => (order.push('c'), leave));
    expect(await late).toMatchObject({ code: 'search_timeout' });
    expect(order).toEqual(['late timed out']);
    leaveA();
    (await b)();
    (await c)();
    expect(order).toEqual(['late timed out', 'b', 'c']);
    // every place is free again
    const both = await Promise.all([gate.enter(new Deadline(1000))]);
    both.forEach((leave) => leave());
  });
});
