/**
 * The SQL guard, over HTTP against a real server: a corpus of hostile statements (file readers,
 * COPY, ATTACH/DETACH, INSTALL/LOAD, SET/RESET/PRAGMA, DDL, DML, stacked statements, table
 * functions that list the file system, another tenant's database and schema names, the internal
 * schema) is refused one by one; afterwards the server answers, the data and the settings are as
 * they were, and no file was written. Then the second wall: the database itself, with no guard in
 * front, refuses file, network, extension and settings access.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configFromEnv } from '../src/engine/config.js';
import { TenantDb } from '../src/engine/sql/tenantDb.js';
import { DATA, init, serve, tempDir, type Server } from './helpers/cli.js';
import { client, until } from './helpers/http.js';

let dir: ReturnType<typeof tempDir>;
let server: Server;
let A: ReturnType<typeof client>;
let B: ReturnType<typeof client>;
let tenantA: string;
let tenantB: string;
let pwn: string;
let platform: ReturnType<typeof client>;

async function ingestInto(api: ReturnType<typeof client>, datasetId: string, body: string, format: string) {
  expect((await api.post('/v1/admin/datasets', { dataset_id: datasetId })).status).toBe(201);
  const res = await api.call('POST', `/v1/ingest/sources/${datasetId}/stream?format=${format}`, { body });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  const run = await until('ingest run', async () => {
    const r = (await api.get(`/v1/ingest/runs/${res.body.ingest_run_id}`)).body;
    return r.status === 'ready' || r.status === 'failed' ? r : undefined;
  });
  expect(run.ready_for.sql_search).toBe(true);
}

const query = (api: ReturnType<typeof client>, sql: string, params?: unknown[]) => api.post('/v1/sql', { sql, params });

/** What the corpus must not change: tables, their columns and rows, the settings that wall the database in. */
async function snapshot(api: ReturnType<typeof client>) {
  const res = await query(api, "SELECT (SELECT count(*) FROM logs) AS n, (SELECT string_agg(name, ',' ORDER BY name) FROM (SHOW TABLES)) AS tables, (SELECT string_agg(column_name, ',') FROM (DESCRIBE logs)) AS columns, current_setting('enable_external_access') AS external, current_setting('lock_configuration') AS locked, (SELECT sum(_line) FROM logs) AS lines");
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.records[0].metadata;
}

beforeAll(async () => {
  dir = tempDir('svc-sql-guard-');
  pwn = join(dir.path, 'pwn');
  const admin = init(dir.path);
  tenantA = admin.tenant_id;
  server = await serve(dir.path);
  A = client(server.url, { token: admin.token, tenant: tenantA });
  // a second tenant, provisioned by a platform key of the first
  const platformKey = (await A.post('/v1/admin/platform-keys', { name: 'guard' })).body.token;
  platform = client(server.url, { token: platformKey });
  tenantB = (await platform.post('/v1/platform/tenants', { name: 'other' })).body.tenant_id;
  B = client(server.url, { token: platformKey, tenant: tenantB });
  await ingestInto(A, 'logs', (await import('node:fs')).readFileSync(join(DATA, 'loghub/OpenSSH/OpenSSH_2k.log_structured.csv'), 'utf8'), 'csv');
  await ingestInto(B, 'secret', '{"password": "hunter2", "n": 1}\n{"password": "swordfish", "n": 2}\n', 'ndjson');
});

afterAll(async () => {
  await server?.stop();
  dir?.remove();
});

describe('hostile statements', () => {
  const corpus = (): { sql: string; code?: string }[] => {
    const other = join(dir.path, 'sql', `${tenantB}.duckdb`);
    const own = join(dir.path, 'sql', `${tenantA}.duckdb`);
    return [
      // file readers
      { sql: "SELECT * FROM read_csv('/etc/passwd')" },
      { sql: "SELECT * FROM read_csv_auto('/etc/passwd')" },
      { sql: "SELECT * FROM read_text('/etc/passwd')" },
      { sql: "SELECT * FROM read_blob('/etc/hostname')" },
      { sql: "SELECT * FROM read_json('/etc/passwd')" },
      { sql: "SELECT * FROM read_ndjson_objects('/etc/passwd')" },
      { sql: "SELECT * FROM read_parquet('/tmp/any.parquet')" },
      { sql: "SELECT * FROM sniff_csv('/etc/passwd')" },
      { sql: "SELECT * FROM '/etc/passwd'" },
      { sql: `SELECT * FROM '${other}'` },
      { sql: `SELECT * FROM read_duckdb('${other}')` },
      { sql: 'SELECT * FROM (SELECT * FROM read_text(\'/etc/passwd\')) t' },
      { sql: "WITH x AS (SELECT * FROM read_csv('/etc/passwd')) SELECT * FROM x" },
      { sql: "SELECT (SELECT content FROM read_text('/etc/passwd'))" },
      { sql: "SELECT * FROM logs WHERE _id IN (SELECT file FROM glob('/*'))" },
      // table functions that list the file system or the instance
      { sql: "SELECT * FROM glob('/*')" },
      { sql: `SELECT * FROM glob('${join(dir.path, 'sql')}/*')` },
      { sql: 'SELECT * FROM duckdb_extensions()' },
      { sql: 'SELECT * FROM duckdb_settings()' },
      { sql: 'SELECT * FROM duckdb_databases()' },
      { sql: 'SELECT * FROM duckdb_temporary_files()' },
      { sql: "SELECT * FROM parquet_metadata('/tmp/any.parquet')" },
      { sql: 'SELECT * FROM pragma_database_size()' },
      // SQL text run from inside SQL
      { sql: "SELECT * FROM query('SELECT * FROM read_text(''/etc/passwd'')')" },
      { sql: "SELECT * FROM query_table('logs')" },
      { sql: "SELECT * FROM json_execute_serialized_sql(json_serialize_sql('SELECT 1'))" },
      // COPY and EXPORT
      { sql: `COPY logs TO '${pwn}.csv'` },
      { sql: `COPY (SELECT * FROM logs) TO '${pwn}.parquet' (FORMAT parquet)` },
      { sql: `EXPORT DATABASE '${pwn}-db'` },
      { sql: "COPY logs FROM '/etc/passwd'" },
      // ATTACH, DETACH, USE
      { sql: `ATTACH '${other}' AS other` },
      { sql: `ATTACH '${other}' AS other (READ_ONLY)` },
      { sql: "ATTACH ':memory:' AS scratch" },
      { sql: `DETACH "${tenantA}"` },
      { sql: 'USE system' },
      // extensions
      { sql: 'INSTALL httpfs' },
      { sql: 'FORCE INSTALL httpfs' },
      { sql: 'LOAD httpfs' },
      { sql: `LOAD '${pwn}.duckdb_extension'` },
      { sql: 'UPDATE EXTENSIONS' },
      // settings
      { sql: 'SET enable_external_access = true' },
      { sql: "SET memory_limit = '100GB'" },
      { sql: 'RESET lock_configuration' },
      { sql: 'SET GLOBAL threads = 1' },
      { sql: 'SET VARIABLE x = 1' },
      { sql: 'PRAGMA enable_profiling' },
      { sql: 'PRAGMA database_list' },
      { sql: 'CALL pragma_version()' },
      { sql: 'CHECKPOINT' },
      { sql: 'VACUUM' },
      { sql: 'ANALYZE' },
      // DDL
      { sql: 'CREATE TABLE pwn AS SELECT 1 AS x' },
      { sql: 'CREATE TEMP TABLE pwn (x INT)' },
      { sql: 'CREATE VIEW pwn AS SELECT 1' },
      { sql: 'CREATE MACRO pwn(x) AS x' },
      { sql: "CREATE SECRET pwn (TYPE s3, KEY_ID 'a', SECRET 'b')" },
      { sql: 'CREATE SCHEMA pwn' },
      { sql: 'DROP VIEW logs' },
      { sql: 'DROP TABLE logs' },
      { sql: 'ALTER VIEW logs RENAME TO gone' },
      { sql: 'CREATE OR REPLACE VIEW logs AS SELECT 1 AS x' },
      // DML
      { sql: "INSERT INTO logs (_id) VALUES ('x')" },
      { sql: "UPDATE logs SET _body = 'x'" },
      { sql: 'DELETE FROM logs' },
      { sql: 'TRUNCATE logs' },
      { sql: `INSERT INTO "_svc"."logs@1" (_id) VALUES ('x')` },
      // stacked statements
      { sql: 'SELECT 1; DROP VIEW logs' },
      { sql: `SELECT count(*) FROM logs; COPY logs TO '${pwn}-2.csv'` },
      { sql: `SELECT 1; ATTACH '${other}' AS b` },
      { sql: 'SELECT 1; SELECT 2' },
      // transactions, prepared statements, plans
      { sql: 'BEGIN TRANSACTION' },
      { sql: 'PREPARE p AS SELECT 1' },
      { sql: 'EXPLAIN ANALYZE SELECT 1' },
      // the internal schema
      { sql: 'SELECT * FROM _svc.tables' },
      { sql: 'DESCRIBE _svc.tables' },
      { sql: 'SELECT * FROM "_svc"."logs@1"' },
      // another tenant's database and schema names
      { sql: `SELECT * FROM "${tenantB}".main.secret` },
      { sql: `SELECT * FROM "${tenantB}".secret` },
      { sql: `SELECT * FROM "${tenantB}"."_svc".tables` },
      { sql: 'SELECT * FROM system.main.duckdb_settings' },
      { sql: 'SELECT * FROM temp.main.pwn' },
      { sql: 'SELECT * FROM secret', code: 'sql_error' }, // not a table of this tenant at all
      // functions with effects
      { sql: "SELECT nextval('seq')" },
      { sql: 'SELECT setseed(0.5)' },
      { sql: 'SELECT sleep_ms(60000)' },
      { sql: "SELECT write_log('x')" },
      // empty
      { sql: '-- nothing' },
    ];
  };

  it('refuses each one, and the server, the data, the settings and the file system are as before', async () => {
    const before = await snapshot(A);
    const beforeB = (await query(B, 'SELECT count(*) AS n FROM secret')).body.records[0].metadata;
    const statements = corpus();
    expect(statements.length).toBeGreaterThanOrEqual(40);
    for (const { sql, code } of statements) {
      const res = await query(A, sql);
      expect([400, 422], `${sql} → ${res.status} ${JSON.stringify(res.body)}`).toContain(res.status);
      expect(res.body.detail.code, `${sql}: ${JSON.stringify(res.body)}`).toBe(code ?? 'sql_not_allowed');
      expect(typeof res.body.detail.message).toBe('string');
      expect(JSON.stringify(res.body)).not.toMatch(/root:x:0|hunter2|swordfish/);
    }
    expect((await A.get('/healthz')).body).toMatchObject({ status: 'ok' });
    expect(server.proc.exitCode).toBeNull();
    expect(await snapshot(A)).toEqual(before);
    expect(before).toMatchObject({ n: 2000, tables: 'logs', external: false, locked: true });
    expect((await query(B, 'SELECT count(*) AS n FROM secret')).body.records[0].metadata).toEqual(beforeB);
    expect(readdirSync(dir.path).filter((f) => f.startsWith('pwn'))).toEqual([]);
    expect(existsSync(join(dir.path, 'sql', `${tenantB}.duckdb`))).toBe(true);
  });

  it('shows a tenant only its own catalog', async () => {
    const res = await query(A, 'SELECT DISTINCT table_catalog FROM information_schema.tables');
    expect(res.body.records.map((r: { metadata: { table_catalog: string } }) => r.metadata.table_catalog)).toEqual([tenantA]);
    const databases = await query(A, 'SHOW DATABASES');
    expect(JSON.stringify(databases.body)).not.toContain(tenantB);
    const tables = await query(B, 'SHOW TABLES');
    expect(tables.body.records.map((r: { metadata: { name: string } }) => r.metadata.name)).toEqual(['secret']);
  });

  it('lets harmless read-only forms through', async () => {
    for (const sql of ['SHOW TABLES', 'SHOW ALL TABLES', 'DESCRIBE logs', 'SUMMARIZE logs', 'VALUES (1), (2)', 'FROM logs LIMIT 1', 'WITH x AS (SELECT 1 AS a) SELECT * FROM x', 'SELECT * FROM range(3)', 'SELECT unnest([1, 2])', "SELECT * FROM information_schema.columns WHERE table_name = 'logs'"]) {
      const res = await query(A, sql);
      expect(res.status, `${sql}: ${JSON.stringify(res.body)}`).toBe(200);
    }
  });
});

describe('a deleted tenant', () => {
  it('loses its SQL database, files and all', async () => {
    const file = join(dir.path, 'sql', `${tenantB}.duckdb`);
    expect(existsSync(file)).toBe(true);
    expect((await platform.del(`/v1/platform/tenants/${tenantB}`)).status).toBe(202);
    await until('the tenant deletion job', () => readdirSync(join(dir.path, 'sql')).some((f) => f.startsWith(tenantB)) ? undefined : true);
    expect((await query(A, 'SELECT count(*) AS n FROM logs')).body.records[0].metadata).toEqual({ n: 2000 });
  });
});

describe('the database on its own, with no guard in front', () => {
  it('refuses files, other databases, extensions and settings changes', async () => {
    const own = tempDir('svc-sql-wall-');
    const db = await TenantDb.open('ten_wall', join(own.path, 'sql', 'ten_wall.duckdb'), configFromEnv().sql);
    const conn = await db.connect();
    try {
      for (const sql of [
        "SELECT * FROM read_text('/etc/passwd')",
        "SELECT * FROM read_csv('/etc/passwd')",
        "SELECT * FROM glob('/*')",
        `COPY (SELECT 1) TO '${join(own.path, 'out.csv')}'`,
        `ATTACH '${join(own.path, 'other.duckdb')}' AS other`,
        'INSTALL httpfs',
        'LOAD httpfs',
        "SELECT * FROM read_csv('https://example.com/x.csv')",
        'SET enable_external_access = true',
        "SET memory_limit = '64GB'",
        'RESET lock_configuration',
        'SET lock_configuration = false',
      ]) {
        await expect(conn.run(sql), sql).rejects.toThrow(/Permission|disabled|locked|configuration/i);
      }
      expect(existsSync(join(own.path, 'out.csv'))).toBe(false);
      expect(existsSync(join(own.path, 'other.duckdb'))).toBe(false);
    } finally {
      conn.closeSync();
      await db.close();
      own.remove();
    }
  });
});
