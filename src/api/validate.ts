import { FormatRegistry, type Static, type TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck, type ValueError } from '@sinclair/typebox/compiler';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import { Invalid } from './errors.js';
import { LIMITS } from './limits.js';

// the formats the schemas use, checked as the HTTP door's ajv-formats checks them
const dateTime = fullFormats['date-time'] as { validate: (v: string) => boolean };
if (!FormatRegistry.Has('date-time')) FormatRegistry.Set('date-time', (v) => dateTime.validate(v));

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>();

/**
 * Checks a request against its schema the way the HTTP door does, for the doors that have no
 * framework validation (local CLI): the same schema, the same 422-shaped issues.
 */
export function validate<T extends TSchema>(schema: T, value: unknown, location: 'body' | 'query' = 'body'): Static<T> {
  let check = compiled.get(schema);
  if (!check) compiled.set(schema, (check = TypeCompiler.Compile(schema)));
  if (check.Check(value)) return value as Static<T>;
  const errors: ValueError[] = [];
  for (const e of check.Errors(value)) if (errors.push(choices(e.schema) ? e : within(e)) >= LIMITS.validationIssues) break;
  const issues = errors.map((e) => {
    const loc = [location, ...e.path.split('/').slice(1).map((p) => (/^\d+$/.test(p) ? Number(p) : p))];
    // a value none of a union's literals (or null) is: one issue that lists them, as the HTTP door says it
    const allowed = choices(e.schema);
    if (allowed) return { loc, msg: `Input should be ${allowed}`, type: 'enum', ctx: { expected: allowed }, input: e.value };
    return { loc, msg: e.message, type: 'value_error', input: e.value };
  });
  throw new Invalid(issues.map((i) => `${i.loc.join('.')}: ${i.msg}`).join('; '), issues);
}

const JSON_TYPE = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'number' ? 'number' : typeof v);

/**
 * A value that fails a union (a string or null, say) fails the member of its own type the way that
 * matters — too long, too many — and that is the error to report, not "Expected union value".
 */
function within(e: ValueError): ValueError {
  for (const variant of e.errors) {
    const inner = variant.First();
    const type = inner?.schema.type === 'integer' ? 'number' : inner?.schema.type;
    if (inner && type === JSON_TYPE(e.value)) return within(inner);
  }
  return e;
}

/** `'a', 'b' or null` when the schema is a union of literals (and null), else undefined. */
function choices(schema: TSchema): string | undefined {
  const flat = (s: TSchema): string[] | undefined => {
    if (Array.isArray(s.anyOf)) {
      const parts = (s.anyOf as TSchema[]).map(flat);
      return parts.every((p) => p) ? parts.flat() as string[] : undefined;
    }
    if (s.const !== undefined) return [typeof s.const === 'string' ? `'${s.const}'` : JSON.stringify(s.const)];
    return s.type === 'null' ? ['null'] : undefined;
  };
  const all = Array.isArray(schema.anyOf) ? flat(schema) : undefined;
  if (!all?.length) return undefined;
  return all.length < 2 ? all[0] : `${all.slice(0, -1).join(', ')} or ${all.at(-1)}`;
}
