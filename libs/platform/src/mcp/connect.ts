import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { HangarConfig } from '../config/schema.js';
import { namedSecret } from '../config/secrets.js';

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

/** The bearer token a tool server's `secretKey` names: `Hangar:McpSecrets:<name>`, under `Mcp:McpSecretsPrefix`. */
export function mcpSecretResolver(config: Pick<HangarConfig, 'Hangar' | 'Mcp'>): McpConnectSettings['secret'] {
  return (secretKey) => {
    const value = namedSecret(config.Hangar.McpSecrets, 'Hangar:McpSecrets:', config.Mcp.McpSecretsPrefix, secretKey);
    return value === undefined ? { error: `the secret "${secretKey}" is not configured (or not under Mcp:McpSecretsPrefix)` } : { value };
  };
}

/**
 * The guarded fetch with redirects refused: the SDK follows same-origin redirects itself (and
 * sends the bearer token again), where SPEC keeps redirects blocked for tool servers.
 */
function refusingRedirects(fetch: typeof globalThis.fetch): typeof globalThis.fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    if (response.status < 300 || response.status >= 400) return response;
    await response.body?.cancel().catch(() => {});
    throw new Error(`the tool server answered ${response.status} (a redirect, which is not followed)`);
  };
}

/** Rejects with the signal's reason once it aborts: for steps the SDK runs without the signal. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  let onAbort: () => void = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  return Promise.race([work, aborted]).finally(() => signal.removeEventListener('abort', onAbort));
}

/**
 * An MCP client connected (initialized) to the server, given up when `options.signal` aborts: the
 * SSE transport's wait for its endpoint and the `initialized` notification do not take the signal
 * themselves, so the whole connect is raced against it and the transport closed. Later requests
 * take the signal themselves. The caller closes the client.
 */
export async function connectMcp(endpoint: McpEndpoint, settings: McpConnectSettings, options: { signal: AbortSignal; timeout: number }) {
  let headers = endpoint.headers;
  if (endpoint.secretKey) {
    const secret = settings.secret(endpoint.secretKey);
    if ('error' in secret) throw new McpSecretMissingError(secret.error);
    headers = { ...headers, authorization: `Bearer ${secret.value}` };
  }
  const url = new URL(endpoint.url);
  const fetch = refusingRedirects(settings.fetch);
  const transport =
    endpoint.transport === 'sse'
      ? new SSEClientTransport(url, { requestInit: { headers }, eventSourceInit: { fetch }, fetch })
      : new StreamableHTTPClientTransport(url, { requestInit: { headers }, fetch });
  const client = new Client(CLIENT_INFO);
  try {
    await untilAborted(client.connect(transport, options), options.signal);
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
