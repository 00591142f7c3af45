/** Seeded generation of hostile requests from an OpenAPI document: same seed, same requests. */

type Schema = Record<string, any>;

export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class Fuzz {
  constructor(private readonly random: () => number) {}

  int(n: number): number {
    return Math.floor(this.random() * n);
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }

  chance(p: number): boolean {
    return this.random() < p;
  }

  /** A string meant to hurt: huge, deep, encoded oddly, or just wrong. */
  nasty(): string {
    return this.pick([
      () => 'x'.repeat(this.pick([300, 5000, 70_000])),
      () => '../'.repeat(this.int(50) + 1) + 'etc/passwd',
      () => '..',
      () => 'a\u0000b',
      () => '%00%2e%2e%2f' + '%'.repeat(this.int(5)),
      () => '\ud800' + 'é'.repeat(this.int(100)),
      () => '('.repeat(this.pick([40, 3000])) + 'a',
      () => '"'.repeat(this.int(200)),
      () => 'a:'.repeat(this.pick([100, 3000])),
      () => Array.from({ length: this.pick([10, 2000]) }, (_, i) => `t${i}`).join(' OR '),
      () => '*?'.repeat(this.pick([10, 2000])),
      () => '/(a+)+$/',
      () => '[1 TO ' + '9'.repeat(400),
      () => String(this.pick([-1, 0, 2 ** 53, 1e308, NaN])),
      () => 'SELECT ' + "repeat('a', 100000000)",
      () => '',
    ])();
  }

  /** JSON text nested `depth` deep, as arrays or objects (deeper than JSON.stringify could write). */
  deepJson(depth: number): string {
    return this.chance(0.5) ? '['.repeat(depth) + '1' + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
  }

  /** Nested `depth` deep, as arrays or objects. */
  deep(depth: number): unknown {
    let v: unknown = 1;
    const asObject = this.chance(0.5);
    for (let i = 0; i < depth; i++) v = asObject ? { a: v } : [v];
    return v;
  }

  /** A value of the schema's shape most of the time, and anything else some of the time. */
  value(schema: Schema | undefined, known: Record<string, string[]>, name = '', level = 0): unknown {
    if (!schema || level > 6) return this.nasty();
    if (this.chance(0.12)) return this.pick([() => this.nasty(), () => this.deep(this.pick([50, 1500])), () => null, () => 12, () => true, () => [], () => ({}), () => Array(this.pick([2000, 100_000])).fill('v')])();
    if (schema.anyOf || schema.oneOf) return this.value(this.pick(schema.anyOf ?? schema.oneOf), known, name, level);
    if (schema.enum) return this.pick(schema.enum);
    if (schema.const !== undefined) return schema.const;
    const type = Array.isArray(schema.type) ? this.pick(schema.type) : schema.type;
    switch (type) {
      case 'string':
        if (known[name]?.length && this.chance(0.7)) return this.pick(known[name]);
        return this.chance(0.5) ? `v${this.int(1000)}` : this.nasty();
      case 'integer':
      case 'number':
        return this.pick([0, 1, 5, 20, -3, 999_999_999, 1.5]);
      case 'boolean':
        return this.chance(0.5);
      case 'array': {
        const n = this.pick([0, 1, 3]);
        return Array.from({ length: n }, () => this.value(schema.items, known, name, level + 1));
      }
      case 'object': {
        const out: Record<string, unknown> = {};
        for (const [key, sub] of Object.entries<Schema>(schema.properties ?? {})) {
          if ((schema.required ?? []).includes(key) || this.chance(0.5)) out[key] = this.value(sub, known, key, level + 1);
        }
        if (this.chance(0.05)) out[this.nasty().slice(0, 300)] = 1;
        return out;
      }
      default:
        return this.nasty();
    }
  }
}
