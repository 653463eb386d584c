import { ServerResponse, type IncomingMessage, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Express } from 'express';

interface PendingUpgrade {
  socket: Duplex;
  head: Buffer;
  response: ServerResponse;
  /** The socket is the accepting route's now: a stop no longer destroys it as a pending handshake. */
  accepted(): void;
}

const pending = new WeakMap<IncomingMessage, PendingUpgrade>();
// A handshake is answered at once; a socket still unanswered after this is a client holding it open.
const HANDSHAKE_TIMEOUT_MS = 30_000;

/**
 * Upgrade requests (a WebSocket's opening handshake) go through the express app like any request,
 * so authentication, tenancy, rate limits and policies apply to them unchanged; the response is
 * bound to the socket, so a refusal is an ordinary problem+json answer, after which the socket is
 * destroyed. A route that accepts takes the socket with {@link takeUpgrade}. The returned function
 * destroys the handshakes still pending (a stop).
 */
export function routeUpgrades(server: Server, app: Express): () => void {
  const unanswered = new Set<Duplex>();
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    unanswered.add(socket);
    socket.on('error', () => socket.destroy());
    socket.once('close', () => unanswered.delete(socket));
    // An HTTP server's upgrade socket is a net.Socket (a TLS one is too).
    (socket as Socket).setTimeout(HANDSHAKE_TIMEOUT_MS, () => socket.destroy());
    const response = new ServerResponse(request);
    response.shouldKeepAlive = false;
    response.assignSocket(socket as never);
    // Refused: once the answer is written the socket goes, whatever the client does with its side.
    response.once('finish', () => (socket as Socket).destroySoon());
    pending.set(request, { socket, head, response, accepted: () => unanswered.delete(socket) });
    app(request, response);
  });
  return () => {
    for (const socket of unanswered) socket.destroy();
  };
}

/**
 * The socket of an upgrade request, detached from its HTTP response (which then closes: the
 * handshake's trace and duration end there); undefined for a plain request.
 */
export function takeUpgrade(request: IncomingMessage): { socket: Duplex; head: Buffer } | undefined {
  const upgrade = pending.get(request);
  if (!upgrade) return undefined;
  pending.delete(request);
  const { socket, response } = upgrade;
  upgrade.accepted();
  response.detachSocket(socket as never);
  (socket as Socket).setTimeout(0);
  response.statusCode = 101;
  response.emit('close');
  return { socket, head: upgrade.head };
}
