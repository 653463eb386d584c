import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

/** Where an MCP tool server answers and how it is spoken to (API.md "Tool servers (MCP) and exposure"). */
export interface McpEndpoint {
  url: string;
  transport: 'streamable-http' | 'sse';
  /** Extra request headers, sent on every request. */
  headers: Record<string, string>;
  /** A configuration key whose value goes out as a bearer token. */
  secretKey: string | null;
}

export interface McpConnectSettings {
  /** Every connection goes through the egress guard (private targets refused unless allowed). */
  fetch: typeof globalThis.fetch;
  /** The value of the configuration key a server's `secretKey` names, or why there is none. */
  secret: (secretKey: string) => { value: string } | { error: string };
}

/** A secret a server names that is not configured: the connection is not tried. */
export class McpSecretMissingError extends Error {
  override name = 'McpSecretMissingError';
}

const CLIENT_INFO = { name: 'hangar', version: '1' };

/**
 * An MCP client connected (initialized) to the server, within `options` (signal and timeout of the
 * initialize request). The caller closes it.
 */
export async function connectMcp(endpoint: McpEndpoint, settings: McpConnectSettings, options: { signal: AbortSignal; timeout: number }) {
  let headers = endpoint.headers;
  if (endpoint.secretKey) {
    const secret = settings.secret(endpoint.secretKey);
    if ('error' in secret) throw new McpSecretMissingError(secret.error);
    headers = { ...headers, authorization: `Bearer ${secret.value}` };
  }
  const url = new URL(endpoint.url);
  const { fetch } = settings;
  const transport =
    endpoint.transport === 'sse'
      ? new SSEClientTransport(url, { requestInit: { headers }, eventSourceInit: { fetch }, fetch })
      : new StreamableHTTPClientTransport(url, { requestInit: { headers }, fetch });
  const client = new Client(CLIENT_INFO);
  try {
    await client.connect(transport, options);
  } catch (error) {
    await client.close().catch(() => {});
    throw error;
  }
  return client;
}

/** A sentence for an MCP failure: the error's own message, with its cause when it has one (a refused target). */
export function describeMcpError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : undefined;
  return cause && !message.includes(cause) ? `${message}: ${cause}` : message;
}
