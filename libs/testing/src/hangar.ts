import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig, startProcess, type HangarConfig, type HangarModule, type ServiceName } from '@hangar/platform';
import { createStorageProvider, type Migration, type ServiceDatabase, type StorageProvider } from '@hangar/storage';
import { mergeTrees, type ConfigTree } from './config-tree.js';
import { startDistributed } from './distributed.js';
import { TEST_KAFKA_BROKERS, TEST_REDIS_URL, type EngineName } from './engines.js';
import { pgliteMigratedSeed, pgliteSeed } from './pglite-seed.js';
import { dropSchemas, TEST_POSTGRES_URL, uniqueSchemaPrefix } from './postgres.js';
import { timedStartUp } from './start-up-clock.js';

export const TEST_TOKEN = 'test-token-0123456789abcdef';

/**
 * The shape {@link startHangar} starts: `all-in-one` (every module in the test process) or, with
 * HANGAR_TEST_TOPOLOGY=split, `split` (every service its own process on PostgreSQL, Redis and Kafka,
 * run from the JavaScript that `tools/test-build.ts` builds into {@link TEST_BUILD_DIR}).
 */
export const TEST_TOPOLOGY: 'all-in-one' | 'split' = process.env.HANGAR_TEST_TOPOLOGY === 'split' ? 'split' : 'all-in-one';
/**
 * How many gateways and how many run executors the split shape runs (HANGAR_TEST_SPLIT_REPLICAS, 1 by
 * default): with two, requests alternate between the gateways and runs between the executors, so
 * a test passes only if no answer depends on which process served the request before.
 */
export const TEST_SPLIT_REPLICAS = Number(process.env.HANGAR_TEST_SPLIT_REPLICAS ?? 1);
export const TEST_BUILD_DIR = fileURLToPath(new URL('../../../.hangar/test-build', import.meta.url));

/** The modules of `fixtures/`, which test configurations name. */
export const FIXTURE_NAMES = ['code-agents', 'run-authorization', 'authorization-policy', 'role-policies'] as const;
/** A fixture module: its TypeScript source in one process; in the split shape, compiled beside the built services. */
const fixture = (name: (typeof FIXTURE_NAMES)[number]) =>
  TEST_TOPOLOGY === 'split'
    ? join(TEST_BUILD_DIR, 'fixtures', `${name}.js`)
    : fileURLToPath(new URL(`./fixtures/${name}.ts`, import.meta.url));
export const FIXTURE_CODE_AGENTS = fixture('code-agents');
export const FIXTURE_RUN_AUTHORIZATION = fixture('run-authorization');
export const FIXTURE_AUTHORIZATION_POLICY = fixture('authorization-policy');
export const FIXTURE_ROLE_POLICIES = fixture('role-policies');

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
  /** The first gateway's API. */
  url: string;
  /** Every gateway's API (one in one process; split, {@link TEST_SPLIT_REPLICAS}). */
  urls: string[];
  /** The configuration its processes loaded (less the split shape's ports). */
  config: HangarConfig;
  /** On PostgreSQL: the prefix of its service schemas (`<prefix>_runs`, `<prefix>_governance`, …), for tests that look at rows. */
  schemaPrefix?: string;
  /** A service's own database, for tests that look at rows (closed by `stop`). */
  openStore<DB>(service: string, migrations: Record<string, Migration>): Promise<ServiceDatabase<DB>>;
  /** Where a service answers gRPC. */
  addressOf(service: ServiceName): string;
  /** Split, with Services:RunExecutor:MetricsPort set: where each run executor serves its metrics. */
  runExecutorMetricsPorts: number[];
  /** Split with several gateways, each request goes to the next one in turn. */
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
 * Starts Hangar on free ports in the {@link TEST_TOPOLOGY} shape: every module (or the ones given) in
 * this test process on an in-memory PGlite or on fresh schemas of the real PostgreSQL; or, split,
 * every service its own process on fresh schemas of the real PostgreSQL, Redis and Kafka.
 */
export async function startHangar(options: {
  engine?: EngineName;
  overrides?: ConfigTree;
  modules: HangarModule[];
  /** On PostgreSQL: the schemas of an earlier instance, to start again on its data (the caller drops them). */
  schemaPrefix?: string;
}): Promise<HangarUnderTest> {
  const base = {
    Logging: { Level: 'warn' },
    Gateway: { Port: 0 },
    Providers: TEST_PROVIDERS,
    CodeAgents: { Modules: [FIXTURE_CODE_AGENTS] },
    Hangar: { Api: { AuthToken: TEST_TOKEN } },
  };
  const tree = mergeTrees(base, options.overrides ?? {});
  return timedStartUp(() => (TEST_TOPOLOGY === 'split' ? startSplit(tree, options.schemaPrefix) : startInProcess(tree, options)));
}

async function startInProcess(
  tree: ConfigTree,
  options: { engine?: EngineName; modules: HangarModule[]; schemaPrefix?: string },
): Promise<HangarUnderTest> {
  const engine = options.engine ?? 'pglite';
  const schemaPrefix = options.schemaPrefix ?? uniqueSchemaPrefix();
  const stores =
    engine === 'postgres'
      ? { Postgres: { ConnectionString: TEST_POSTGRES_URL, SchemaName: schemaPrefix } }
      : { Embedded: { DataDir: 'memory://' } };
  const config = loadConfig({ env: {}, overrides: mergeTrees({ Stores: stores }, tree) });
  const running = await startProcess({
    name: 'test',
    config,
    modules: options.modules,
    embeddedSeed: pgliteMigratedSeed() ?? pgliteSeed(),
  });
  const port = running.modules.running.get('Gateway')?.httpPort;
  const url = `http://127.0.0.1:${port}${config.Hangar.Api.Prefix}`;
  return {
    url,
    urls: [url],
    config,
    schemaPrefix: engine === 'postgres' ? schemaPrefix : undefined,
    openStore: (service, migrations) => running.engines.storage.open(service, migrations),
    addressOf: (service) => running.modules.running.get(service)!.address!,
    runExecutorMetricsPorts: [],
    request: (method, path, requestOptions) => httpRequest(url, method, path, requestOptions),
    async stop() {
      await running.stop();
      if (engine === 'postgres' && !options.schemaPrefix) await dropSchemas(schemaPrefix);
    },
  };
}

/** The split shape, always on PostgreSQL, Redis (a channel prefix of its own) and Kafka (topics of its own). */
async function startSplit(tree: ConfigTree, sharedSchemaPrefix: string | undefined): Promise<HangarUnderTest> {
  const schemaPrefix = sharedSchemaPrefix ?? uniqueSchemaPrefix();
  const unique = randomBytes(5).toString('hex');
  // The machine's engines under names of this shape's own, unless the test names others (a private
  // Redis it stops, a counter shared by two shapes, a database URL with a password).
  const withEngines = mergeTrees(
    {
      Stores: { Postgres: { ConnectionString: TEST_POSTGRES_URL, SchemaName: schemaPrefix } },
      Redis: { ConnectionString: TEST_REDIS_URL, ChannelPrefix: `t_${unique}:` },
      Kafka: { Brokers: TEST_KAFKA_BROKERS, TopicPrefix: `t_${unique}.` },
    },
    tree,
  );
  const config = loadConfig({ env: {}, overrides: withEngines });
  const hangar = await startDistributed({
    config: withEngines,
    schemaPrefix,
    builtDir: TEST_BUILD_DIR,
    gateways: TEST_SPLIT_REPLICAS,
    runExecutors: TEST_SPLIT_REPLICAS,
  });
  const urls = hangar.urls.map((gateway) => `${gateway}${config.Hangar.Api.Prefix}`);
  let storage: Promise<StorageProvider> | undefined;
  let turn = 0;
  return {
    url: urls[0],
    urls,
    config,
    schemaPrefix,
    async openStore(service, migrations) {
      storage ??= createStorageProvider({
        postgresConnectionString: TEST_POSTGRES_URL,
        schemaPrefix,
        embeddedDataDir: 'memory://',
        autoApplyMigrations: false,
        commandTimeoutSeconds: 30,
      });
      return (await storage).open(service, migrations);
    },
    addressOf: (service) => hangar.addressOf(service),
    runExecutorMetricsPorts: hangar.runExecutorMetricsPorts,
    async request(method, path, requestOptions) {
      const answer = await httpRequest(urls[turn++ % urls.length], method, path, requestOptions);
      if (answer.status === 500) console.error(`${method} ${path} answered 500; the processes said:\n${logOf500(hangar, answer)}`);
      return answer;
    },
    async stop() {
      await (await storage)?.close();
      await hangar.cleanup();
      if (!sharedSchemaPrefix) await dropSchemas(schemaPrefix);
    },
  };
}

/**
 * What the split shape's processes logged about a 500 (its trace, else their last errors): the
 * answer only quotes a traceId, and a failed test is the one moment that log is wanted.
 */
function logOf500(hangar: Awaited<ReturnType<typeof startDistributed>>, answer: HttpResult): string {
  const traceId = typeof answer.body?.traceId === 'string' ? answer.body.traceId : undefined;
  return [...hangar.processes.keys()]
    .flatMap((name) => {
      const lines = hangar.output(name).split('\n');
      const about = traceId ? lines.filter((line) => line.includes(traceId)) : [];
      const shown = about.length ? about : lines.filter((line) => /"level":(50|60)/.test(line)).slice(-3);
      return shown.map((line) => `${name}: ${line.slice(0, 4000)}`);
    })
    .join('\n');
}
