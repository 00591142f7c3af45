import type { DuckDBConnection } from '@duckdb/node-api';
import { Refused } from '../errors.js';
import { INTERNAL_SCHEMA } from './schema.js';

/** Table functions that only compute: none reads a file, a setting, another database or SQL text. */
const TABLE_FUNCTIONS = new Set(['range', 'generate_series', 'unnest', 'json_each', 'json_tree']);
/** Scalar functions with an effect beyond their result (sequences, the session's random seed, the log, a blocked thread). */
const REFUSED_FUNCTIONS = new Set(['nextval', 'currval', 'setseed', 'write_log', 'sleep_ms']);
/** Catalog views of the tenant's own database. */
const CATALOG_SCHEMAS = new Set(['information_schema', 'pg_catalog']);
/** A dataset id: anything else in the main schema (a file path, say) is not a table of the tenant's. */
const DATASET_TABLE = /^[a-z0-9][a-z0-9_-]{0,62}$/i;

export const notAllowed = (message: string) => new Refused(message, 'sql_not_allowed', 422);

const ONE_READ = 'one read-only statement is allowed: SELECT, WITH … SELECT, VALUES, DESCRIBE or SHOW';

export interface CheckedStatement {
  /** the dataset tables the statement names (lower case): where a row's `_id` is looked up */
  datasets: string[];
}

type Node = Record<string, unknown>;

/** Checks already made, by database and statement text: the answer depends on nothing else. */
const checked = new Map<string, CheckedStatement>();
const CHECKED_MAX = 1000;

/**
 * Decides whether a statement may run, before it is prepared. DuckDB parses it: it must be one
 * statement, and `json_serialize_sql` must give its syntax tree (it serializes SELECT statements
 * only, so any other kind of statement is refused there); the tree may read only the tenant's
 * dataset tables, CTEs and catalog views, and call no table function beyond a few generators. The
 * database refuses file, network and extension access and configuration changes on its own, so
 * this check is the first of two walls, not the only one.
 */
export async function checkStatement(conn: DuckDBConnection, sql: string, catalog: string): Promise<CheckedStatement> {
  const key = `${catalog}\u0000${sql}`;
  let result = checked.get(key);
  if (result) {
    checked.delete(key); // most recently used last
  } else {
    result = await check(conn, sql, catalog.toLowerCase());
    if (checked.size >= CHECKED_MAX) checked.delete(checked.keys().next().value!);
  }
  checked.set(key, result);
  return result;
}

async function check(conn: DuckDBConnection, sql: string, catalog: string): Promise<CheckedStatement> {
  let count: number;
  try {
    count = (await conn.extractStatements(sql)).count; // parses, runs nothing
  } catch (err) {
    const message = (err as Error).message;
    // with no statement at all (blank, comments, `;`) the binding fails without a parser message
    if (!message.includes('Parser Error')) throw notAllowed(`the request holds no statement: ${ONE_READ}`);
    throw new Refused(message.replace(/^Failed to extract statements: /, ''), 'sql_syntax_error', 400);
  }
  if (count !== 1) throw notAllowed(count === 0 ? `the request holds no statement: ${ONE_READ}` : `${ONE_READ}; this request holds ${count}`);
  // a literal, not a parameter: DuckDB string literals know no escapes but the doubled quote
  const reader = await conn.runAndReadAll(`SELECT json_serialize_sql('${sql.replaceAll("'", "''")}')::VARCHAR AS ast`);
  const ast = JSON.parse(String(reader.getRows()[0][0])) as { error?: boolean; error_type?: string; error_message?: string; statements?: Node[] };
  if (ast.error) {
    if (ast.error_type === 'parser') throw new Refused(`Parser Error: ${ast.error_message}`, 'sql_syntax_error', 400);
    throw notAllowed(`${firstWord(sql)} is not allowed: ${ONE_READ}`);
  }
  const statements = ast.statements ?? [];
  if (statements.length !== 1) throw notAllowed(`${ONE_READ}; this request holds ${statements.length}`);
  return inspect(statements[0], catalog);
}

/** The statement's first keyword, for the message (the parser has already said it is no SELECT). */
function firstWord(sql: string): string {
  const word = /^(?:\s|--[^\n]*\n?|\/\*[\s\S]*?\*\/|\()*([A-Za-z_]+)/.exec(sql)?.[1];
  return word ? word.toUpperCase() : 'this statement';
}

function inspect(root: Node, catalog: string): CheckedStatement {
  const ctes = new Set<string>();
  const tables: Node[] = [];
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object') continue;
    if (Array.isArray(node)) {
      for (const item of node) stack.push(item);
      continue;
    }
    const n = node as Node;
    const map = (n.cte_map as { map?: { key: unknown }[] } | undefined)?.map;
    if (map) for (const entry of map) ctes.add(String(entry.key).toLowerCase());
    if (n.type === 'BASE_TABLE') tables.push(n);
    if (n.type === 'TABLE_FUNCTION') {
      const name = String((n.function as Node | undefined)?.function_name ?? '').toLowerCase();
      if (!TABLE_FUNCTIONS.has(name)) throw notAllowed(`table function ${name}() is not available; only ${[...TABLE_FUNCTIONS].join(', ')}`);
    }
    if (n.class === 'FUNCTION' && REFUSED_FUNCTIONS.has(String(n.function_name).toLowerCase())) throw notAllowed(`function ${String(n.function_name)}() is not available`);
    for (const key in n) if (n[key] !== null && typeof n[key] === 'object') stack.push(n[key]);
  }
  const datasets = new Set<string>();
  for (const table of tables) {
    const name = String(table.table_name ?? '');
    const schema = String(table.schema_name ?? '').toLowerCase();
    const owner = String(table.catalog_name ?? '').toLowerCase();
    if (owner !== '' && owner !== catalog) throw notAllowed(`database '${String(table.catalog_name)}' is not reachable: a statement reads its own tenant's datasets`);
    if (schema === '' && owner === '' && ctes.has(name.toLowerCase())) continue;
    if (schema === '' || schema === 'main') {
      if (!DATASET_TABLE.test(name)) throw notAllowed(`'${name}' is not a dataset table: SHOW TABLES lists them`);
      datasets.add(name.toLowerCase());
    } else if (!CATALOG_SCHEMAS.has(schema)) {
      throw notAllowed(`schema '${String(table.schema_name)}' is not reachable${schema === INTERNAL_SCHEMA ? ' (it is internal)' : ''}: tables are the tenant's datasets, SHOW TABLES lists them`);
    }
  }
  return { datasets: [...datasets] };
}
