import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

export interface TestMcpServer {
  /** Streamable HTTP endpoint (stateless: a server per request). */
  streamableUrl: string;
  /** The SSE transport's endpoint (GET opens the stream, POST /messages carries requests). */
  sseUrl: string;
  /** An endpoint that takes the request and never answers. */
  hangingUrl: string;
  /** An endpoint that redirects (307) to the streamable HTTP one. */
  redirectingUrl: string;
  /** The Authorization header of every request, in order. */
  authorizations: Array<string | undefined>;
  /** The tool calls the server answered: name, arguments and the request's Authorization header. */
  calls: Array<{ name: string; args: Record<string, unknown>; authorization: string | undefined }>;
  /** Adds a tool to what later connections list (each returns its arguments as JSON text). */
  addTool(name: string): void;
  close(): Promise<void>;
}

const readJson = async (request: IncomingMessage): Promise<unknown> => {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
};

/** The text of the test server's `hangar://notes/long` resource: 5,000 characters. */
export const LONG_NOTE = 'long note '.repeat(500);

/**
 * A real MCP server (the official SDK's) on a free loopback port, over both transports, with three
 * tools: `add` ({a, b} → their sum), `echo` ({text} → the text) and `wait` ({ms} → "waited", after ms),
 * and two text resources: `hangar://notes/short` and `hangar://notes/long` ({@link LONG_NOTE}).
 */
export async function startMcpServer(): Promise<TestMcpServer> {
  const authorizations: Array<string | undefined> = [];
  const calls: TestMcpServer['calls'] = [];
  const extraTools: string[] = [];
  const sseSessions = new Map<string, SSEServerTransport>();
  const hanging = new Set<ServerResponse>();

  const serverWithTools = (authorization: string | undefined) => {
    const server = new McpServer({ name: 'hangar-test-tools', version: '1.0.0' });
    server.registerTool('add', { description: 'Adds two numbers', inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }) => {
      calls.push({ name: 'add', args: { a, b }, authorization });
      return { content: [{ type: 'text', text: String(a + b) }] };
    });
    server.registerTool('echo', { description: 'Says the text back', inputSchema: { text: z.string() } }, async ({ text }) => {
      calls.push({ name: 'echo', args: { text }, authorization });
      return { content: [{ type: 'text', text }] };
    });
    server.registerTool('wait', { description: 'Answers after ms milliseconds', inputSchema: { ms: z.number() } }, async ({ ms }) => {
      calls.push({ name: 'wait', args: { ms }, authorization });
      await new Promise((resolve) => setTimeout(resolve, ms));
      return { content: [{ type: 'text', text: 'waited' }] };
    });
    server.registerResource('short-note', 'hangar://notes/short', { description: 'A short note', mimeType: 'text/plain' }, async (uri) => ({
      contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'Short note: the hatch code is 1234.' }],
    }));
    server.registerResource('long-note', 'hangar://notes/long', { description: 'A long note', mimeType: 'text/plain' }, async (uri) => ({
      contents: [{ uri: uri.href, mimeType: 'text/plain', text: LONG_NOTE }],
    }));
    for (const name of extraTools)
      server.registerTool(name, { description: `The ${name} tool`, inputSchema: { value: z.string().optional() } }, async (args) => {
        calls.push({ name, args, authorization });
        return { content: [{ type: 'text', text: JSON.stringify(args) }] };
      });
    return server;
  };

  const http = createServer(async (request, response) => {
    authorizations.push(request.headers.authorization);
    const path = new URL(request.url ?? '/', 'http://test').pathname;
    try {
      if (path === '/hang') {
        hanging.add(response);
        request.resume();
        return;
      }
      if (path === '/redirect') {
        response.writeHead(307, { location: '/mcp' }).end();
        return;
      }
      if (path === '/mcp') {
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
        const server = serverWithTools(request.headers.authorization);
        response.on('close', () => void transport.close().then(() => server.close()));
        await server.connect(transport);
        await transport.handleRequest(request, response, request.method === 'POST' ? await readJson(request) : undefined);
        return;
      }
      if (path === '/sse' && request.method === 'GET') {
        const transport = new SSEServerTransport('/messages', response);
        sseSessions.set(transport.sessionId, transport);
        response.on('close', () => sseSessions.delete(transport.sessionId));
        await serverWithTools(request.headers.authorization).connect(transport);
        return;
      }
      if (path === '/messages' && request.method === 'POST') {
        const transport = sseSessions.get(new URL(request.url!, 'http://test').searchParams.get('sessionId') ?? '');
        if (!transport) {
          response.writeHead(404).end();
          return;
        }
        await transport.handlePostMessage(request, response, await readJson(request));
        return;
      }
      response.writeHead(404).end();
    } catch (error) {
      if (!response.headersSent) response.writeHead(500).end(String(error));
    }
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  return {
    streamableUrl: `${base}/mcp`,
    sseUrl: `${base}/sse`,
    hangingUrl: `${base}/hang`,
    redirectingUrl: `${base}/redirect`,
    authorizations,
    calls,
    addTool: (name) => void extraTools.push(name),
    close: async () => {
      for (const response of hanging) response.destroy();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
