import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApiKeyCreate } from '../src/api/identity.js';
import { Invalid } from '../src/api/errors.js';
import { validate } from '../src/api/validate.js';
import { SearchRequest } from '../src/api/search.js';
import { Invalid as EngineInvalid, EngineError, NotFound } from '../src/engine/errors.js';

const API = join(import.meta.dirname, '..', 'src', 'api');

describe('src/api stands alone', () => {
  it('imports nothing of the project outside src/api (the engine imports it, never the reverse)', () => {
    const outside: string[] = [];
    for (const file of readdirSync(API).filter((f) => f.endsWith('.ts'))) {
      for (const [, spec] of readFileSync(join(API, file), 'utf8').matchAll(/from\s+'([^']+)'/g)) if (spec.startsWith('.') && !spec.startsWith('./')) outside.push(`${file}: ${spec}`);
    }
    expect(outside).toEqual([]);
  });

  it("the engine's Invalid is the schemas' Invalid, an engine error like the others", () => {
    expect(EngineInvalid).toBe(Invalid);
    expect(new Invalid('x')).toBeInstanceOf(EngineError);
    expect(new NotFound('y')).toBeInstanceOf(EngineError);
    expect(new NotFound('y').name).toBe('NotFound');
  });

  it('a local validation of an enum or a nullable enum gives one issue listing the allowed values', () => {
    const issuesOf = (f: () => unknown) => {
      try {
        f();
      } catch (err) {
        expect(err).toBeInstanceOf(Invalid);
        return (err as Invalid).issues;
      }
      throw new Error('no error');
    };
    expect(issuesOf(() => validate(ApiKeyCreate, { name: 'k', role: 'owner' }))).toEqual([
      { loc: ['body', 'role'], msg: "Input should be 'Admin', 'Member', 'admin' or 'member'", type: 'enum', ctx: { expected: "'Admin', 'Member', 'admin' or 'member'" }, input: 'owner' },
    ]);
    expect(issuesOf(() => validate(SearchRequest, { content_filter: 'video' }))).toEqual([
      { loc: ['body', 'content_filter'], msg: "Input should be 'text', 'image' or null", type: 'enum', ctx: { expected: "'text', 'image' or null" }, input: 'video' },
    ]);
  });
});
