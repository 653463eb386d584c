import http from 'node:http';
import https from 'node:https';
import { guardedLookup, guardSocket, systemResolve, type Resolve } from './connection-guard.js';
import { checkEgressTarget, EgressRefusedError, type EgressPolicy } from './target.js';

export interface EgressRequest {
  /** Default POST when a body is given, else GET. */
  method?: string;
  /** Sent as given: the caller drops the names it reserves. */
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** The whole attempt (resolve, connect, response and its body); then it is aborted. */
  timeoutMs: number;
  /** Read at most this many body bytes, then stop reading and destroy the socket. */
  maxResponseBytes: number;
  signal?: AbortSignal;
}

export interface EgressResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** At most maxResponseBytes. */
  body: Buffer;
  truncated: boolean;
}

export interface EgressClient {
  /** Rejects with EgressRefusedError (refused target), or an Error whose message says timeout / connection failure. Never follows redirects: a 3xx is returned as is. */
  request(url: string, init: EgressRequest): Promise<EgressResponse>;
  /** Frees the keep-alive sockets. */
  close(): void;
}

export function createEgressClient(
  policy: EgressPolicy & {
    /** Host-name resolution; default node:dns lookup with all: true. Tests inject one (e.g. alternating public/private answers). */
    resolve?: Resolve;
  },
): EgressClient {
  const lookup = guardedLookup(policy.resolve ?? systemResolve, policy.allowPrivateNetworkTargets);
  const httpAgent = new http.Agent({ keepAlive: true, lookup });
  const httpsAgent = new https.Agent({ keepAlive: true, lookup });
  return {
    async request(url, init) {
      // Node does not call `lookup` for an IP-literal host, so the literal is judged here on every call.
      const target = checkEgressTarget(url, policy);
      if (!target.ok) throw new EgressRefusedError(target.reason);
      // Aborted before it starts, Node would still open the connection and pool it.
      init.signal?.throwIfAborted();
      const secure = target.url.protocol === 'https:';
      return send(
        target.url,
        init,
        secure ? https.request : http.request,
        secure ? httpsAgent : httpAgent,
        policy.allowPrivateNetworkTargets,
      );
    },
    close() {
      httpAgent.destroy();
      httpsAgent.destroy();
    },
  };
}

function send(
  target: URL,
  init: EgressRequest,
  open: typeof http.request,
  agent: http.Agent,
  allowPrivate: boolean,
): Promise<EgressResponse> {
  return new Promise((resolve, reject) => {
    const method = init.method ?? (init.body === undefined ? 'GET' : 'POST');
    const request = open(target, { method, headers: init.headers, agent, signal: init.signal });
    // Once settled, later errors of the same request (the destroy below, a closing socket) change nothing.
    const fail = (error: Error) => {
      clearTimeout(timer);
      request.destroy();
      reject(error);
    };
    const timer = setTimeout(() => fail(new Error(`${target.host} did not answer within ${init.timeoutMs} ms (timeout)`)), init.timeoutMs);

    if (!allowPrivate) request.on('socket', (socket) => guardSocket(socket, target.host));
    request.on('error', (error) => {
      if (error instanceof EgressRefusedError || error.name === 'AbortError') fail(error);
      else fail(new Error(`connection to ${target.host} failed: ${error.message}`, { cause: error }));
    });
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const finish = (truncated: boolean) => {
        clearTimeout(timer);
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks, size), truncated });
      };
      response.on('data', (chunk: Buffer) => {
        const room = init.maxResponseBytes - size;
        chunks.push(chunk.subarray(0, room));
        size += Math.min(chunk.length, room);
        if (chunk.length <= room) return;
        finish(true);
        // Destroys the socket too: the rest of the body is never read.
        response.destroy();
      });
      response.on('end', () => finish(false));
      response.on('error', (error) => fail(new Error(`${target.host} broke off its response: ${error.message}`, { cause: error })));
    });
    request.end(init.body);
  });
}
