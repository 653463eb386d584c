import { randomBytes } from 'node:crypto';
import { allInOneModules } from '@hangar/all-in-one';
import {
  eventually,
  freePort,
  parsePrometheusText,
  httpRequest,
  sampleSum,
  startHangar,
  startMockOpenAI,
  TEST_POSTGRES_URL,
  TEST_TOPOLOGY,
  type HangarUnderTest,
  type MockOpenAI,
} from '@hangar/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** API.md "Operations": /metrics, GET /api/models/health, GET /api/diagnostics. */

const METRICS_TOKEN = 'metrics-token-0123456789';

let mock: MockOpenAI;
let hangar: HangarUnderTest;

const scrape = async (token: string | null = METRICS_TOKEN, gateway = hangar.url) => {
  const response = await fetch(`${gateway}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  return { status: response.status, contentType: response.headers.get('content-type'), text: await response.text() };
};
/**
 * On the split shape each run executor is a process of its own: it serves its series (runs, model
 * calls, its gRPC server) on Services:RunExecutor:MetricsPort, and the gateway only its own.
 */
let runExecutorMetricsPort: number | undefined;
/** Every series the shape serves: every gateway's, and on the split shape every run executor's beside them. */
async function scrapeFamilies(gateway?: Awaited<ReturnType<typeof scrape>>) {
  gateway ??= await scrape();
  expect(gateway.status).toBe(200);
  const families = parsePrometheusText(gateway.text);
  const others = [...hangar.urls.slice(1), ...hangar.runExecutorMetricsPorts.map((port) => `http://127.0.0.1:${port}`)];
  for (const url of others) {
    const other = await scrape(METRICS_TOKEN, url);
    expect(other.status).toBe(200);
    for (const [name, family] of parsePrometheusText(other.text)) {
      const known = families.get(name);
      if (known) known.samples.push(...family.samples);
      else families.set(name, family);
    }
  }
  return families;
}
const runAgent = (name: string) => hangar.request('POST', `/api/agents/${name}/run`, { body: { message: 'hello' } });
// A circuit is a run executor's own: the circuit's runs and its health go through the first gateway, which calls the first executor.
const runOnFirst = (name: string) => httpRequest(hangar.url, 'POST', `/api/agents/${name}/run`, { body: { message: 'hello' } });
const healthOf = async (model: string) =>
  ((await httpRequest(hangar.url, 'GET', '/api/models/health')).body as any[]).find((entry) => entry.model === model);

beforeAll(async () => {
  mock = await startMockOpenAI();
  if (TEST_TOPOLOGY === 'split') runExecutorMetricsPort = await freePort();
  hangar = await startHangar({
    modules: allInOneModules(),
    overrides: {
      Providers: { mock: { Kind: 'OpenAICompatible', Endpoint: mock.url, Timeout: '2s' } },
      Hangar: { Api: { MetricsToken: METRICS_TOKEN } },
      // Long enough that a loaded machine still reads the circuit open between the second failure and the health call.
      CircuitBreaker: { FailureThreshold: 2, BreakDuration: '1500ms' },
      Health: { CacheTtl: '0s' },
      Observability: { EnableJobQueueDepthGauge: true, JobQueueDepthRefreshInterval: '100ms' },
      ...(runExecutorMetricsPort !== undefined && { Services: { RunExecutor: { MetricsPort: runExecutorMetricsPort } } }),
    },
  });
  for (const [name, model] of [
    ['echo', { provider: 'demo', model: 'echo' }],
    ['counted', { provider: 'mock', model: 'counted' }],
    ['flaky', { provider: 'mock', model: 'flaky' }],
  ] as const) {
    expect((await hangar.request('POST', '/api/agents', { body: { name, model } })).status).toBe(201);
  }
  mock.script('counted', [{ text: 'counted answer', usage: { prompt: 11, completion: 3 } }]);
});

afterAll(async () => {
  await hangar?.stop();
  await mock?.close();
});

describe('/metrics', () => {
  it('refuses a scrape without the metrics token, and one with another credential', async () => {
    expect((await scrape(null)).status).toBe(401);
    expect((await scrape('test-token-0123456789abcdef')).status).toBe(401);
  });

  it('is valid Prometheus text whose run series count the runs made through the gateway', async () => {
    const before = await scrapeFamilies();
    const completed = (families: typeof before) => sampleSum(families, 'hangar_runs_finished_total', { status: 'Completed' });
    for (const agent of ['echo', 'counted', 'counted']) expect((await runAgent(agent)).status).toBe(200);

    const response = await scrape();
    expect(response.status).toBe(200);
    expect(response.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    const after = await scrapeFamilies(response);
    expect(after.get('hangar_runs_started_total')?.type).toBe('counter');
    expect(after.get('hangar_run_duration_seconds')?.type).toBe('histogram');
    expect(sampleSum(after, 'hangar_runs_started_total') - sampleSum(before, 'hangar_runs_started_total')).toBe(3);
    expect(completed(after) - completed(before)).toBe(3);
    expect(sampleSum(after, 'hangar_run_duration_seconds_count') - sampleSum(before, 'hangar_run_duration_seconds_count')).toBe(3);
    expect(
      sampleSum(after, 'hangar_run_time_to_first_token_seconds_count') - sampleSum(before, 'hangar_run_time_to_first_token_seconds_count'),
    ).toBe(3);
    const mockTokens = (families: typeof before, kind: string) => sampleSum(families, 'hangar_tokens_total', { kind });
    expect(mockTokens(after, 'output') - mockTokens(before, 'output')).toBeGreaterThanOrEqual(6);
    const calls = (families: typeof before) =>
      sampleSum(families, 'hangar_model_call_duration_seconds_count', { provider: 'mock', model: 'counted', outcome: 'success' });
    expect(calls(after) - calls(before)).toBe(2);
    // Route patterns, never raw paths; and each gRPC method by name.
    expect(sampleSum(after, 'hangar_http_server_duration_seconds_count', { route: '/api/agents/:name/run', status: '200' })).toBe(3);
    expect(
      sampleSum(after, 'hangar_grpc_server_duration_seconds_count', { method: '/hangar.v1.RunExecutorService/StartRun', code: 'OK' }),
    ).toBeGreaterThanOrEqual(3);
  });
});

describe('GET /api/models/health', () => {
  it('turns Unhealthy after failures (open circuit) and Healthy again once the model answers', async () => {
    expect(await healthOf('flaky')).toBeUndefined();
    mock.script('flaky', [{ status: 500 }, { status: 500 }, { text: 'back' }]);
    // Each run streams its failure as an error frame.
    for (let attempt = 0; attempt < 2; attempt += 1) expect((await runOnFirst('flaky')).text).toContain('provider_unavailable');
    const broken = await healthOf('flaky');
    expect(broken).toMatchObject({ provider: 'mock', status: 'Unhealthy', circuit: 'Open', lastSuccessAt: null, latencyMsP50: null });
    expect(Date.parse(broken.lastFailureAt)).not.toBeNaN();

    // After BreakDuration the circuit lets a trial through; it succeeds and closes the circuit.
    await eventually(async () => (await healthOf('flaky')).circuit === 'HalfOpen' || undefined, 'a half-open circuit', 5000);
    expect((await runOnFirst('flaky')).text).toContain('event: done');
    const recovered = await healthOf('flaky');
    expect(recovered).toMatchObject({ status: 'Healthy', circuit: 'Closed' });
    expect(recovered.latencyMsP50).toBeGreaterThanOrEqual(0);
    expect(Date.parse(recovered.checkedAt)).toBeGreaterThanOrEqual(Date.parse(recovered.lastSuccessAt));
    expect((await runOnFirst('echo')).status).toBe(200);
    expect(await healthOf('echo')).toMatchObject({ provider: 'demo', status: 'Healthy' });
  });
});

describe('GET /api/diagnostics', () => {
  it('answers 404 while EnableDiagnosticsEndpoint is off', async () => {
    const response = await hangar.request('GET', '/api/diagnostics');
    expect(response.status).toBe(404);
    expect(response.body.errorType).toBe('not_found');
  });

  it('shows engines, services, queues and configuration, with no secret anywhere in the body', async () => {
    const secrets = {
      token: `tok-${randomBytes(12).toString('hex')}`,
      metricsToken: `met-${randomBytes(12).toString('hex')}`,
      apiKey: `sk-${randomBytes(12).toString('hex')}`,
      tenantProviderKey: `sk-tenant-${randomBytes(12).toString('hex')}`,
      webhookSecret: `whsec_${randomBytes(24).toString('base64')}`,
      contentKey: randomBytes(32).toString('base64'),
      postgresPassword: `pw${randomBytes(12).toString('hex')}`,
      endpointPassword: `ep${randomBytes(12).toString('hex')}`,
    };
    const postgres = new URL(TEST_POSTGRES_URL);
    postgres.password = secrets.postgresPassword;
    const diagnosed = await startHangar({
      engine: 'postgres',
      modules: allInOneModules(),
      overrides: {
        Stores: { Postgres: { ConnectionString: postgres.toString() } },
        Hangar: {
          Api: { AuthToken: secrets.token, MetricsToken: secrets.metricsToken, EnableDiagnosticsEndpoint: true },
          ProviderKeys: { acme: secrets.tenantProviderKey },
          WebhookSecrets: { orders: secrets.webhookSecret },
          ContentKeys: { k1: secrets.contentKey },
        },
        ContentProtection: { Keys: { k1: 'Hangar:ContentKeys:k1' } },
        Providers: {
          paid: { Kind: 'OpenAI', ApiKey: secrets.apiKey, DefaultModel: 'gpt-x' },
          proxied: { Kind: 'OpenAICompatible', Endpoint: `https://user:${secrets.endpointPassword}@models.example/v1` },
        },
      },
    });
    try {
      const response = await diagnosed.request('GET', '/api/diagnostics', { token: secrets.token });
      expect(response.status, response.text).toBe(200);
      for (const [name, value] of Object.entries(secrets)) expect(response.text, name).not.toContain(value);
      const body = response.body;
      expect(body).toMatchObject({ version: expect.any(String), uptimeSeconds: expect.any(Number), jobQueueDepth: {}, openCircuits: [] });
      expect(body.services.RunExecutor).toBe('SERVING');
      expect(body.engines).toEqual(
        expect.arrayContaining([
          { name: 'sql', kind: 'postgres', status: 'Healthy' },
          { name: 'pubsub', kind: TEST_TOPOLOGY === 'split' ? 'redis' : 'memory', status: 'Healthy' },
        ]),
      );
      const configuration = body.configuration;
      expect(configuration.Hangar.Api.AuthToken).toBe('***');
      expect(configuration.Providers.paid).toMatchObject({ ApiKey: '***', DefaultModel: 'gpt-x' });
      expect(configuration.Providers.proxied.Endpoint).toBe('https://user:***@models.example/v1');
      expect(configuration.Stores.Postgres.ConnectionString).toContain(':***@');
      expect(configuration.Hangar.WebhookSecrets).toEqual({ orders: '***' });
      expect(configuration.Voice.ApiKey).toBeNull();
    } finally {
      await diagnosed.stop();
    }
  }, 120_000);
});
