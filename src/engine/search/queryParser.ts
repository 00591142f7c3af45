import { LIMITS } from '../../api/limits.js';
import { Lexer, QuerySyntaxError, type Op, type Token, type Value } from './queryLexer.js';

export { QuerySyntaxError } from './queryLexer.js';
export type { Bound, Op, Value } from './queryLexer.js';

/**
 * The `q` syntax tree. AND and OR are flat lists, AND binding tighter than OR and juxtaposition
 * meaning AND; `+` adds nothing to that and leaves no node.
 */
export type QueryNode =
  | { type: 'all' }
  | { type: 'and' | 'or'; items: QueryNode[] }
  | { type: 'not'; item: QueryNode }
  | Clause;

/** One test: `field` null for bare text (terms, phrases, /regex/ over title and body). */
export interface Clause {
  type: 'clause';
  field: string | null;
  op: Op;
  value: Value;
  pos: number;
}

/** A bound the parser enforces as it goes; `limit` names the entry of LIMITS. */
export class QueryLimitError extends Error {
  constructor(message: string, readonly limit: 'qClauses' | 'qDepth') {
    super(message);
  }
}

export interface ParseLimits {
  clauses: number;
  depth: number;
}

/**
 * Parses `q` in one pass, one token of look-ahead, and recursion only through parentheses and
 * negation, whose nesting is capped: time and memory grow with the length of `q`, and a deep q
 * is refused before it can exhaust the stack. The length cap is the caller's (compileQuery).
 */
export function parseQuery(q: string, limits: ParseLimits = { clauses: LIMITS.qClauses, depth: LIMITS.qDepth }): QueryNode {
  return new Parser(q, limits).parse();
}

class Parser {
  private readonly lexer: Lexer;
  private token: Token;
  private depth = 0;
  private clauses = 0;

  constructor(private readonly q: string, private readonly limits: ParseLimits) {
    this.lexer = new Lexer(q);
    this.token = this.lexer.next();
  }

  parse(): QueryNode {
    if (this.token.type === 'end') return { type: 'all' };
    const node = this.or();
    if ((this.token as Token).type !== 'end') throw this.unexpected(this.token.type === ')' ? 'a closing parenthesis with no opening one' : undefined);
    return node;
  }

  private advance(): Token {
    const t = this.token;
    this.token = this.lexer.next();
    return t;
  }

  private or(): QueryNode {
    const items = [this.and()];
    while (this.token.type === 'OR') {
      this.advance();
      items.push(this.and());
    }
    return items.length === 1 ? items[0] : { type: 'or', items };
  }

  private and(): QueryNode {
    const items = [this.unary()];
    for (;;) {
      const t = this.token.type;
      if (t === 'AND') this.advance();
      else if (t === 'end' || t === ')' || t === 'OR') break;
      items.push(this.unary());
    }
    return items.length === 1 ? items[0] : { type: 'and', items };
  }

  /** Prefixes are read in a loop, so `- - - x` costs no stack; each negation counts as a level. */
  private unary(): QueryNode {
    let negations = 0;
    for (;;) {
      const t = this.token.type;
      if (t === 'NOT' || t === '-') {
        negations++;
        this.enter();
      } else if (t !== '+') break;
      this.advance();
    }
    let node = this.primary();
    for (let k = 0; k < negations; k++) node = { type: 'not', item: node };
    this.depth -= negations;
    return node;
  }

  private primary(): QueryNode {
    const t = this.token;
    if (t.type === 'clause') {
      if (++this.clauses > this.limits.clauses) {
        throw new QueryLimitError(`q has more than ${this.limits.clauses} clauses (terms, phrases and field tests)`, 'qClauses');
      }
      this.advance();
      return { type: 'clause', field: t.field, op: t.op, value: t.value, pos: t.pos };
    }
    if (t.type === '(') {
      this.enter();
      this.advance();
      const unclosed = () => new QuerySyntaxError('unclosed parenthesis: this ( is never closed', t.pos);
      if (this.token.type === 'end') throw unclosed();
      // `()` matches everything, as it always has
      const node: QueryNode = this.token.type === ')' ? { type: 'all' } : this.or();
      if (this.token.type !== ')') throw unclosed();
      this.advance();
      this.depth--;
      return node;
    }
    throw this.unexpected();
  }

  private enter(): void {
    if (++this.depth > this.limits.depth) {
      throw new QueryLimitError(`q nests parentheses and NOT more than ${this.limits.depth} deep`, 'qDepth');
    }
  }

  private unexpected(why?: string): QuerySyntaxError {
    const t = this.token;
    if (t.type === 'end') {
      return new QuerySyntaxError('q ends too early: an operator (AND, OR, NOT, -) has nothing after it', t.pos);
    }
    const what = t.type === '(' || t.type === ')' ? `'${t.type}'` : t.type;
    const reason = why ?? (t.type === 'AND' || t.type === 'OR' ? `${t.type} needs a clause on each side` : 'a clause was expected');
    return new QuerySyntaxError(`unexpected ${what}: ${reason}`, t.pos);
  }
}
