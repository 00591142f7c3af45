type DuckDB = typeof import('@duckdb/node-api');
let loaded: DuckDB | undefined;

/** @duckdb/node-api, loaded when a tenant's SQL database first opens: it takes a fifth of a second, and most commands never need it. */
export async function loadDuckDB(): Promise<DuckDB> {
  return (loaded ??= await import('@duckdb/node-api'));
}

/** The loaded module, for code that runs only on an open database. */
export function duckdb(): DuckDB {
  if (!loaded) throw new Error('DuckDB used before a database was opened');
  return loaded;
}
