import { createDirectFetch } from '@hangar/platform';
import { startMcpServer, type TestMcpServer } from '@hangar/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discoverTools, type McpDiscoverySettings } from '../src/tool-servers/mcp-discovery.js';

/** Discovery against the official SDK's server over real HTTP. */
describe('MCP tool discovery', () => {
  let mcp: TestMcpServer;
  const direct = createDirectFetch();
  const settings = (overrides: Partial<McpDiscoverySettings> = {}): McpDiscoverySettings => ({
    fetch: direct.fetch,
    secret: (secretKey) =>
      secretKey === 'Hangar:McpSecrets:known' ? { value: 'known-token' } : { error: `${secretKey} is not configured` },
    timeoutMs: 2000,
    maxTools: 10,
    ...overrides,
  });
  const server = (overrides: Record<string, unknown> = {}) => ({
    url: mcp.streamableUrl,
    transport: 'streamable-http' as const,
    headers: {},
    secretKey: null,
    enabled: true,
    ...overrides,
  });

  beforeAll(async () => {
    mcp = await startMcpServer();
  });
  afterAll(async () => {
    await mcp.close();
    await direct.close();
  });

  it('lists every tool with its description and schema', async () => {
    const found = await discoverTools(server(), settings());
    expect(found.ok && found.tools.map((tool) => tool.name).sort()).toEqual(['add', 'echo', 'wait']);
    expect(found.ok && found.tools.find((tool) => tool.name === 'echo')).toMatchObject({
      description: 'Says the text back',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
    });
  });

  it('refuses a server that lists more than Mcp:MaxToolsPerServer tools rather than cutting it', async () => {
    expect(await discoverTools(server(), settings({ maxTools: 2 }))).toEqual({
      ok: false,
      error: 'the server lists more than 2 tools (Mcp:MaxToolsPerServer)',
    });
  });

  it('does not connect when the secret a server names is not configured, and sends one that is', async () => {
    const requests = mcp.authorizations.length;
    expect(await discoverTools(server({ secretKey: 'Hangar:McpSecrets:unknown' }), settings())).toEqual({
      ok: false,
      error: 'Hangar:McpSecrets:unknown is not configured',
    });
    expect(mcp.authorizations.length).toBe(requests);
    expect((await discoverTools(server({ secretKey: 'Hangar:McpSecrets:known' }), settings())).ok).toBe(true);
    expect(new Set(mcp.authorizations.slice(requests))).toEqual(new Set(['Bearer known-token']));
  });

  it('names the limit it ran into', async () => {
    const limit = { ms: 300, setting: 'Validation:McpTimeout' };
    expect(await discoverTools(server({ url: mcp.hangingUrl }), settings(), limit)).toEqual({
      ok: false,
      error: 'no answer within 300 ms (Validation:McpTimeout)',
    });
  });
});
