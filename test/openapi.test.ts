import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Validator } from '@seriousme/openapi-schema-validator';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POLICY, policyKey } from '../src/server/policy.js';
import { SPEC_TAGS } from '../src/server/openapi.js';
import { useApp } from './helpers/app.js';

type Doc = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> }; tags?: { name: string }[] };
type Operation = { tags?: string[]; security?: Record<string, string[]>[]; parameters?: { name: string; in: string; required?: boolean }[]; responses: Record<string, any> };

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
/** `/v1/views/{view_id}` as the router names it: `/v1/views/:view_id` */
const routerPath = (path: string) => path.replace(/\{([^}]+)\}/g, ':$1');

describe('/openapi.json', () => {
  const { t, http } = useApp();
  let doc: Doc;
  beforeAll(async () => {
    const res = await http.get('/openapi.json', { token: null, tenant: null });
    expect(res.status).toBe(200);
    doc = res.body;
  });
  const operations = () => Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).filter(([m]) => METHODS.includes(m)).map(([method, op]) => ({ path, method, op, policy: POLICY[policyKey(method.toUpperCase(), routerPath(path))] })));

  it('is a valid OpenAPI 3 document', async () => {
    const result = await new Validator().validate(doc as unknown as Record<string, unknown>);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('names its error schemas ApiError and HTTPValidationError, and every error response refers to them', () => {
    expect(Object.keys(doc.components.schemas).sort()).toEqual(['ApiError', 'HTTPValidationError']);
    expect(JSON.stringify(doc)).not.toMatch(/def-\d/);
    const search = doc.paths['/v1/search'].post.responses;
    expect(search['422'].content['application/json'].schema.$ref).toBe('#/components/schemas/HTTPValidationError');
    expect(search['401'].content['application/json'].schema.$ref).toBe('#/components/schemas/ApiError');
  });

  it('declares the tenant header on tenant routes, the bearer scheme on authenticated ones and none on public ones', () => {
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    const ops = operations();
    expect(ops.length).toBeGreaterThan(50);
    for (const { path, method, op, policy } of ops) {
      const where = `${method.toUpperCase()} ${path}`;
      expect(policy, where).toBeDefined();
      const header = op.parameters?.find((p) => p.in === 'header' && p.name === 'x-service-tenant-id');
      if (policy.auth === 'tenant') expect(header?.required, where).toBe(true);
      else if (policy.auth === 'ingest') expect(header?.required, where).toBe(false);
      else expect(header, where).toBeUndefined();
      expect(op.security, where).toEqual(policy.auth === 'none' ? [] : [{ bearer: [] }]);
    }
    for (const path of ['/v1/me', '/v1/platform/tenants']) expect(doc.paths[path].get.parameters ?? []).toEqual([]);
  });

  it("tags every operation with one of the spec's groups, and lists those groups", () => {
    expect(doc.tags?.map((tag) => tag.name)).toEqual(SPEC_TAGS);
    for (const { path, method, op } of operations()) {
      expect(op.tags?.length, `${method} ${path}`).toBe(1);
      expect(SPEC_TAGS, `${method} ${path}`).toContain(op.tags![0]);
    }
    expect(doc.paths['/v1/export'].get.tags).toEqual(['Exports']);
    expect(doc.paths['/v1/views'].get.tags).toEqual(['Views']);
    expect(doc.paths['/v1/admin/query-endpoints'].get.tags).toEqual(['Query Endpoints']);
  });

  describe('a client generated from it', () => {
    // inside the project, so that the generated files resolve openapi-fetch from its node_modules
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(join(import.meta.dirname, '.openapi-client-'));
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('type-checks a typed call (the tenant header is required by the types) and lists datasets against the running server', async () => {
      writeFileSync(join(dir, 'schema.d.ts'), astToString(await openapiTS(doc as never)));
      writeFileSync(
        join(dir, 'call.ts'),
        `import createClient from 'openapi-fetch';
import type { paths } from './schema.js';

export async function datasetIds(baseUrl: string, token: string, tenant: string): Promise<string[]> {
  const client = createClient<paths>({ baseUrl, headers: { authorization: \`Bearer \${token}\` } });
  const { data, error } = await client.GET('/v1/datasets', { params: { header: { 'x-service-tenant-id': tenant } } });
  if (error) throw new Error(typeof error.detail === 'string' ? error.detail : error.detail.message);
  return data.datasets.map((d) => d.dataset_id);
}

export async function unknownDataset(baseUrl: string, token: string, tenant: string): Promise<string> {
  const client = createClient<paths>({ baseUrl, headers: { authorization: \`Bearer \${token}\` } });
  const { error, response } = await client.GET('/v1/datasets/{dataset_id}', { params: { path: { dataset_id: 'nope' }, header: { 'x-service-tenant-id': tenant } } });
  return \`\${response.status} \${typeof error?.detail === 'string' ? error.detail : ''}\`;
}

export function withoutTenant(baseUrl: string) {
  const client = createClient<paths>({ baseUrl });
  // @ts-expect-error the tenant header is a required parameter of a tenant route
  return client.GET('/v1/datasets', {});
}
`,
      );
      writeFileSync(
        join(dir, 'tsconfig.json'),
        JSON.stringify({ compilerOptions: { strict: true, noEmit: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', lib: ['es2022', 'dom'], skipLibCheck: true }, files: ['call.ts'] }),
      );
      const tsc = spawnSync(process.execPath, [join(import.meta.dirname, '..', 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(dir, 'tsconfig.json')], { encoding: 'utf8' });
      expect(tsc.stdout + tsc.stderr).toBe('');
      expect(tsc.status).toBe(0);

      expect((await http.post('/v1/admin/datasets', { dataset_id: 'typed-client' })).status).toBe(201);
      const call = await import(pathToFileURL(join(dir, 'call.ts')).href);
      expect(await call.datasetIds(t.url, t.admin.token, t.admin.tenant_id)).toContain('typed-client');
      expect(await call.unknownDataset(t.url, t.admin.token, t.admin.tenant_id)).toBe("404 dataset 'nope' not found");
    });
  });
});
