import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Discovery, DiscoveredTool, ToolServerInput } from './tool-server.model.js';

export interface McpDiscoverySettings {
  /** Every connection goes through the egress guard (private targets refused unless allowed). */
  fetch: typeof globalThis.fetch;
  /** `Mcp:ConnectionTimeout`: connecting and listing, together. */
  timeoutMs: number;
  /** `Mcp:MaxToolsPerServer`: a server listing more is refused, not cut silently. */
  maxTools: number;
  /** The bearer token a server's `secretKey` names; an error when it is not configured. */
  secret: (secretKey: string) => { value: string } | { error: string };
}

const CLIENT_INFO = { name: 'hangar', version: '1' };

/** The request headers a tool server gets: its own, and its secret as a bearer token. */
export function headersFor(
  server: ToolServerInput,
  settings: Pick<McpDiscoverySettings, 'secret'>,
): Record<string, string> | { error: string } {
  if (!server.secretKey) return server.headers;
  const secret = settings.secret(server.secretKey);
  if ('error' in secret) return secret;
  return { ...server.headers, authorization: `Bearer ${secret.value}` };
}

export function transportFor(server: ToolServerInput, headers: Record<string, string>, fetch: typeof globalThis.fetch): Transport {
  const url = new URL(server.url);
  return server.transport === 'sse'
    ? new SSEClientTransport(url, { requestInit: { headers }, eventSourceInit: { fetch }, fetch })
    : new StreamableHTTPClientTransport(url, { requestInit: { headers }, fetch });
}

/** Connects to an MCP server and lists its tools (every page), within the connection timeout. */
export async function discoverTools(server: ToolServerInput, settings: McpDiscoverySettings): Promise<Discovery> {
  const headers = headersFor(server, settings);
  if ('error' in headers) return { ok: false, error: String(headers.error) };
  const client = new Client(CLIENT_INFO);
  const deadline = AbortSignal.timeout(settings.timeoutMs);
  const options = { signal: deadline, timeout: settings.timeoutMs };
  try {
    await client.connect(transportFor(server, headers, settings.fetch), options);
    const tools: DiscoveredTool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor }, options);
      for (const tool of page.tools)
        tools.push({ name: tool.name, description: tool.description ?? '', inputSchema: tool.inputSchema as Record<string, unknown> });
      if (tools.length > settings.maxTools)
        return { ok: false, error: `the server lists more than ${settings.maxTools} tools (Mcp:MaxToolsPerServer)` };
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return { ok: true, tools };
  } catch (error) {
    if (deadline.aborted) return { ok: false, error: `no answer within ${settings.timeoutMs} ms (Mcp:ConnectionTimeout)` };
    return { ok: false, error: describe(error) };
  } finally {
    await client.close().catch(() => {});
  }
}

/** A sentence for the server's `error`: the error's own message, with its cause when it has one (a refused target). */
function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : undefined;
  return cause && !message.includes(cause) ? `${message}: ${cause}` : message;
}
