import { describe, expect, it } from 'vitest';
import { createMcpTools, mcpToolName, type McpServerBinding } from '../src/mcp/mcp-tools.js';

const caller = { tenantId: 't1', actor: 'test', role: 'Operator' as const };
const server = (name: string, tools: string[]): McpServerBinding => ({
  name,
  url: 'https://tools.example.com/mcp',
  transport: 'streamable-http',
  headers: {},
  secretKey: null,
  tools: tools.map((tool) => ({ name: tool, description: `does ${tool}`, inputSchema: { type: 'object', properties: {} } })),
});

describe('MCP tools of a run', () => {
  it('names a tool mcp__<server>__<tool> in [A-Za-z0-9_], cut to 64 with a hash', () => {
    expect(mcpToolName('maths', 'add')).toBe('mcp__maths__add');
    expect(mcpToolName('my-server.v2', 'get.weather')).toBe('mcp__my_server_v2__get_weather');
    const long = mcpToolName('s'.repeat(40), 't'.repeat(40));
    expect(long).toHaveLength(64);
    expect(long).toMatch(/^mcp__s{40}__t{8}_[0-9a-f]{8}$/);
    expect(mcpToolName('s'.repeat(40), 'u'.repeat(40))).not.toBe(long);
  });

  it('offers the tools of the servers it finds, one lookup per server, and leaves out what is gone', async () => {
    const lookups: string[] = [];
    const servers = new Map([['maths', server('maths', ['add', 'echo'])]]);
    const mcp = createMcpTools({
      servers: async (_caller, name) => (lookups.push(name), servers.get(name)),
      fetch: () => Promise.reject(new Error('no call is made before the model calls a tool')),
      secret: () => ({ error: 'none' }),
      enabled: true,
      timeoutMs: 1000,
      limitOutput: (value) => value,
    });
    const tools = await mcp.toolsFor(caller, ['mcp:maths/add', 'mcp:maths/gone', 'mcp:unknown/add', 'mcp:no-slash']);
    expect(Object.keys(tools)).toEqual(['mcp__maths__add']);
    expect(tools.mcp__maths__add.description).toBe('does add');
    expect(lookups.sort()).toEqual(['maths', 'unknown']);
  });

  it('gives references that read alike once cut to the allowed characters names of their own', async () => {
    const servers = new Map([
      ['a-b', server('a-b', ['x'])],
      ['a_b', server('a_b', ['x'])],
    ]);
    const mcp = createMcpTools({
      servers: async (_caller, name) => servers.get(name),
      fetch: () => Promise.reject(new Error('no call')),
      secret: () => ({ error: 'none' }),
      enabled: true,
      timeoutMs: 1000,
      limitOutput: (value) => value,
    });
    const names = Object.keys(await mcp.toolsFor(caller, ['mcp:a-b/x', 'mcp:a_b/x']));
    expect(names).toHaveLength(2);
    expect(names[0]).toBe('mcp__a_b__x');
    expect(names[1]).toMatch(/^mcp__a_b__x_[0-9a-f]{8}$/);
  });
});
