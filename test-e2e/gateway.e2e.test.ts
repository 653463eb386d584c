import { allInOneModules } from '@hangar/all-in-one';
import { isLoopback } from '@hangar/gateway';
import { createJwtIssuer, type HangarUnderTest, httpRequest, type HttpResult, startHangar, TEST_TOPOLOGY } from '@hangar/testing';
import { expectProblem } from '@hangar/testing/assertions';
import { compileErrors, validate } from '@readme/openapi-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** Authentication, authorization (role ∩ scope), tenancy, CORS, prefix, meta, OpenAPI and routing errors. */

const ISSUER = 'https://issuer.test';
const AUDIENCE = 'hangar';
let issuer: Awaited<ReturnType<typeof createJwtIssuer>>;
let hangar: HangarUnderTest;

const agent = (name: string) => ({ name, model: { provider: 'demo', model: 'echo' } });

beforeAll(async () => {
  issuer = await createJwtIssuer({ issuer: ISSUER, audience: AUDIENCE });
  hangar = await startHangar({
    modules: allInOneModules(),
    overrides: {
      Hangar: {
        Api: {
          Prefix: '/hangar',
          AllowedOrigins: ['https://app.example'],
          Jwt: { Enabled: true, Jwks: issuer.jwks, Issuer: ISSUER, Audience: AUDIENCE },
        },
      },
      Tenancy: { Enabled: true, AllowHeaderResolution: true, ClaimType: 'tenant', AllowedTenants: ['default', 'acme', 'globex'] },
    },
  });
});

afterAll(async () => {
  await hangar?.stop();
});

describe('authentication', () => {
  it('answers a missing credential with 401 and WWW-Authenticate: Bearer', async () => {
    const result = await hangar.request('GET', '/api/agents', { token: null });
    expectProblem(result, 401, 'unauthorized');
    expect(result.headers.get('www-authenticate')).toBe('Bearer');
  });

  it.each([
    ['a wrong token', { authorization: 'Bearer not-the-token-at-all' }],
    ['a Basic scheme', { authorization: 'Basic dXNlcjpwYXNz' }],
    ['an unknown API key', { 'x-api-key': 'hgk_unknown' }],
    ['a forged JWT', { authorization: 'Bearer eyJhbGciOiJub25lIn0.eyJyb2xlcyI6WyJBZG1pbiJdfQ.' }],
  ])('answers %s with 401', async (_case, headers) => {
    expectProblem(await hangar.request('GET', '/api/agents', { token: null, headers }), 401, 'unauthorized');
  });

  it('refuses a JWT signed by another key, for another audience, or expired', async () => {
    const stranger = await createJwtIssuer({ issuer: ISSUER, audience: AUDIENCE });
    const foreign = await stranger.sign({ sub: 'mallory', roles: ['Admin'] });
    expectProblem(await hangar.request('GET', '/api/agents', { token: foreign }), 401, 'unauthorized');
    const otherAudience = await (await createJwtIssuer({ issuer: ISSUER, audience: 'other' })).sign({ roles: ['Admin'] });
    expectProblem(await hangar.request('GET', '/api/agents', { token: otherAudience }), 401, 'unauthorized');
    const expired = await issuer.sign({ sub: 'late', roles: ['Admin'] }, '-1m');
    expectProblem(await hangar.request('GET', '/api/agents', { token: expired }), 401, 'unauthorized');
  });

  it('serves /api/meta without authentication, with no secret in it', async () => {
    const result = await hangar.request('GET', '/api/meta', { token: null });
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({
      service: 'hangar',
      apiVersion: 'v1',
      authentication: ['token', 'apiKey', 'jwt'],
      // The engines of the shape under test: embedded in one process, the real ones split.
      stores:
        TEST_TOPOLOGY === 'split'
          ? { definitions: 'postgres', runs: 'postgres', sessions: 'postgres', attachments: 'postgres', events: 'kafka', cache: 'redis' }
          : { definitions: 'pglite', runs: 'pglite', sessions: 'pglite', attachments: 'pglite', events: 'memory', cache: 'memory' },
    });
    // SPEC: a Reader lists skill-script grants with the SecurityAdmin scope; API.md: a Reader reads webhooks (PlatformRead), searches knowledge and reads workflows.
    expect(result.body.roles.Reader).toEqual([
      'AgentsRead',
      'EvalsRead',
      'ExperimentsRead',
      'KnowledgeRead',
      'PlatformRead',
      'RunsRead',
      'SecurityAdmin',
      'WorkflowsRead',
    ]);
    expect(result.body.roles.Admin).toEqual(expect.arrayContaining(['AgentsAdmin', 'AgentsRead']));
    expect(result.text).not.toContain('test-token');
  });
});

describe('authorization: role ∩ scope', () => {
  it('lets a Reader read and refuses it an Admin route with 403 naming the role, writing nothing', async () => {
    const reader = await issuer.sign({ sub: 'rita', roles: ['Reader'] });
    expect((await hangar.request('GET', '/api/agents', { token: reader })).status).toBe(200);
    const denied = await hangar.request('POST', '/api/agents', { token: reader, body: agent('by-reader') });
    expectProblem(denied, 403, 'forbidden');
    expect(denied.body.detail).toContain('Admin');
    expectProblem(await hangar.request('DELETE', '/api/agents/code-helper', { token: reader }), 403, 'forbidden');
    expectProblem(await hangar.request('GET', '/api/agents/by-reader'), 404, 'not_found');
  });

  it('lets an Operator validate but not create', async () => {
    const operator = await issuer.sign({ sub: 'otto', roles: ['Operator'] });
    expect((await hangar.request('POST', '/api/agents/validate', { token: operator, body: agent('x') })).status).toBe(200);
    expectProblem(await hangar.request('POST', '/api/agents', { token: operator, body: agent('by-operator') }), 403, 'forbidden');
  });

  it('narrows an Admin by its scopes: a scope never widens a role', async () => {
    const readOnlyAdmin = await issuer.sign({ sub: 'ada', roles: ['Admin'], scope: 'AgentsRead' });
    expect((await hangar.request('GET', '/api/agents', { token: readOnlyAdmin })).status).toBe(200);
    const denied = await hangar.request('POST', '/api/agents', { token: readOnlyAdmin, body: agent('narrowed') });
    expectProblem(denied, 403, 'forbidden');
    expect(denied.body.detail).toContain('AgentsAdmin');
    const readerWithAdminScope = await issuer.sign({ sub: 'rex', roles: ['Reader'], scope: 'AgentsRead AgentsAdmin' });
    expectProblem(await hangar.request('POST', '/api/agents', { token: readerWithAdminScope, body: agent('widened') }), 403, 'forbidden');
    const roleless = await issuer.sign({ sub: 'nobody' });
    expectProblem(await hangar.request('GET', '/api/agents', { token: roleless }), 403, 'forbidden');
  });

  it('records the JWT subject as createdBy', async () => {
    const admin = await issuer.sign({ sub: 'alice@example.com', roles: ['Admin'] });
    const created = await hangar.request('POST', '/api/agents', { token: admin, body: agent('alices-agent') });
    expect(created.status, created.text).toBe(201);
    expect(created.body.createdBy).toBe('alice@example.com');
  });
});

describe('tenancy', () => {
  it('keeps each tenant to its own agents: another tenant’s agent is a 404', async () => {
    const acme = { 'x-hangar-tenant': 'acme' };
    const globex = { 'x-hangar-tenant': 'globex' };
    expect((await hangar.request('POST', '/api/agents', { headers: acme, body: agent('acme-only') })).status).toBe(201);
    expect((await hangar.request('GET', '/api/agents/acme-only', { headers: acme })).status).toBe(200);
    expectProblem(await hangar.request('GET', '/api/agents/acme-only', { headers: globex }), 404, 'not_found');
    expectProblem(await hangar.request('PUT', '/api/agents/acme-only', { headers: globex, body: agent('acme-only') }), 404, 'not_found');
    expectProblem(await hangar.request('DELETE', '/api/agents/acme-only', { headers: globex }), 404, 'not_found');
    expectProblem(await hangar.request('GET', '/api/agents/acme-only/versions', { headers: globex }), 404, 'not_found');
    const globexList = await hangar.request('GET', '/api/agents', { headers: globex });
    expect(globexList.body.map((entry: any) => entry.name)).not.toContain('acme-only');
    // The same name can exist in two tenants.
    expect((await hangar.request('POST', '/api/agents', { headers: globex, body: agent('acme-only') })).status).toBe(201);
    // Code agents are visible to every tenant.
    expect(globexList.body.map((entry: any) => entry.name)).toContain('code-helper');
  });

  it('takes the tenant from the JWT claim over the header', async () => {
    const acmeAdmin = await issuer.sign({ sub: 'a', roles: ['Admin'], tenant: 'acme' });
    const result = await hangar.request('GET', '/api/agents/acme-only', { token: acmeAdmin, headers: { 'x-hangar-tenant': 'globex' } });
    expect(result.status).toBe(200);
    expect(result.body.definition.createdBy).toBe('auth-token');
  });

  it('refuses a tenant outside AllowedTenants (403) and a malformed tenant id (400)', async () => {
    expectProblem(await hangar.request('GET', '/api/agents', { headers: { 'x-hangar-tenant': 'initech' } }), 403, 'forbidden');
    expectProblem(await hangar.request('GET', '/api/agents', { headers: { 'x-hangar-tenant': 'bad tenant!' } }), 400, 'validation_failed');
  });
});

describe('routing, prefix and documents', () => {
  it('mounts the API under the prefix only', async () => {
    const root = hangar.url.replace(/\/hangar$/, '');
    expectProblem(await httpRequest(root, 'GET', '/api/agents'), 404, 'not_found');
    expect((await httpRequest(root, 'GET', '/healthz', { token: null })).body).toEqual({ status: 'ok' });
    const ready = await httpRequest(root, 'GET', '/readyz', { token: null });
    expect([ready.status, ready.body]).toEqual([200, { status: 'ok' }]);
  });

  it('answers unknown routes with 404 and wrong methods with 405 + Allow, as problem+json', async () => {
    expectProblem(await hangar.request('GET', '/api/nothing-here'), 404, 'not_found');
    const wrongMethod = await hangar.request('PATCH', '/api/agents/code-helper');
    expectProblem(wrongMethod, 405, 'method_not_allowed');
    expect(wrongMethod.headers.get('allow')).toBe('GET, PUT, DELETE');
  });

  it('serves an OpenAPI 3.1 document listing every route with its role and scope', async () => {
    const result = await hangar.request('GET', '/api/openapi.json', { token: null });
    expect(result.status).toBe(200);
    const document = result.body;
    expect(document.openapi).toBe('3.1.0');
    const validation = await validate(structuredClone(document));
    expect(validation.valid, validation.valid ? '' : compileErrors(validation)).toBe(true);
    const operations = Object.entries(document.paths).flatMap(([path, methods]: [string, any]) =>
      Object.entries(methods).map(([method, operation]: [string, any]) => ({ route: `${method.toUpperCase()} ${path}`, operation })),
    );
    expect(operations.map((entry) => entry.route).sort()).toEqual(
      [
        'DELETE /hangar/api/agents/{name}',
        'GET /healthz',
        'GET /readyz',
        'GET /metrics',
        'GET /hangar/console',
        'GET /hangar/console/assets/{file}',
        'GET /hangar/api/diagnostics',
        'GET /hangar/api/models/health',
        'GET /hangar/api/agents',
        'GET /hangar/api/agents/{name}',
        'GET /hangar/api/agents/{name}/versions',
        'GET /hangar/api/agents/{name}/versions/{a}/diff/{b}',
        'GET /hangar/api/meta',
        'GET /hangar/api/models',
        'GET /hangar/api/openapi.json',
        'GET /hangar/api/tools',
        'POST /hangar/api/agents',
        'POST /hangar/api/agents/validate',
        'POST /hangar/api/agents/{name}/rollback',
        'PUT /hangar/api/agents/{name}',
        'GET /hangar/api/sessions',
        'GET /hangar/api/sessions/{sessionId}',
        'DELETE /hangar/api/sessions/{sessionId}',
        'POST /hangar/api/sessions/{sessionId}/branch',
        'POST /hangar/api/attachments',
        'GET /hangar/api/attachments',
        'GET /hangar/api/attachments/{id}',
        'DELETE /hangar/api/attachments/{id}',
        'GET /hangar/api/audit',
        'GET /hangar/api/quotas',
        'PUT /hangar/api/quotas/{name}',
        'DELETE /hangar/api/quotas/{name}',
        'GET /hangar/api/skills',
        'GET /hangar/api/skills/{name}',
        'PUT /hangar/api/skills/{name}',
        'DELETE /hangar/api/skills/{name}',
        'GET /hangar/api/skill-script-grants',
        'POST /hangar/api/skill-script-grants',
        'DELETE /hangar/api/skill-script-grants/{skillName}',
        'POST /hangar/api/api-keys',
        'GET /hangar/api/api-keys',
        'GET /hangar/api/api-keys/{id}',
        'DELETE /hangar/api/api-keys/{id}',
        'GET /hangar/api/tenants',
        'GET /hangar/api/tenants/{id}',
        'PUT /hangar/api/tenants/{id}',
        'DELETE /hangar/api/tenants/{id}',
        'GET /hangar/api/webhooks',
        'GET /hangar/api/webhooks/{name}',
        'PUT /hangar/api/webhooks/{name}',
        'DELETE /hangar/api/webhooks/{name}',
        'POST /hangar/api/webhooks/{name}/test',
        'GET /hangar/api/webhooks/{name}/deliveries',
        'GET /hangar/api/webhooks/{name}/deliveries/{id}',
        'GET /hangar/api/retention',
        'PUT /hangar/api/retention/{target}',
        'DELETE /hangar/api/retention/{target}',
        'POST /hangar/api/retention/run',
        'POST /hangar/api/content-protection/reseal',
        'POST /hangar/api/eval-runs/{id}/cancel',
        'POST /hangar/api/agents/{name}/run',
        'GET /hangar/api/runs',
        'GET /hangar/api/runs/{runId}',
        'GET /hangar/api/runs/{runId}/approvals',
        'POST /hangar/api/runs/{runId}/approvals/{approvalId}',
        'GET /hangar/api/runs/{runId}/input',
        'GET /hangar/api/runs/{runId}/events',
        'POST /hangar/api/agents/{name}/estimate',
        'GET /hangar/api/runs/{runId}/tree',
        'GET /hangar/api/runs/{runId}/trace',
        'GET /hangar/api/schedules',
        'GET /hangar/api/schedules/{name}',
        'PUT /hangar/api/schedules/{name}',
        'DELETE /hangar/api/schedules/{name}',
        'POST /hangar/api/schedules/{name}/trigger',
        'GET /hangar/api/workflows',
        'GET /hangar/api/workflows/{name}',
        'PUT /hangar/api/workflows/{name}',
        'DELETE /hangar/api/workflows/{name}',
        'GET /hangar/api/workflows/{name}/graph',
        'POST /hangar/api/workflows/{name}/run',
        'GET /hangar/api/workflow-runs/{id}',
        'GET /hangar/api/workflow-runs/{id}/checkpoints',
        'GET /hangar/api/workflow-runs/{id}/requests',
        'POST /hangar/api/workflow-runs/{id}/requests/{requestId}',
        'POST /hangar/api/images/generate',
        'POST /hangar/api/voice/speech',
        'POST /hangar/api/voice/transcriptions',
        'GET /hangar/api/voice/conversations/{name}',
        'GET /hangar/api/tool-servers',
        'GET /hangar/api/tool-servers/{name}',
        'PUT /hangar/api/tool-servers/{name}',
        'DELETE /hangar/api/tool-servers/{name}',
        'POST /hangar/api/tool-servers/{name}/refresh',
        'GET /hangar/api/knowledge',
        'GET /hangar/api/knowledge/{collection}',
        'PUT /hangar/api/knowledge/{collection}',
        'DELETE /hangar/api/knowledge/{collection}',
        'POST /hangar/api/knowledge/{collection}/documents',
        'GET /hangar/api/knowledge/{collection}/documents',
        'DELETE /hangar/api/knowledge/{collection}/documents/{id}',
        'POST /hangar/api/knowledge/{collection}/search',
        'GET /hangar/api/evals',
        'GET /hangar/api/evals/{suite}',
        'PUT /hangar/api/evals/{suite}',
        'DELETE /hangar/api/evals/{suite}',
        'POST /hangar/api/evals/{suite}/runs',
        'GET /hangar/api/evals/{suite}/runs',
        'GET /hangar/api/eval-runs/{id}',
        'GET /hangar/api/evals/{suite}/compare',
        'GET /hangar/api/evals/online',
        'GET /hangar/api/experiments',
        'GET /hangar/api/experiments/{name}',
        'PUT /hangar/api/experiments/{name}',
        'DELETE /hangar/api/experiments/{name}',
        'POST /hangar/api/experiments/{name}/start',
        'POST /hangar/api/experiments/{name}/stop',
        'GET /hangar/api/experiments/{name}/results',
        'POST /hangar/mcp',
        'GET /hangar/a2a/{agent}/.well-known/agent-card.json',
        'POST /hangar/a2a/{agent}',
        'POST /hangar/api/runs/{runId}/cancel',
        'POST /hangar/api/runs/{runId}/feedback',
        'GET /hangar/api/runs/{runId}/feedback',
        'DELETE /hangar/api/runs/{runId}/feedback/{scoreId}',
        'GET /hangar/v1/models',
        'GET /hangar/v1/models/{model}',
        'POST /hangar/v1/chat/completions',
        'POST /hangar/v1/responses',
        'GET /hangar/v1/responses/{responseId}',
        'POST /hangar/v1/conversations',
        'GET /hangar/v1/conversations/{conversationId}',
        'POST /hangar/v1/conversations/{conversationId}',
        'DELETE /hangar/v1/conversations/{conversationId}',
        'GET /hangar/v1/conversations/{conversationId}/items',
      ].sort(),
    );
    const create = document.paths['/hangar/api/agents'].post;
    expect(create).toMatchObject({ 'x-hangar-role': 'Admin', 'x-hangar-scope': 'AgentsAdmin' });
    const bodyRef = create.requestBody.content['application/json'].schema.$ref.split('/').pop();
    expect(document.components.schemas[bodyRef].properties.name).toBeDefined();
    expect(JSON.stringify(document)).not.toContain('#/$defs/');
    expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(['201', '400', '401', '403', '409']));
  });

  it('lists the model and tool catalogs', async () => {
    const models = await hangar.request('GET', '/api/models');
    expect(models.body).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ provider: 'demo', model: 'echo', isDefault: true, providerKind: 'Demo' }),
        expect.objectContaining({ provider: 'catalogued', model: 'listed-model', contextWindowTokens: 8192 }),
      ]),
    );
    const tools = await hangar.request('GET', '/api/tools');
    expect(tools.body.map((tool: any) => tool.name)).toContain('clock');
  });
});

describe('CORS and remote access', () => {
  it('sends CORS headers only to allowed origins, and answers their preflight', async () => {
    const allowed = await hangar.request('GET', '/api/meta', { token: null, headers: { origin: 'https://app.example' } });
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example');
    const other = await hangar.request('GET', '/api/meta', { token: null, headers: { origin: 'https://evil.example' } });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    const preflight = await hangar.request('OPTIONS', '/api/agents', {
      token: null,
      headers: {
        origin: 'https://app.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')).toContain('Authorization');
  });

  it('treats only loopback peers as local', () => {
    expect(['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1'].every(isLoopback)).toBe(true);
    expect(['10.0.0.1', '192.168.1.2', '::ffff:10.1.2.3', 'fe80::1', '', undefined].some(isLoopback)).toBe(false);
  });
});
