import type { Static, TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { Invalid } from '../engine/errors.js';
import { LIMITS } from './limits.js';

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>();

/**
 * Checks a request against its schema the way the HTTP door does, for the doors that have no
 * framework validation (local CLI): the same schema, the same 422-shaped issues.
 */
export function validate<T extends TSchema>(schema: T, value: unknown, location: 'body' | 'query' = 'body'): Static<T> {
  let check = compiled.get(schema);
  if (!check) compiled.set(schema, (check = TypeCompiler.Compile(schema)));
  if (check.Check(value)) return value as Static<T>;
  const errors = [];
  for (const e of check.Errors(value)) if (errors.push(e) >= LIMITS.validationIssues) break;
  const issues = errors.map((e) => ({
    loc: [location, ...e.path.split('/').slice(1).map((p) => (/^\d+$/.test(p) ? Number(p) : p))],
    msg: e.message,
    type: 'value_error',
    input: e.value,
  }));
  throw new Invalid(issues.map((i) => `${i.loc.join('.')}: ${i.msg}`).join('; '), issues);
}
