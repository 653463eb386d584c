import { fileURLToPath } from 'node:url';
import { loadConfig, startProcess, type HangarModule, type RunningProcess } from '@hangar/platform';
import { dropSchemas, TEST_POSTGRES_URL, uniqueSchemaPrefix } from './postgres.js';
import type { EngineName } from './engines.js';

export const TEST_TOKEN = 'test-token-0123456789abcdef';
export const FIXTURE_CODE_AGENTS = fileURLToPath(new URL('./fixtures/code-agents.ts', import.meta.url));
export const FIXTURE_RUN_AUTHORIZATION = fileURLToPath(new URL('./fixtures/run-authorization.ts', import.meta.url));
export const FIXTURE_AUTHORIZATION_POLICY = fileURLToPath(new URL('./fixtures/authorization-policy.ts', import.meta.url));
export const FIXTURE_ROLE_POLICIES = fileURLToPath(new URL('./fixtures/role-policies.ts', import.meta.url));

/** Providers every e2e test can bind agents to. */
export const TEST_PROVIDERS = {
  demo: { Kind: 'Demo', DefaultModel: 'echo' },
  catalogued: { Kind: 'OpenAICompatible', Endpoint: 'http://127.0.0.1:9/v1', Models: { 'listed-model': { ContextWindowTokens: 8192 } } },
};

export interface HttpResult {
  status: number;
  headers: Headers;
  text: string;
  /** Parsed JSON body (undefined when empty or not JSON). */
  body: any;
}

export interface RequestOptions {
  body?: unknown;
  /** Sent verbatim (for malformed bodies). */
  rawBody?: string;
  token?: string | null;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

export interface HangarUnderTest {
  url: string;
  process: RunningProcess;
  /** On PostgreSQL: the prefix of its service schemas (`<prefix>_runs`, `<prefix>_governance`, …), for tests that look at rows. */
  schemaPrefix?: string;
  request(method: string, path: string, options?: RequestOptions): Promise<HttpResult>;
  stop(): Promise<void>;
}

export async function httpRequest(baseUrl: string, method: string, path: string, options: RequestOptions = {}): Promise<HttpResult> {
  const headers: Record<string, string> = { ...options.headers };
  const token = options.token === undefined ? TEST_TOKEN : options.token;
  if (token) headers.authorization ??= `Bearer ${token}`;
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(`${baseUrl}${path}`, { method, headers, body, signal: options.signal });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, text, body: parsed };
}

/**
 * Starts Hangar in this test process on free ports: every module (or the ones given) on an
 * in-memory PGlite, or on fresh schemas of the real PostgreSQL.
 */
export async function startHangar(options: {
  engine?: EngineName;
  overrides?: Record<string, unknown>;
  modules: HangarModule[];
  /** On PostgreSQL: the schemas of an earlier instance, to start again on its data (the caller drops them). */
  schemaPrefix?: string;
}): Promise<HangarUnderTest> {
  const engine = options.engine ?? 'pglite';
  const schemaPrefix = options.schemaPrefix ?? uniqueSchemaPrefix();
  const stores =
    engine === 'postgres'
      ? { Postgres: { ConnectionString: TEST_POSTGRES_URL, SchemaName: schemaPrefix } }
      : { Embedded: { DataDir: 'memory://' } };
  const base = {
    Logging: { Level: 'warn' },
    Gateway: { Port: 0 },
    Stores: stores,
    Providers: TEST_PROVIDERS,
    CodeAgents: { Modules: [FIXTURE_CODE_AGENTS] },
    Hangar: { Api: { AuthToken: TEST_TOKEN } },
  };
  const config = loadConfig({ env: {}, overrides: deepMerge(base, options.overrides ?? {}) });
  const running = await startProcess({ name: 'test', config, modules: options.modules });
  const port = running.modules.running.get('Gateway')?.httpPort;
  const url = `http://127.0.0.1:${port}${config.Hangar.Api.Prefix}`;
  return {
    url,
    process: running,
    schemaPrefix: engine === 'postgres' ? schemaPrefix : undefined,
    request: (method, path, requestOptions) => httpRequest(url, method, path, requestOptions),
    async stop() {
      await running.stop();
      if (engine === 'postgres' && !options.schemaPrefix) await dropSchemas(schemaPrefix);
    },
  };
}

function deepMerge(base: Record<string, any>, over: Record<string, any>): Record<string, any> {
  const result = { ...base };
  for (const [key, value] of Object.entries(over)) {
    result[key] =
      value && typeof value === 'object' && !Array.isArray(value) && typeof base[key] === 'object' ? deepMerge(base[key], value) : value;
  }
  return result;
}
