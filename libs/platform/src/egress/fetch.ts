import type { Socket } from 'node:net';
import { Agent, buildConnector, fetch as undiciFetch } from 'undici';
import { guardedLookup, guardSocket, refusedLiteral, systemResolve, type Resolve } from './connection-guard.js';
import { requestFetch } from './request-fetch.js';
import { EgressRefusedError } from './target.js';

export interface GuardedFetch {
  /**
   * A `fetch` for clients that take one (the AI SDK providers' `fetch` option): every connection it
   * opens is judged like the egress client's, and a response body streams as it arrives. Redirects
   * are not followed (a 3xx is the answer). A refused target rejects with the EgressRefusedError
   * itself, not fetch's TypeError("fetch failed"), which clients retry as a network failure.
   */
  fetch: typeof globalThis.fetch;
  /** Closes the kept-alive connections. */
  close(): Promise<void>;
}

export function createGuardedFetch(policy: {
  /** Private, loopback, link-local… targets allowed (Egress:AllowPrivateNetworkTargets). */
  allowPrivateNetworkTargets: boolean;
  /** Host-name resolution; default node:dns lookup with all: true. Tests inject one. */
  resolve?: Resolve;
}): GuardedFetch {
  const allowPrivate = policy.allowPrivateNetworkTargets;
  const connect = buildConnector({ lookup: guardedLookup(policy.resolve ?? systemResolve, allowPrivate) });
  const dispatcher = new Agent({
    // Here rather than before the request: a connection is opened for redirects and retries too, and pooled ones are reused.
    connect: (options, callback) => {
      const refused = allowPrivate ? undefined : refusedLiteral(options.hostname);
      if (refused) return callback(refused, null);
      // The connector returns the socket it opens (its type says void).
      const socket = connect(options, callback) as unknown as Socket;
      if (!allowPrivate) guardSocket(socket, options.host ?? options.hostname);
    },
  });
  // undici's own fetch (a dispatcher of this package cannot be handed to Node's built-in one), for what requestFetch leaves to it.
  const viaFetch = (input: Parameters<typeof globalThis.fetch>[0], init?: RequestInit) =>
    undiciFetch(input as Parameters<typeof undiciFetch>[0], {
      ...(init as Parameters<typeof undiciFetch>[1]),
      dispatcher,
      redirect: 'manual',
    }) as unknown as Promise<Response>;
  const viaRequest = requestFetch(dispatcher, viaFetch);
  const fetch = async (input: Parameters<typeof globalThis.fetch>[0], init?: RequestInit) => {
    // A Request of Node's built-in fetch is not one of undici's: its method, headers and body would be lost.
    if (typeof input !== 'string' && !(input instanceof URL)) throw new TypeError('the guarded fetch takes a URL and init, not a Request');
    try {
      return await viaRequest(input, init);
    } catch (error) {
      throw refusalIn(error) ?? error;
    }
  };
  return { fetch: fetch as unknown as typeof globalThis.fetch, close: () => dispatcher.close() };
}

function refusalIn(error: unknown): EgressRefusedError | undefined {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 4; cause = cause.cause, depth++)
    if (cause instanceof EgressRefusedError) return cause;
  return undefined;
}
