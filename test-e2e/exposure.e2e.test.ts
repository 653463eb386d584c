import { allInOneModules } from '@hangar/all-in-one';
import { parseSseFrames, startHangar, startMockOpenAI, TEST_TOKEN, type HangarUnderTest, type MockOpenAI } from '@hangar/testing';
import { expectProblem } from '@hangar/testing/assertions';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * API.md "Tool servers (MCP) and exposure": agents served as MCP tools at {prefix}/mcp (read by the
 * official MCP client) and as A2A agents at {prefix}/a2a/{agent} (a hand-written JSON-RPC client).
 */

let hangar: HangarUnderTest;
let model: MockOpenAI;

async function mcpClient(token: string) {
  const client = new Client({ name: 'exposure-test', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${hangar.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  return client;
}

beforeAll(async () => {
  model = await startMockOpenAI();
  model.script('slow', () => ({ delayMs: 20_000, then: { text: 'too late' } }));
  hangar = await startHangar({
    modules: allInOneModules(),
    // `ghost` is exposed but never created: exposure names agents resolved per request.
    overrides: {
      Hangar: { Exposure: { Mcp: { Agents: ['helper', 'ghost'] }, A2A: { Agents: ['helper', 'ghost', 'slowpoke'] } } },
      Providers: { mock: { Kind: 'OpenAICompatible', Endpoint: model.url } },
    },
  });
  for (const [name, description] of [
    ['helper', 'Helps with anything'],
    ['private', 'Not for outsiders'],
  ]) {
    const created = await hangar.request('POST', '/api/agents', {
      body: { name, description, model: { provider: 'demo', model: 'echo' } },
    });
    expect(created.status, created.text).toBe(201);
  }
  const slowpoke = await hangar.request('POST', '/api/agents', { body: { name: 'slowpoke', model: { provider: 'mock', model: 'slow' } } });
  expect(slowpoke.status, slowpoke.text).toBe(201);
});

afterAll(async () => {
  await hangar?.stop();
  await model?.close();
});

describe('MCP exposure', () => {
  it('lists the exposed agents that exist as tools, and runs one as a recorded run', async () => {
    const client = await mcpClient(TEST_TOKEN);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(['helper']);
      expect(tools[0]).toMatchObject({ description: 'Helps with anything', inputSchema: { type: 'object', required: ['message'] } });

      const result = await client.callTool({ name: 'helper', arguments: { message: 'hello from outside' } });
      expect(result.isError).toBeFalsy();
      const { runId, text } = result.structuredContent as { runId: string; text: string };
      expect((result.content as Array<{ text: string }>)[0].text).toBe(text);
      expect(text).toContain('hello from outside');
      const run = (await hangar.request('GET', `/api/runs/${runId}`)).body;
      expect(run).toMatchObject({ agentName: 'helper', kind: 'Compatibility', status: 'Completed' });

      // An agent that is not exposed is not a tool, whatever exists.
      const hidden = await client
        .callTool({ name: 'private', arguments: { message: 'hi' } })
        .catch((error: Error) => ({ thrown: error.message }));
      expect(JSON.stringify(hidden)).toContain('private');
      expect('structuredContent' in hidden && hidden.structuredContent).toBeFalsy();
    } finally {
      await client.close();
    }
  });

  it('refuses what is not MCP with problem+json', async () => {
    const mcpAccept = { accept: 'application/json, text/event-stream' };
    const notRpc = await hangar.request('POST', '/mcp', { body: { hello: 'world' }, headers: mcpAccept });
    expect(notRpc.status).toBe(400);
    expect(notRpc.headers.get('content-type')).toContain('application/problem+json');
    const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };
    expect((await hangar.request('POST', '/mcp', { body: ping, headers: { accept: 'application/json' } })).status).toBe(406);
    expect(
      (await hangar.request('POST', '/mcp', { body: ping, headers: { ...mcpAccept, 'mcp-protocol-version': '1999-01-01' } })).status,
    ).toBe(400);
    const pong = await hangar.request('POST', '/mcp', { body: ping, headers: mcpAccept });
    expect(pong.status, pong.text).toBe(200);
    expect(pong.body).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
  });

  it('exposes no agent by default: the tool list is empty', async () => {
    const plain = await startHangar({ modules: allInOneModules() });
    try {
      expect(
        (await plain.request('POST', '/api/agents', { body: { name: 'helper', model: { provider: 'demo', model: 'echo' } } })).status,
      ).toBe(201);
      const client = new Client({ name: 'exposure-test', version: '1' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${plain.url}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${TEST_TOKEN}` } },
        }),
      );
      expect((await client.listTools()).tools).toEqual([]);
      await expect(client.callTool({ name: 'helper', arguments: { message: 'hi' } })).rejects.toThrow(/not found/);
      await client.close();
      expectProblem(await plain.request('GET', '/a2a/helper/.well-known/agent-card.json'), 404, 'not_found');
    } finally {
      await plain.stop();
    }
  });

  it('needs a credential with ExternalInvoke', async () => {
    const key = await hangar.request('POST', '/api/api-keys', { body: { name: 'reader-only', role: 'Admin', scopes: ['RunsRead'] } });
    expect(key.status, key.text).toBe(201);
    await expect(mcpClient(key.body.key)).rejects.toThrow(/403/);
    await expect(mcpClient('not-a-token')).rejects.toThrow(/401/);
    const invoker = await hangar.request('POST', '/api/api-keys', {
      body: { name: 'invoker', role: 'Operator', scopes: ['ExternalInvoke'] },
    });
    const client = await mcpClient(invoker.body.key);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['helper']);
    await client.close();
  });
});

describe('A2A exposure', () => {
  let ids = 0;
  const rpc = (agent: string, method: string, params: unknown) =>
    hangar.request('POST', `/a2a/${agent}`, { body: { jsonrpc: '2.0', id: ++ids, method, params } });
  const userMessage = (text: string) => ({
    message: { kind: 'message', role: 'user', messageId: crypto.randomUUID(), parts: [{ kind: 'text', text }] },
  });

  it('serves the agent card of an exposed agent that exists, and nothing for the others', async () => {
    const card = await hangar.request('GET', '/a2a/helper/.well-known/agent-card.json');
    expect(card.status, card.text).toBe(200);
    expect(card.body).toMatchObject({
      protocolVersion: '0.3.0',
      name: 'helper',
      description: 'Helps with anything',
      preferredTransport: 'JSONRPC',
      capabilities: { streaming: true },
      defaultInputModes: ['text/plain'],
      skills: [expect.objectContaining({ id: 'helper' })],
    });
    expect(card.body.url).toMatch(/\/a2a\/helper$/);
    expectProblem(await hangar.request('GET', '/a2a/private/.well-known/agent-card.json'), 404, 'not_found');
    expectProblem(await hangar.request('GET', '/a2a/ghost/.well-known/agent-card.json'), 404, 'not_found');
    expectProblem(await rpc('private', 'message/send', userMessage('hi')), 404, 'not_found');
  });

  it('message/send runs the agent and answers the completed task; tasks/get reads it again', async () => {
    const sent = await rpc('helper', 'message/send', userMessage('a2a says hello'));
    expect(sent.status, sent.text).toBe(200);
    const { result } = sent.body;
    expect(result).toMatchObject({ kind: 'task', status: { state: 'completed' } });
    expect(result.artifacts[0].parts[0].text).toContain('a2a says hello');
    expect((await hangar.request('GET', `/api/runs/${result.id}`)).body).toMatchObject({ agentName: 'helper', kind: 'Compatibility' });

    const got = await rpc('helper', 'tasks/get', { id: result.id });
    expect(got.body.result).toMatchObject({ id: result.id, status: { state: 'completed' } });
    expect(got.body.result.artifacts[0].parts[0].text).toBe(result.artifacts[0].parts[0].text);
    expect((await rpc('helper', 'tasks/cancel', { id: result.id })).body.error).toMatchObject({ code: -32002 });
    expect((await rpc('helper', 'tasks/get', { id: crypto.randomUUID() })).body.error).toMatchObject({ code: -32001 });
    expect((await rpc('helper', 'tasks/get', { id: 'not-a-run-id' })).body.error).toMatchObject({ code: -32001 });
    // A run of the agent started otherwise (the native route) is no task of the A2A surface.
    const native = await hangar.request('POST', '/api/agents/helper/run', {
      body: { message: 'native' },
      headers: { 'idempotency-key': crypto.randomUUID() },
    });
    expect(native.status, native.text).toBe(200);
    expect((await rpc('helper', 'tasks/get', { id: native.body.runId })).body.error).toMatchObject({ code: -32001 });
  });

  it('a task canceled while it streams ends with a canceled status, not a completed one', async () => {
    const response = await fetch(`${hangar.url}/a2a/slowpoke`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 'slow-1', method: 'message/stream', params: userMessage('take your time') }),
    });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!text.includes('\n\n')) text += decoder.decode((await reader.read()).value, { stream: true });
    const taskId = parseSseFrames(text)[0].data.result.id;
    const canceled = await rpc('slowpoke', 'tasks/cancel', { id: taskId });
    expect(canceled.body.result).toMatchObject({ id: taskId, status: { state: 'canceled' } });
    for (let next = await reader.read(); !next.done; next = await reader.read()) text += decoder.decode(next.value, { stream: true });
    const last = parseSseFrames(text).at(-1)!.data.result;
    expect(last).toMatchObject({ kind: 'status-update', taskId, final: true, status: { state: 'canceled' } });
    expect((await rpc('slowpoke', 'tasks/get', { id: taskId })).body.result.status.state).toBe('canceled');
  });

  it('message/stream answers the task, its answer in appended chunks, then a final status', async () => {
    const response = await fetch(`${hangar.url}/a2a/helper`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 'stream-1',
        method: 'message/stream',
        params: userMessage('stream these words back please'),
      }),
    });
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const results = parseSseFrames(await response.text()).map((frame) => frame.data);
    expect(results.every((frame) => frame.jsonrpc === '2.0' && frame.id === 'stream-1')).toBe(true);
    const [first, ...rest] = results.map((frame) => frame.result);
    expect(first).toMatchObject({ kind: 'task', status: { state: 'working' } });
    const chunks = rest.filter((event) => event.kind === 'artifact-update');
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks[0].append).toBe(false);
    expect(chunks.at(-1).lastChunk).toBe(true);
    expect(chunks.map((chunk) => chunk.artifact.parts[0].text).join('')).toContain('stream these words back please');
    expect(rest.at(-1)).toMatchObject({ kind: 'status-update', taskId: first.id, final: true, status: { state: 'completed' } });
  });

  it('answers protocol mistakes as JSON-RPC errors, and what is no JSON-RPC request as problem+json', async () => {
    expect((await rpc('helper', 'tasks/resubscribe', { id: 'x' })).body.error).toMatchObject({ code: -32601 });
    expect((await rpc('helper', 'message/send', { message: { role: 'user', parts: [] } })).body.error).toMatchObject({ code: -32602 });
    const withFile = { message: { role: 'user', messageId: 'm', parts: [{ kind: 'file', file: { uri: 'https://x' } }] } };
    expect((await rpc('helper', 'message/send', withFile)).body.error).toMatchObject({ code: -32602 });
    expectProblem(await hangar.request('POST', '/a2a/helper', { body: { hello: 'world' } }), 400, 'validation_failed');
    // A2A has no notifications: a request without an id is not one.
    expectProblem(
      await hangar.request('POST', '/a2a/helper', { body: { jsonrpc: '2.0', method: 'tasks/get', params: { id: 'x' } } }),
      400,
      'validation_failed',
    );
  });
});
