import { isAbsolute } from 'node:path';
import type { TSchema } from '@sinclair/typebox';
import { ConnectorCredentials, DirectoryConfig, HttpConfig, type ConnectorKind, type ConnectorKindName } from '../../api/connectors.js';
import { validate } from '../../api/validate.js';
import { Invalid } from '../errors.js';

const SECRET_HEADERS = new Set(['authorization', 'cookie', 'proxy-authorization', 'x-api-key']);

interface KindSpec {
  id: number;
  name: string;
  description: string;
  config: TSchema;
  credentials: TSchema | null;
}

/** The built-in connector kinds; an id never changes meaning (sources store it). */
const KINDS: Record<ConnectorKindName, KindSpec> = {
  directory: {
    id: 1,
    name: 'Directory',
    description: 'Files in a directory on the server, read as they grow (tail -F: appends, rotation, truncation, new files); .gz files whole.',
    config: DirectoryConfig,
    credentials: null,
  },
  http: {
    id: 2,
    name: 'HTTP',
    description: 'A URL polled for NDJSON, JSON or CSV: headers, pagination by next link or cursor parameter, incremental by a cursor field, ETag.',
    config: HttpConfig,
    credentials: ConnectorCredentials,
  },
};

export const connectorKinds = (): ConnectorKind[] =>
  Object.entries(KINDS).map(([kind, k]) => ({
    connector_id: k.id, kind: kind as ConnectorKindName, name: k.name, description: k.description, config_schema: k.config, credentials_schema: k.credentials,
  }));

export const kindId = (kind: ConnectorKindName): number => KINDS[kind].id;

/** The kind a request names by id or name; 422 at `connector_id` when there is none. */
export function kindNamed(ref: number | string): ConnectorKindName {
  const found = Object.entries(KINDS).find(([name, k]) => k.id === ref || name === ref);
  if (found) return found[0] as ConnectorKindName;
  const msg = `unknown connector '${ref}': GET /v1/admin/connectors lists the kinds (${Object.entries(KINDS).map(([n, k]) => `${k.id} ${n}`).join(', ')})`;
  throw new Invalid(msg, [{ loc: ['body', 'connector_id'], msg, type: 'value_error', input: ref }]);
}

/** The kind's config as its schema allows (defaults filled in), every issue at `connector_config`. */
export function checkConfig(kind: ConnectorKindName, config: unknown): DirectoryConfig | HttpConfig {
  const checked = within('connector_config', () => validate(KINDS[kind].config, structuredClone(config))) as DirectoryConfig | HttpConfig;
  if (kind === 'directory') {
    const dir = checked as DirectoryConfig;
    if (!isAbsolute(dir.path)) throw atPath('connector_config', 'path', `path '${dir.path}' must be absolute`);
    dir.include ??= ['*.log'];
  }
  if (kind === 'http') {
    // what proves who is asking is a credential: stored sealed, never shown, never in the config any member reads
    const secret = Object.keys((checked as HttpConfig).headers ?? {}).find((h) => SECRET_HEADERS.has(h.toLowerCase()));
    if (secret) throw atPath('connector_config', 'headers', `header '${secret}' is a credential: give it in connector_credentials (bearer_token or headers)`);
  }
  return checked;
}

export function checkCredentials(kind: ConnectorKindName, credentials: unknown): ConnectorCredentials {
  const schema = KINDS[kind].credentials;
  if (!schema) throw atPath('connector_credentials', null, `a ${kind} connector takes no credentials`);
  return within('connector_credentials', () => validate(schema, credentials)) as ConnectorCredentials;
}

function within<T>(member: string, check: () => T): T {
  try {
    return check();
  } catch (err) {
    if (!(err instanceof Invalid)) throw err;
    const issues = err.issues.map((i) => ({ ...i, loc: ['body', member, ...i.loc.slice(1)] }));
    throw new Invalid(issues.map((i) => `${i.loc.join('.')}: ${i.msg}`).join('; '), issues);
  }
}

export function atPath(member: string, field: string | null, msg: string): Invalid {
  return new Invalid(msg, [{ loc: field === null ? ['body', member] : ['body', member, field], msg, type: 'value_error' }]);
}
