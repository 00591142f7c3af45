import { describe, expect, it } from 'vitest';
import { LIMITS } from '../src/api/limits.js';
import { SearchRequest } from '../src/api/search.js';
import { validate } from '../src/api/validate.js';
import { Invalid } from '../src/engine/errors.js';

describe('validate (the local door)', () => {
  it('names the limit a value of a union breaks, not only that the union failed', () => {
    const err = (() => {
      try {
        validate(SearchRequest, { q: 'a '.repeat(LIMITS.q) });
      } catch (e) {
        return e as Invalid;
      }
    })();
    expect(err).toBeInstanceOf(Invalid);
    expect(err!.issues[0]).toMatchObject({ loc: ['body', 'q'], msg: expect.stringContaining(String(LIMITS.q)) });
    expect(() => validate(SearchRequest, { q: null })).not.toThrow();
  });
});
