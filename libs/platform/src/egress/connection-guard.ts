import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupFunction, Socket } from 'node:net';
import { isPrivateAddress } from './addresses.js';
import { EgressRefusedError } from './target.js';

/** Host-name resolution, every answer of a name (node:dns lookup with all: true, or a test's). */
export type Resolve = (hostname: string) => Promise<Array<{ address: string; family: 4 | 6 }>>;

export const systemResolve: Resolve = async (hostname) =>
  (await dnsLookup(hostname, { all: true })).map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));

/**
 * Resolves through `resolve` and, unless private targets are allowed, refuses a name when any of its
 * answers is private. It runs for every new connection, so a name that answered public when it was
 * saved and private now (DNS rebinding) never reaches the private address.
 */
export function guardedLookup(resolve: Resolve, allowPrivate: boolean): LookupFunction {
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

/** Node calls no `lookup` for an IP-literal host: a private literal is refused before any connection is opened. */
export function refusedLiteral(hostname: string): EgressRefusedError | undefined {
  return isPrivateAddress(hostname) ? new EgressRefusedError(`the target ${hostname} is a private network address`) : undefined;
}

/** Last line behind the lookup and the literal check: the address the socket really reached. */
export function guardSocket(socket: Socket, host: string) {
  const inspect = () => {
    const address = socket.remoteAddress;
    if (address && isPrivateAddress(address))
      socket.destroy(new EgressRefusedError(`the connection to ${host} reached ${address}, a private network address`));
  };
  // Prepended, so it runs before the request bytes queued while connecting are written.
  if (socket.connecting) socket.prependOnceListener('connect', inspect);
  else inspect();
}
