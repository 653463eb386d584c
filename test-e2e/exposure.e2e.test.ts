import { allInOneModules } from '@hangar/all-in-one';
import { startHangar, TEST_TOKEN, type HangarUnderTest } from '@hangar/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** API.md "Tool servers (MCP) and exposure": agents served as MCP tools at {prefix}/mcp, read by the official MCP client. */

let hangar: HangarUnderTest;

async function mcpClient(token: string) {
  const client = new Client({ name: 'exposure-test', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${hangar.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  return client;
}

beforeAll(async () => {
  hangar = await startHangar({
    modules: allInOneModules(),
    // `ghost` is exposed but never created: exposure names agents resolved per request.
    overrides: { Hangar: { Exposure: { Mcp: { Agents: ['helper', 'ghost'] } } } },
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
}, 60_000);

afterAll(async () => {
  await hangar?.stop();
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
