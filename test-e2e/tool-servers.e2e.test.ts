import { allInOneModules } from '@hangar/all-in-one';
import { eventually, startHangar, startMcpServer, type HangarUnderTest, type TestMcpServer } from '@hangar/testing';
import { expectProblem } from '@hangar/testing/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** API.md "Tool servers (MCP) and exposure": registering MCP servers, discovering their tools, refusals and isolation. */

const acme = { 'x-hangar-tenant': 'acme' };
const globex = { 'x-hangar-tenant': 'globex' };
const tenancy = { Tenancy: { Enabled: true, AllowHeaderResolution: true } };
let mcp: TestMcpServer;
let hangar: HangarUnderTest;
let guarded: HangarUnderTest;

const put = (name: string, body: unknown, on = hangar, headers = acme) => on.request('PUT', `/api/tool-servers/${name}`, { body, headers });
const toolNames = (server: { tools: Array<{ name: string }> }) => server.tools.map((tool) => tool.name).sort();

beforeAll(async () => {
  mcp = await startMcpServer();
  [hangar, guarded] = await Promise.all([
    startHangar({
      modules: allInOneModules(),
      overrides: {
        ...tenancy,
        Egress: { AllowPrivateNetworkTargets: true },
        Mcp: { ConnectionTimeout: '1500ms', RefreshInterval: '1s' },
        Hangar: { McpSecrets: { tools: 'tool-token' } },
      },
    }),
    // Private targets refused (the default): the test server on 127.0.0.1 is one.
    startHangar({ modules: allInOneModules(), overrides: tenancy }),
  ]);
}, 60_000);

afterAll(async () => {
  await Promise.all([hangar?.stop(), guarded?.stop()]);
  await mcp?.close();
});

describe('tool servers', () => {
  it('registers a streamable-HTTP server, lists its tools with their references, and replaces and deletes it', async () => {
    const created = await put('calc', { url: mcp.streamableUrl, transport: 'streamable-http', headers: { 'X-Team': 'billing' } });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({
      name: 'calc',
      transport: 'streamable-http',
      headers: { 'x-team': 'billing' },
      secretKey: null,
      enabled: true,
      status: 'Ready',
      error: null,
    });
    expect(toolNames(created.body)).toEqual(['add', 'echo']);
    const add = created.body.tools.find((tool: { name: string }) => tool.name === 'add');
    expect(add).toMatchObject({ description: 'Adds two numbers', reference: 'mcp:calc/add' });
    expect(add.inputSchema).toMatchObject({ type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } });
    expect(created.body.refreshedAt).not.toBeNull();

    expect((await hangar.request('GET', '/api/tool-servers/calc', { headers: acme })).body).toEqual(created.body);
    expect(
      (await hangar.request('GET', '/api/tool-servers', { headers: acme })).body.map((server: { name: string }) => server.name),
    ).toEqual(['calc']);

    const replaced = await put('calc', { url: mcp.streamableUrl, transport: 'streamable-http', enabled: false });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ status: 'Disabled', tools: [], headers: {}, refreshedAt: null });
    // A disabled server is not connected by a refresh either.
    expect((await hangar.request('POST', '/api/tool-servers/calc/refresh', { headers: acme })).body).toMatchObject({ status: 'Disabled' });

    expect((await hangar.request('DELETE', '/api/tool-servers/calc', { headers: acme })).status).toBe(204);
    expectProblem(await hangar.request('GET', '/api/tool-servers/calc', { headers: acme }), 404, 'not_found');
    expectProblem(await hangar.request('DELETE', '/api/tool-servers/calc', { headers: acme }), 404, 'not_found');
  });

  it('speaks the SSE transport and sends the secret its key names as a bearer token', async () => {
    const before = mcp.authorizations.length;
    const created = await put('legacy', { url: mcp.sseUrl, transport: 'sse', secretKey: 'Hangar:McpSecrets:tools' });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ status: 'Ready', secretKey: 'Hangar:McpSecrets:tools' });
    expect(toolNames(created.body)).toEqual(['add', 'echo']);
    const sent = mcp.authorizations.slice(before);
    expect(sent.length).toBeGreaterThan(1);
    expect(new Set(sent)).toEqual(new Set(['Bearer tool-token']));
  });

  it('keeps a server it cannot use, with status Failed and the reason, and discovers again on refresh', async () => {
    const unset = await put('unset-secret', {
      url: mcp.streamableUrl,
      transport: 'streamable-http',
      secretKey: 'Hangar:McpSecrets:missing',
    });
    expect(unset.status).toBe(201);
    expect(unset.body).toMatchObject({ status: 'Failed', tools: [] });
    expect(unset.body.error).toContain('Hangar:McpSecrets:missing');

    const started = Date.now();
    const hanging = await put('hanging', { url: mcp.hangingUrl, transport: 'streamable-http' });
    expect(hanging.body).toMatchObject({ status: 'Failed', error: 'no answer within 1500 ms (Mcp:ConnectionTimeout)' });
    expect(Date.now() - started).toBeLessThan(10_000);

    // A server added its tool after it was registered: refresh (and the background refresh) find it.
    const grown = await put('grown', { url: mcp.streamableUrl, transport: 'streamable-http' });
    expect(toolNames(grown.body)).toEqual(['add', 'echo']);
    mcp.addTool('lookup');
    const refreshed = await hangar.request('POST', '/api/tool-servers/grown/refresh', { headers: acme });
    expect(refreshed.status).toBe(200);
    expect(toolNames(refreshed.body)).toEqual(['add', 'echo', 'lookup']);
    expect(new Date(refreshed.body.refreshedAt).getTime()).toBeGreaterThan(new Date(grown.body.refreshedAt).getTime());
  });

  it('refreshes servers in the background once their tools are Mcp:RefreshInterval old', async () => {
    const first = await put('watched', { url: mcp.streamableUrl, transport: 'streamable-http' });
    const firstRefresh = new Date(first.body.refreshedAt).getTime();
    const later = await eventually(
      async () => {
        const server = (await hangar.request('GET', '/api/tool-servers/watched', { headers: acme })).body;
        return new Date(server.refreshedAt).getTime() > firstRefresh ? server : undefined;
      },
      'a background refresh',
      15_000,
    );
    expect(later.status).toBe('Ready');
  });

  it('refuses what it cannot store with 400 and stores nothing', async () => {
    const refusals: Array<[string, unknown, string]> = [
      ['bad name!', { url: mcp.streamableUrl, transport: 'sse' }, 'name'],
      ['ok', { url: 'not a url', transport: 'sse' }, 'url'],
      ['ok', { url: 'ftp://tools.example.com', transport: 'sse' }, 'url'],
      ['ok', { url: 'http://tools.example.com/mcp', transport: 'sse' }, 'url'],
      ['ok', { url: mcp.streamableUrl, transport: 'websocket' }, 'transport'],
      ['ok', { url: mcp.streamableUrl, transport: 'sse', secretKey: 'Hangar:ProviderKeys:openai' }, 'secretKey'],
      ['ok', { url: mcp.streamableUrl, transport: 'sse', headers: { Authorization: 'Bearer x' } }, 'headers.Authorization'],
      ['ok', { url: mcp.streamableUrl, transport: 'sse', headers: { 'bad header': 'x' } }, 'headers.bad header'],
      ['ok', { url: mcp.streamableUrl, transport: 'sse', extra: true }, ''],
    ];
    for (const [name, body, path] of refusals) {
      const response = await put(encodeURIComponent(name), body);
      expectProblem(response, 400, 'validation_failed');
      if (path)
        expect(
          response.body.errors.map((error: { path: string }) => error.path),
          JSON.stringify(body),
        ).toContain(path);
    }
    expectProblem(await hangar.request('GET', '/api/tool-servers/ok', { headers: acme }), 404, 'not_found');
  });

  it('refuses a private target while Egress:AllowPrivateNetworkTargets is off', async () => {
    const refused = await put('local', { url: mcp.streamableUrl, transport: 'streamable-http' }, guarded);
    expectProblem(refused, 400, 'validation_failed');
    expect(refused.body.errors[0]).toMatchObject({ path: 'url' });
    expect(refused.body.errors[0].message).toContain('private');
  });

  it('keeps each tenant to its own servers, and needs AgentsAdmin to change them', async () => {
    expect((await put('acme-only', { url: mcp.streamableUrl, transport: 'streamable-http' })).status).toBe(201);
    expectProblem(await hangar.request('GET', '/api/tool-servers/acme-only', { headers: globex }), 404, 'not_found');
    expectProblem(await hangar.request('POST', '/api/tool-servers/acme-only/refresh', { headers: globex }), 404, 'not_found');
    expectProblem(await hangar.request('DELETE', '/api/tool-servers/acme-only', { headers: globex }), 404, 'not_found');
    expect((await hangar.request('GET', '/api/tool-servers', { headers: globex })).body).toEqual([]);
  });
});
