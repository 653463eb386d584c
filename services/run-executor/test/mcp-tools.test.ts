import { LONG_NOTE, startMcpServer } from '@hangar/testing';
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
  resources: [],
});
const limits = { maxResourceBytes: 65536, maxResourceBytesTotal: 262144 };

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
      ...limits,
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
      ...limits,
    });
    const names = Object.keys(await mcp.toolsFor(caller, ['mcp:a-b/x', 'mcp:a_b/x']));
    expect(names).toHaveLength(2);
    expect(names[0]).toBe('mcp__a_b__x');
    expect(names[1]).toMatch(/^mcp__a_b__x_[0-9a-f]{8}$/);
  });

  it('reads the resources a server listed, cut at Mcp:MaxResourceBytesPerResource and, across the run, Mcp:MaxResourceBytesTotal', async () => {
    const mcpServer = await startMcpServer();
    try {
      const listed = {
        ...server('notes', ['echo']),
        url: mcpServer.streamableUrl,
        resources: [
          { uri: 'hangar://notes/short', name: 'short-note', description: 'A short note', mimeType: 'text/plain' },
          { uri: 'hangar://notes/long', name: 'long-note', description: 'A long note', mimeType: 'text/plain' },
        ],
      };
      const mcp = createMcpTools({
        servers: async () => listed,
        fetch: globalThis.fetch,
        secret: () => ({ error: 'none' }),
        enabled: true,
        timeoutMs: 5000,
        limitOutput: (value) => value,
        maxResourceBytes: 1000,
        maxResourceBytesTotal: 1500,
      });
      const tools = await mcp.toolsFor(caller, ['mcp:notes/echo']);
      expect(Object.keys(tools).sort()).toEqual(['mcp__notes__echo', 'mcp__notes__read_resource']);
      expect(tools.mcp__notes__read_resource.description).toContain('hangar://notes/long (long-note: A long note)');
      const read = (uri: string) => tools.mcp__notes__read_resource.execute!({ uri }, { toolCallId: 'c', messages: [] });

      expect(await read('hangar://notes/short')).toEqual({ uri: 'hangar://notes/short', text: 'Short note: the hatch code is 1234.' });
      const long = await read('hangar://notes/long');
      expect(long.text).toBe(LONG_NOTE.slice(0, 1000));
      expect(long.truncated).toBe(`cut at 1000 of ${LONG_NOTE.length} bytes (Mcp:MaxResourceBytesPerResource)`);
      // 1,035 bytes read so far: 465 are left of the run's 1,500.
      const rest = await read('hangar://notes/long');
      expect(rest.text).toHaveLength(465);
      expect(rest.truncated).toContain('(Mcp:MaxResourceBytesTotal)');
      await expect(read('hangar://notes/short')).rejects.toThrow('Mcp:MaxResourceBytesTotal');
      await expect(read('file:///etc/passwd')).rejects.toThrow('lists no resource file:///etc/passwd');
      // A server listing no resources gets no read tool.
      expect(
        Object.keys(
          await createMcpTools({
            ...limits,
            servers: async () => server('bare', ['x']),
            fetch: globalThis.fetch,
            secret: () => ({ error: 'none' }),
            enabled: true,
            timeoutMs: 1000,
            limitOutput: (value) => value,
          }).toolsFor(caller, ['mcp:bare/x']),
        ),
      ).toEqual(['mcp__bare__x']);
    } finally {
      await mcpServer.close();
    }
  });
});
