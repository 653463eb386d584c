import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction, Socket } from 'node:net';
import { isPrivateAddress } from './addresses.js';
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

type Resolve = (hostname: string) => Promise<Array<{ address: string; family: 4 | 6 }>>;

const systemResolve: Resolve = async (hostname) =>
  (await dnsLookup(hostname, { all: true })).map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));

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

/**
 * Resolves through `resolve` and, unless private targets are allowed, refuses a name when any of its
 * answers is private. It runs for every new connection, so a name that answered public when it was
 * saved and private now (DNS rebinding) never reaches the private address.
 */
function guardedLookup(resolve: Resolve, allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family;
    void resolve(hostname)
      .then((answers) => {
        const blocked = allowPrivate ? undefined : answers.find((answer) => isPrivateAddress(answer.address));
        if (blocked) throw new EgressRefusedError(`the target ${hostname} resolves to ${blocked.address}, a private network address`);
        const usable = answers.filter((answer) => !family || answer.family === family);
        if (!usable.length) throw Object.assign(new Error(`the target ${hostname} has no usable address`), { code: 'ENOTFOUND' });
        return usable;
      })
      .then(
        // Node asks for `all` when it races the addresses (autoSelectFamily, the default since Node 20).
        (usable) => (options.all ? callback(null, usable) : callback(null, usable[0].address, usable[0].family)),
        (error: Error) => callback(error, ''),
      );
  };
}

/** Last line behind the lookup and the literal check: the address the socket really reached. */
function guardSocket(socket: Socket, host: string) {
  const inspect = () => {
    const address = socket.remoteAddress;
    if (address && isPrivateAddress(address))
      socket.destroy(new EgressRefusedError(`the connection to ${host} reached ${address}, a private network address`));
  };
  // Prepended, so it runs before the request bytes queued while connecting are written.
  if (socket.connecting) socket.prependOnceListener('connect', inspect);
  else inspect();
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
