import { allInOneModules } from '@hangar/all-in-one';
import {
  eventually,
  parseSseFrames,
  startHangar,
  startMcpServer,
  startMockOpenAI,
  TEST_TOPOLOGY,
  type HangarUnderTest,
  type MockOpenAI,
  type TestMcpServer,
} from '@hangar/testing';
import { expectProblem } from '@hangar/testing/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Short, so the servers that never answer fail fast; longer on the split shape, where a first
 * discovery on a loaded 2-core machine (two test files, seven processes each) once took over 1.5 s.
 */
const CONNECTION_TIMEOUT_MS = TEST_TOPOLOGY === 'split' ? 4000 : 1500;

/** API.md "Tool servers (MCP) and exposure": registering MCP servers, discovering their tools, refusals and isolation. */

const acme = { 'x-hangar-tenant': 'acme' };
const globex = { 'x-hangar-tenant': 'globex' };
const tenancy = { Tenancy: { Enabled: true, AllowHeaderResolution: true } };
let mcp: TestMcpServer;
let model: MockOpenAI;
let hangar: HangarUnderTest;
let guarded: HangarUnderTest;
let switchedOff: HangarUnderTest;

const put = (name: string, body: unknown, on = hangar, headers = acme) => on.request('PUT', `/api/tool-servers/${name}`, { body, headers });
const toolNames = (server: { tools: Array<{ name: string }> }) => server.tools.map((tool) => tool.name).sort();

beforeAll(async () => {
  mcp = await startMcpServer();
  model = await startMockOpenAI();
  // Calls the tool it is told to (the user's message names it and its arguments), then reports what came back.
  model.script('tool-user', (request) => {
    const result = request.messages.find((message) => message.role === 'tool');
    if (result) return { text: `the tool said: ${typeof result.content === 'string' ? result.content : JSON.stringify(result.content)}` };
    const [name, args] = String(request.messages.at(-1)?.content).split(' ');
    return { toolCall: { name, args: JSON.parse(args) } };
  });
  [hangar, guarded, switchedOff] = await Promise.all([
    startHangar({
      modules: allInOneModules(),
      overrides: {
        ...tenancy,
        Egress: { AllowPrivateNetworkTargets: true },
        Hangar: { McpSecrets: { tools: 'tool-token' } },
        Providers: { mock: { Kind: 'OpenAICompatible', Endpoint: model.url } },
        Tools: { DefaultTimeout: '2s' },
        Mcp: { ConnectionTimeout: `${CONNECTION_TIMEOUT_MS}ms`, RefreshInterval: '1s', MaxResourceBytesPerResource: 100 },
      },
    }),
    // Private targets refused (the default): the test server on 127.0.0.1 is one.
    startHangar({ modules: allInOneModules(), overrides: tenancy }),
    startHangar({
      modules: allInOneModules(),
      overrides: { ...tenancy, Egress: { AllowPrivateNetworkTargets: true }, Mcp: { Enabled: false } },
    }),
  ]);
});

afterAll(async () => {
  await Promise.all([hangar?.stop(), guarded?.stop(), switchedOff?.stop()]);
  await mcp?.close();
  await model?.close();
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
    expect(toolNames(created.body)).toEqual(['add', 'echo', 'wait']);
    expect(created.body.resources).toEqual([
      { uri: 'hangar://notes/short', name: 'short-note', description: 'A short note', mimeType: 'text/plain' },
      { uri: 'hangar://notes/long', name: 'long-note', description: 'A long note', mimeType: 'text/plain' },
    ]);
    const add = created.body.tools.find((tool: { name: string }) => tool.name === 'add');
    expect(add).toMatchObject({ description: 'Adds two numbers', reference: 'mcp:calc/add' });
    expect(add.inputSchema).toMatchObject({ type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } });
    expect(created.body.refreshedAt).not.toBeNull();

    // As saved, unless the background refresh (every second here) came by since.
    const read = (await hangar.request('GET', '/api/tool-servers/calc', { headers: acme })).body;
    expect({ ...read, refreshedAt: undefined }).toEqual({ ...created.body, refreshedAt: undefined });
    expect(Date.parse(read.refreshedAt)).toBeGreaterThanOrEqual(Date.parse(created.body.refreshedAt));
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
    // A server of its own: every request it sees is this server's discovery.
    const legacy = await startMcpServer();
    try {
      const created = await put('legacy', { url: legacy.sseUrl, transport: 'sse', secretKey: 'Hangar:McpSecrets:tools' });
      expect(created.status, created.text).toBe(201);
      expect(created.body).toMatchObject({ status: 'Ready', secretKey: 'Hangar:McpSecrets:tools' });
      expect(toolNames(created.body)).toEqual(['add', 'echo', 'wait']);
      expect(legacy.authorizations.length).toBeGreaterThan(1);
      expect(new Set(legacy.authorizations)).toEqual(new Set(['Bearer tool-token']));
      await hangar.request('DELETE', '/api/tool-servers/legacy', { headers: acme });
    } finally {
      await legacy.close();
    }
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
    expect(hanging.body).toMatchObject({ status: 'Failed', error: `no answer within ${CONNECTION_TIMEOUT_MS} ms (Mcp:ConnectionTimeout)` });
    expect(Date.now() - started).toBeLessThan(10_000);

    // The SSE transport waits for its endpoint event without the SDK's timeout: the connect as a whole is cut.
    const hangingSse = await put('hanging-sse', { url: mcp.hangingUrl, transport: 'sse' });
    expect(hangingSse.body).toMatchObject({
      status: 'Failed',
      error: `no answer within ${CONNECTION_TIMEOUT_MS} ms (Mcp:ConnectionTimeout)`,
    });
    // Redirects are not followed (the bearer token would go along).
    const redirected = await put('redirected', {
      url: mcp.redirectingUrl,
      transport: 'streamable-http',
      secretKey: 'Hangar:McpSecrets:tools',
    });
    expect(redirected.body).toMatchObject({ status: 'Failed', tools: [] });
    expect(redirected.body.error).toContain('307 (a redirect, which is not followed)');

    // A server added its tool after it was registered: refresh (and the background refresh) find it.
    const grown = await put('grown', { url: mcp.streamableUrl, transport: 'streamable-http' });
    expect(toolNames(grown.body)).toEqual(['add', 'echo', 'wait']);
    mcp.addTool('lookup');
    // A discovery can outlast this file's short Mcp:ConnectionTimeout on a loaded machine (a CI run
    // answered the tools of before, 2026-12-02): the server is then Failed, and refreshed again.
    const refreshed = await eventually(async () => {
      const answer = await hangar.request('POST', '/api/tool-servers/grown/refresh', { headers: acme });
      expect(answer.status).toBe(200);
      return answer.body.status === 'Ready' ? answer : undefined;
    }, 'a refresh that reaches the server');
    expect(toolNames(refreshed.body)).toEqual(['add', 'echo', 'lookup', 'wait']);
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
      ['ok', { url: mcp.streamableUrl, transport: 'sse', headers: { 'X-Api-Key': 'k' } }, 'headers.X-Api-Key'],
      ['ok', { url: mcp.streamableUrl, transport: 'sse', headers: { Cookie: 'c' } }, 'headers.Cookie'],
      ['ok', { url: mcp.streamableUrl, transport: 'sse', headers: { 'X-Team': 'a', 'x-team': 'b' } }, 'headers.x-team'],
      ['ok', { url: mcp.streamableUrl, transport: 'sse', headers: { Accept: 'text/plain' } }, 'headers.Accept'],
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

  it('with Mcp:Enabled false keeps servers but connects to none and offers no MCP tool', async () => {
    // A server of its own: the other instances' background refreshes reach the shared one meanwhile.
    const untouched = await startMcpServer();
    try {
      const saved = await put('kept', { url: untouched.streamableUrl, transport: 'streamable-http' }, switchedOff);
      expect(saved.status, saved.text).toBe(201);
      expect(saved.body).toMatchObject({ status: 'Pending', tools: [] });
      expectProblem(await switchedOff.request('POST', '/api/tool-servers/kept/refresh', { headers: acme }), 409, 'conflict');
      const agent = await switchedOff.request('POST', '/api/agents', {
        body: { name: 'mcp-user', model: { provider: 'demo', model: 'echo' }, tools: ['mcp:kept/add'] },
        headers: acme,
      });
      expectProblem(agent, 400, 'validation_failed');
      expect(agent.body.errors[0].message).toContain('Mcp:Enabled');
      expect(untouched.authorizations).toEqual([]);
    } finally {
      await untouched.close();
    }
  });

  it('keeps each tenant to its own servers, and needs AgentsAdmin to change them', async () => {
    expect((await put('acme-only', { url: mcp.streamableUrl, transport: 'streamable-http' })).status).toBe(201);
    expectProblem(await hangar.request('GET', '/api/tool-servers/acme-only', { headers: globex }), 404, 'not_found');
    expectProblem(await hangar.request('POST', '/api/tool-servers/acme-only/refresh', { headers: globex }), 404, 'not_found');
    expectProblem(await hangar.request('DELETE', '/api/tool-servers/acme-only', { headers: globex }), 404, 'not_found');
    expect((await hangar.request('GET', '/api/tool-servers', { headers: globex })).body).toEqual([]);
  });
});

describe('agents with MCP tools', () => {
  const agent = (name: string, tools: string[], on = hangar) =>
    on.request('POST', '/api/agents', { body: { name, model: { provider: 'mock', model: 'tool-user' }, tools }, headers: acme });
  const runJson = (agentName: string, message: string) =>
    hangar.request('POST', `/api/agents/${agentName}/run`, {
      body: { message },
      headers: { ...acme, 'idempotency-key': crypto.randomUUID() },
    });

  beforeAll(async () => {
    expect(
      (await put('maths', { url: mcp.streamableUrl, transport: 'streamable-http', secretKey: 'Hangar:McpSecrets:tools' })).status,
    ).toBe(201);
  });

  it('validates mcp:<server>/<tool> references with a fresh lookup', async () => {
    const missing = await agent('bad-tools', ['mcp:maths/subtract', 'mcp:nowhere/add', 'mcp:no-slash']);
    expectProblem(missing, 400, 'validation_failed');
    expect(missing.body.errors).toEqual([
      expect.objectContaining({ path: 'tools[0]', code: 'tool_not_found', message: expect.stringContaining('does not list "subtract"') }),
      expect.objectContaining({
        path: 'tools[1]',
        code: 'tool_not_found',
        message: expect.stringContaining('"nowhere" is not registered'),
      }),
      expect.objectContaining({ path: 'tools[2]', code: 'tool_not_found', message: expect.stringContaining('mcp:<server>/<tool>') }),
    ]);
    // A disabled server's tools are not there; a server that cannot be asked now leaves a tool it listed before unverified.
    const validate = (tools: string[]) =>
      hangar.request('POST', '/api/agents/validate', {
        body: { name: 'probe', model: { provider: 'mock', model: 'tool-user' }, tools },
        headers: acme,
      });
    const moving = await startMcpServer();
    expect((await put('moving', { url: moving.streamableUrl, transport: 'streamable-http' })).body.status).toBe('Ready');
    await moving.close();
    const unverified = await validate(['mcp:moving/echo', 'mcp:moving/never-listed']);
    expect(unverified.body.valid).toBe(false);
    expect(unverified.body.messages).toEqual([
      expect.objectContaining({ severity: 'Warning', code: 'tool_unverified', path: 'tools[0]' }),
      expect.objectContaining({ severity: 'Error', code: 'tool_not_found', path: 'tools[1]' }),
    ]);
    expect((await validate(['mcp:moving/echo'])).body.valid).toBe(true);
    expect((await put('switched-off', { url: mcp.streamableUrl, transport: 'streamable-http', enabled: false })).status).toBe(201);
    expect((await validate(['mcp:switched-off/add'])).body.messages).toEqual([
      expect.objectContaining({ severity: 'Error', code: 'tool_not_found', message: expect.stringContaining('is disabled') }),
    ]);

    // The lookup is fresh: a tool the server lists now validates before any refresh.
    mcp.addTool('convert');
    expect((await agent('converter', ['mcp:maths/convert'])).status).toBe(201);
    // The tenant's discovered tools are in its tool catalog, under their references.
    const catalog = (await hangar.request('GET', '/api/tools', { headers: acme })).body.map((tool: { name: string }) => tool.name);
    expect(catalog).toEqual(expect.arrayContaining(['clock', 'mcp:maths/add', 'mcp:maths/convert']));
    expect((await hangar.request('GET', '/api/tools', { headers: globex })).body.map((tool: { name: string }) => tool.name)).not.toContain(
      'mcp:maths/add',
    );
  });

  it('a model calls an MCP tool: the call reaches the server with its secret, and the result is recorded', async () => {
    expect((await agent('adder', ['mcp:maths/add', 'clock'])).status).toBe(201);
    const calls = mcp.calls.length;
    const done = await runJson('adder', 'mcp__maths__add {"a":2,"b":3}');
    expect(done.status, done.text).toBe(200);
    expect(done.body.output.text).toBe('the tool said: 5');
    expect(mcp.calls.slice(calls)).toEqual([{ name: 'add', args: { a: 2, b: 3 }, authorization: 'Bearer tool-token' }]);
    // The model was offered the tool under its model-facing name, beside the built-in one and the server's resource reader.
    expect(
      model.requests
        .at(-2)
        ?.tools?.map((tool) => tool.function.name)
        .sort(),
    ).toEqual(['clock', 'mcp__maths__add', 'mcp__maths__read_resource']);

    const events = await hangar.request('GET', `/api/runs/${done.body.runId}/events`, { headers: acme });
    const frames = parseSseFrames(events.text);
    expect(frames.find((frame) => frame.event === 'tool.invoking')?.data.data).toMatchObject({
      toolName: 'mcp__maths__add',
      args: { a: 2, b: 3 },
    });
    expect(frames.find((frame) => frame.event === 'tool.completed')?.data.data).toMatchObject({ toolName: 'mcp__maths__add', result: '5' });
  });

  it('a model reads a resource the server lists, cut at Mcp:MaxResourceBytesPerResource', async () => {
    expect((await agent('reader', ['mcp:maths/echo'])).status).toBe(201);
    const short = await runJson('reader', 'mcp__maths__read_resource {"uri":"hangar://notes/short"}');
    expect(short.status, short.text).toBe(200);
    expect(short.body.output.text).toContain('the hatch code is 1234');
    const long = await runJson('reader', 'mcp__maths__read_resource {"uri":"hangar://notes/long"}');
    expect(long.body.output.text).toContain('cut at 100 of 5000 bytes (Mcp:MaxResourceBytesPerResource)');
    const unlisted = await runJson('reader', 'mcp__maths__read_resource {"uri":"file:///etc/passwd"}');
    expect(unlisted.body.status).toBe('Completed');
    expect(await failedToolOf(unlisted.body.runId)).toContain('lists no resource file:///etc/passwd');
  });

  const failedToolOf = async (runId: string) => {
    const frames = parseSseFrames((await hangar.request('GET', `/api/runs/${runId}/events`, { headers: acme })).text);
    return frames.find((frame) => frame.event === 'tool.failed')?.data.data.error as string | undefined;
  };

  it('a tool call that outlasts Tools:DefaultTimeout fails the call, not the run', async () => {
    expect((await agent('waiter', ['mcp:maths/wait'])).status).toBe(201);
    const slow = await runJson('waiter', 'mcp__maths__wait {"ms":10000}');
    expect(slow.status, slow.text).toBe(200);
    expect(slow.body).toMatchObject({ status: 'Completed' });
    // The run's own duration, not the test's wall time (a loaded split shape took 8.2 s around a 2.1 s run):
    // a run that waited for the tool's answer would have lasted its 10 s.
    const record = await hangar.request('GET', `/api/runs/${slow.body.runId}`, { headers: acme });
    expect(record.body.durationMs).toBeLessThan(8_000);
    expect(slow.body.output.text).toContain('Tools:DefaultTimeout');
    expect(await failedToolOf(slow.body.runId)).toContain('took longer than 2000 ms (Tools:DefaultTimeout)');
  });

  it('a tool server that went away fails the call, not the run', async () => {
    const doomed = await startMcpServer();
    expect((await put('doomed', { url: doomed.streamableUrl, transport: 'streamable-http' })).body.status).toBe('Ready');
    expect((await agent('doomed-user', ['mcp:doomed/echo'])).status).toBe(201);
    await doomed.close();
    const done = await runJson('doomed-user', 'mcp__doomed__echo {"text":"anyone?"}');
    expect(done.status, done.text).toBe(200);
    expect(done.body).toMatchObject({ status: 'Completed' });
    expect(await failedToolOf(done.body.runId)).toContain('tool server doomed could not be used');
  });
});
