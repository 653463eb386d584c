import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { once } from 'node:events';
import http from 'node:http';
import { BlockList, getDefaultAutoSelectFamily, isIP, setDefaultAutoSelectFamily, type AddressInfo, type Socket } from 'node:net';
import { setImmediate as nextTurn } from 'node:timers/promises';
import {
  checkEgressTarget,
  checkServiceEndpoint,
  createEgressClient,
  createGuardedFetch,
  EgressRefusedError,
  isPrivateAddress,
  type EgressClient,
  type GuardedFetch,
} from '@hangar/platform';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The egress guard: a refused target is never connected to, however it is spelled or whatever its
 * name resolves to; an allowed one is read within its time and size bounds.
 */

const MiB = 1024 * 1024;

/** A loopback HTTP server on 127.0.0.1 and ::1 (same port) that counts connections and requests. */
async function startServer(handler: http.RequestListener = (_request, response) => response.end('ok')) {
  const seen = { connections: 0, requests: [] as string[] };
  const servers = [http.createServer(handler), http.createServer(handler)];
  for (const server of servers) {
    server.on('connection', () => seen.connections++);
    server.on('request', (request: http.IncomingMessage) => seen.requests.push(request.url ?? ''));
  }
  servers[0].listen(0, '127.0.0.1');
  await once(servers[0], 'listening');
  const port = (servers[0].address() as AddressInfo).port;
  servers[1].listen(port, '::1');
  await once(servers[1], 'listening');
  const close = () =>
    Promise.all(
      servers.map((server) => {
        server.closeAllConnections();
        return new Promise((closed) => server.close(closed));
      }),
    );
  return { port, seen, close };
}

/** This machine may send nothing off loopback: every connection attempt of a client socket of this file is checked. */
const LOCAL = new BlockList();
LOCAL.addSubnet('127.0.0.0', 8, 'ipv4'); // also matches ::ffff:127.x, as BlockList maps IPv4 rules
LOCAL.addAddress('0.0.0.0', 'ipv4');
LOCAL.addAddress('::1', 'ipv6');
LOCAL.addAddress('::', 'ipv6');
const offMachine: string[] = [];
const recordAttempts = (message: unknown) =>
  (message as { socket: Socket }).socket.prependListener('connectionAttempt', (address: string) => {
    if (!LOCAL.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4')) offMachine.push(address);
  });
beforeAll(() => subscribe('net.client.socket', recordAttempts));
afterAll(() => {
  unsubscribe('net.client.socket', recordAttempts);
  expect(offMachine).toEqual([]);
});

/** Injected resolution for `.test` names; any other name is unknown (never the real DNS). */
const resolveFrom =
  (answers: Record<string, string[]>) =>
  async (hostname: string): Promise<Array<{ address: string; family: 4 | 6 }>> => {
    const addresses = answers[hostname];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

const NAMES = {
  'loopback.test': ['127.0.0.1'],
  'v6-loopback.test': ['::1'],
  'mapped.test': ['::ffff:127.0.0.1'],
  'metadata.test': ['169.254.169.254'],
  // A private answer among public ones: listed first, so a failing guard would reach the canary, not the internet.
  'mixed.test': ['127.0.0.1', '93.184.216.34'],
};

describe('SSRF: refused targets never reach the canary', () => {
  let canary: Awaited<ReturnType<typeof startServer>>;
  let clients: Record<'guarded' | 'system' | 'strict', EgressClient>;
  beforeAll(async () => {
    canary = await startServer();
    const policy = { allowPrivateNetworkTargets: false, allowInsecureHttp: true };
    clients = {
      guarded: createEgressClient({ ...policy, resolve: resolveFrom(NAMES) }),
      system: createEgressClient(policy),
      strict: createEgressClient({ ...policy, allowInsecureHttp: false, resolve: resolveFrom(NAMES) }),
    };
  });
  afterAll(async () => {
    for (const client of Object.values(clients)) client.close();
    await canary.close();
  });

  const refuse = async (client: EgressClient, url: string, reason = /private network address/) => {
    const error = await client
      .request(url.replace('PORT', String(canary.port)), { timeoutMs: 2000, maxResponseBytes: 1024 })
      .catch((e) => e);
    expect(error).toBeInstanceOf(EgressRefusedError);
    expect(error.reason).toMatch(reason);
  };

  const LITERALS = [
    'http://127.0.0.1:PORT/',
    'https://127.0.0.1:PORT/',
    'http://127.1:PORT/',
    'http://127.0.0.1.:PORT/',
    'http://127.255.255.254:PORT/',
    'http://2130706433:PORT/',
    'http://0x7f000001:PORT/',
    'http://0x7f.0.0.1:PORT/',
    'http://0x7f.1:PORT/',
    'http://0177.0.0.1:PORT/',
    'http://017700000001:PORT/',
    'http://127.000.000.001:PORT/',
    'http://%31%32%37.0.0.1:PORT/',
    'http://１２７.０.０.１:PORT/',
    'http://[::1]:PORT/',
    'https://[::1]:PORT/',
    'http://[::ffff:127.0.0.1]:PORT/',
    'http://[::ffff:7f00:1]:PORT/',
    'http://[0:0:0:0:0:ffff:127.0.0.1]:PORT/',
    'http://[::127.0.0.1]:PORT/',
    'http://[::ffff:0:7f00:1]:PORT/',
    'http://[64:ff9b::7f00:1]:PORT/',
    'http://[2002:7f00:1::]:PORT/',
    'http://0.0.0.0:PORT/',
    'http://0:PORT/',
    'http://[::]:PORT/',
    'http://10.0.0.1:PORT/',
    'http://172.16.0.1:PORT/',
    'http://172.31.255.255:PORT/',
    'http://192.168.1.1:PORT/',
    'http://169.254.169.254:PORT/latest/meta-data/',
    'http://[::ffff:a9fe:a9fe]:PORT/',
    'http://100.64.0.1:PORT/',
    'http://100.127.255.255:PORT/',
    'http://[fc00::1]:PORT/',
    'http://[fd12:3456::1]:PORT/',
    'http://[fe80::1]:PORT/',
    'http://224.0.0.1:PORT/',
    'http://[ff02::1]:PORT/',
    'http://255.255.255.255:PORT/',
    'http://240.0.0.1:PORT/',
    'http://198.18.0.1:PORT/',
    'http://192.0.0.1:PORT/',
    'http://[64:ff9b::10.0.0.1]:PORT/',
    'http://[2002:a00:1::]:PORT/',
  ];
  it.each(LITERALS)('refuses the IP literal %s', (url) => refuse(clients.guarded, url));

  it.each(Object.keys(NAMES))('refuses %s, whose injected resolution is private', (name) =>
    refuse(clients.guarded, `http://${name}:PORT/`),
  );
  it('refuses localhost through the real resolver', () => refuse(clients.system, 'http://localhost:PORT/'));
  it('refuses a URL with userinfo', () => refuse(clients.guarded, 'http://user:secret@loopback.test:PORT/', /user name or password/));
  it('refuses http: unless insecure http is allowed', () => refuse(clients.strict, 'http://127.0.0.1:PORT/', /must use https:/));

  it('resolves again for every connection, so a name that turns private (DNS rebinding) is refused each time', async () => {
    let calls = 0;
    const controllers: AbortController[] = [];
    const client = createEgressClient({
      allowPrivateNetworkTargets: false,
      allowInsecureHttp: true,
      resolve: async () => {
        calls++;
        if (calls % 2 === 0) return [{ address: '127.0.0.1', family: 4 }];
        // This machine may send nothing to a public address: the request is aborted while its name
        // resolves (after its socket is assigned), and Node checks for that before it connects.
        await nextTurn();
        controllers[calls - 1].abort();
        return [{ address: '93.184.216.34', family: 4 }];
      },
    });
    const outcomes: string[] = [];
    for (let attempt = 0; attempt < 6; attempt++) {
      controllers.push(new AbortController());
      const url = `http://rebind.test:${canary.port}/`;
      const error = await client
        .request(url, { timeoutMs: 2000, maxResponseBytes: 1024, signal: controllers[attempt].signal })
        .catch((e) => e);
      outcomes.push(error instanceof EgressRefusedError ? 'refused' : error.name);
    }
    client.close();
    expect(calls).toBe(6);
    expect(outcomes).toEqual(['AbortError', 'refused', 'AbortError', 'refused', 'AbortError', 'refused']);
  });

  describe('through the guarded fetch (tenant model providers)', () => {
    let guarded: GuardedFetch;
    let system: GuardedFetch;
    let resolved: string[];
    beforeAll(() => {
      resolved = [];
      const resolve = resolveFrom(NAMES);
      guarded = createGuardedFetch({
        allowPrivateNetworkTargets: false,
        resolve: (hostname) => (resolved.push(hostname), resolve(hostname)),
      });
      system = createGuardedFetch({ allowPrivateNetworkTargets: false });
    });
    afterAll(() => Promise.all([guarded.close(), system.close()]));

    const refuseFetch = async (fetch: typeof globalThis.fetch, url: string) => {
      const error = await fetch(url.replace('PORT', String(canary.port)), { method: 'POST', body: '{}' }).catch((e) => e);
      expect(error).toBeInstanceOf(EgressRefusedError);
      expect(error.reason).toMatch(/private network address/);
    };

    it.each(LITERALS)('refuses the IP literal %s', (url) => refuseFetch(guarded.fetch, url));
    it.each(Object.keys(NAMES))('refuses %s, whose injected resolution is private, over http: and https:', async (name) => {
      await refuseFetch(guarded.fetch, `http://${name}:PORT/v1/chat/completions`);
      await refuseFetch(guarded.fetch, `https://${name}:PORT/v1/chat/completions`);
    });
    it('refuses localhost through the real resolver', () => refuseFetch(system.fetch, 'http://localhost:PORT/'));

    it('resolves again for every connection: a refusal is not remembered, a name is asked each time', async () => {
      const before = resolved.length;
      for (let attempt = 0; attempt < 3; attempt++) await refuseFetch(guarded.fetch, 'http://loopback.test:PORT/');
      expect(resolved.slice(before)).toEqual(['loopback.test', 'loopback.test', 'loopback.test']);
    });
  });

  it('left the canary untouched', () => {
    expect(canary.seen).toEqual({ connections: 0, requests: [] });
  });
});

describe('checkEgressTarget', () => {
  const strict = { allowPrivateNetworkTargets: false, allowInsecureHttp: false };
  const refusal = (url: string, policy = strict) => {
    const result = checkEgressTarget(url, policy);
    return result.ok ? undefined : result.reason;
  };

  it('accepts a public https URL and hands back the parsed URL', () => {
    const result = checkEgressTarget('https://hooks.example.com/in?x=1', strict);
    expect(result.ok && result.url.href).toBe('https://hooks.example.com/in?x=1');
    expect(refusal('https://8.8.8.8/')).toBeUndefined();
    expect(refusal('https://[2606:4700:4700::1111]/')).toBeUndefined();
  });

  it('refuses http: unless insecure http is allowed', () => {
    expect(refusal('http://hooks.example.com/')).toBe('the target must use https: (it uses http:)');
    expect(refusal('http://hooks.example.com/', { ...strict, allowInsecureHttp: true })).toBeUndefined();
  });

  it('allows a private literal only when private targets are allowed', () => {
    expect(refusal('https://0x7f.1/')).toBe('the target 127.0.0.1 is a private network address');
    expect(refusal('https://[::ffff:10.0.0.1]/')).toBe('the target [::ffff:a00:1] is a private network address');
    expect(refusal('https://10.0.0.1/', { ...strict, allowPrivateNetworkTargets: true })).toBeUndefined();
  });

  it('does not resolve host names, but knows localhost names always mean this machine', () => {
    expect(refusal('https://internal.hooks.example/')).toBeUndefined();
    for (const name of ['localhost', 'LOCALHOST.', 'api.localhost'])
      expect(refusal(`https://${name}/`)).toBe(`the target ${name.toLowerCase()} is a private network address`);
    expect(refusal('https://localhost/', { ...strict, allowPrivateNetworkTargets: true })).toBeUndefined();
  });

  it('refuses other schemes, userinfo and garbage', () => {
    expect(refusal('ftp://files.example.com/', { ...strict, allowInsecureHttp: true })).toBe(
      'the target must use https: or http: (it uses ftp:)',
    );
    expect(refusal('file:///etc/passwd')).toMatch(/must use https:/);
    expect(refusal('https://user:pass@hooks.example.com/')).toBe('the target URL must not carry a user name or password');
    for (const garbage of ['', 'not a url', 'https://', 'https://[::1/', '//hooks.example.com/', 'https://300.0.0.1/'])
      expect(refusal(garbage)).toBe('the target is not a valid absolute URL');
  });
});

describe('checkServiceEndpoint (tenant providers, tool servers)', () => {
  const refusal = (url: string, allowPrivateNetworkTargets: boolean) => {
    const result = checkServiceEndpoint(url, { allowPrivateNetworkTargets });
    return result.ok ? undefined : result.reason;
  };

  it('accepts a public https endpoint and hands back the parsed URL', () => {
    const result = checkServiceEndpoint('https://api.example.com/v1', { allowPrivateNetworkTargets: false });
    expect(result.ok && result.url.href).toBe('https://api.example.com/v1');
    expect(refusal('https://api.example.com/v1', true)).toBeUndefined();
  });

  it('refuses a private target, over https: too, while private targets are refused', () => {
    for (const url of ['https://10.0.0.1/v1', 'https://169.254.169.254/', 'https://localhost:1234/', 'https://[::1]/'])
      expect(refusal(url, false)).toMatch(/is a private network address$/);
    for (const url of ['http://169.254.169.254/', 'http://localhost:1234', 'http://127.0.0.1:8080/v1'])
      expect(refusal(url, false)).toMatch(/is a private network address$/);
  });

  it('refuses plain http: to a public target, whatever the setting', () => {
    expect(refusal('http://api.example.com/v1', false)).toBe(
      'the target must use https: (plain http: only for a private target while Egress:AllowPrivateNetworkTargets is on)',
    );
    expect(refusal('http://8.8.8.8/v1', true)).toBe(
      'the target must use https: (plain http: only for a private IP address or localhost, and 8.8.8.8 is neither)',
    );
  });

  it('accepts plain http: to a sidecar (a private IP literal or localhost) while private targets are allowed', () => {
    for (const url of ['http://127.0.0.1:8080/v1', 'http://localhost:11434/v1', 'http://10.1.2.3/v1', 'http://[::1]:8080/'])
      expect(refusal(url, true)).toBeUndefined();
    expect(refusal('https://10.0.0.1/v1', true)).toBeUndefined();
  });

  it('refuses plain http: to a host name, which could answer public', () => {
    expect(refusal('http://model-sidecar:8080/v1', true)).toMatch(/model-sidecar is neither/);
  });

  it('refuses other schemes, userinfo and garbage', () => {
    expect(refusal('ftp://files.example.com/', true)).toMatch(/must use https: or http:/);
    expect(refusal('https://user:pass@api.example.com/', false)).toBe('the target URL must not carry a user name or password');
    expect(refusal('not a url', true)).toBe('the target is not a valid absolute URL');
  });
});

describe('allowed targets (private and http: allowed)', () => {
  const flood = { written: 0, finished: false, closed: false };
  const silent = { closed: false };
  let receiver: Awaited<ReturnType<typeof startServer>>;
  let client: EgressClient;
  /** Writes the stream route's next event; set while the server waits for the client to read the last one. */
  let readByClient: (() => void) | undefined;
  const url = (path: string) => `http://127.0.0.1:${receiver.port}${path}`;
  const bounds = { timeoutMs: 5000, maxResponseBytes: 64 * 1024 };

  beforeAll(async () => {
    receiver = await startServer((request, response) => {
      if (request.url === '/echo') {
        const chunks: Buffer[] = [];
        request.on('data', (chunk: Buffer) => chunks.push(chunk));
        request.on('end', () =>
          response.end(
            JSON.stringify({ method: request.method, marker: request.headers['x-marker'], body: Buffer.concat(chunks).toString() }),
          ),
        );
      } else if (request.url === '/redirect') {
        response.writeHead(302, { location: url('/landed') }).end();
      } else if (request.url === '/silent') {
        response.on('close', () => (silent.closed = true));
      } else if (request.url === '/flood') {
        const chunk = Buffer.alloc(64 * 1024, 'x');
        response.on('close', () => (flood.closed = true));
        const pump = () => {
          while (flood.written < 10 * MiB && !response.destroyed) {
            flood.written += chunk.length;
            if (!response.write(chunk)) return void response.once('drain', pump);
          }
          response.end(() => (flood.finished = true));
        };
        pump();
      } else if (request.url === '/stream') {
        // Three server-sent events, each written only once the client read the one before: a
        // client that buffered the body would wait for an end that never comes.
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        const events = ['one', 'two', 'three'];
        const next = () => {
          response.write(`data: ${events.shift()}\n\n`);
          if (events.length) readByClient = next;
          else response.end();
        };
        next();
      } else response.end('landed');
    });
    client = createEgressClient({
      allowPrivateNetworkTargets: true,
      allowInsecureHttp: true,
      resolve: resolveFrom({ 'receiver.test': ['127.0.0.1'] }),
    });
  });
  afterAll(async () => {
    client.close();
    await receiver.close();
  });

  it('sends the method, headers and body as given and returns the answer', async () => {
    const response = await client.request(url('/echo'), { ...bounds, headers: { 'x-marker': 'm1' }, body: 'payload' });
    expect(response.status).toBe(200);
    expect(response.truncated).toBe(false);
    expect(JSON.parse(response.body.toString())).toEqual({ method: 'POST', marker: 'm1', body: 'payload' });
    const get = await client.request(`http://receiver.test:${receiver.port}/echo`, bounds);
    expect(JSON.parse(get.body.toString())).toMatchObject({ method: 'GET', body: '' });
  });

  it('returns a redirect as it is and does not follow it', async () => {
    const response = await client.request(url('/redirect'), bounds);
    expect(response.status).toBe(302);
    expect(response.headers.location).toBe(url('/landed'));
    expect(receiver.seen.requests).not.toContain('/landed');
  });

  it('aborts a receiver that never answers at timeoutMs', async () => {
    const started = Date.now();
    await expect(client.request(url('/silent'), { ...bounds, timeoutMs: 300 })).rejects.toThrow(/timeout/);
    expect(Date.now() - started).toBeLessThan(1300);
    await expect.poll(() => silent.closed).toBe(true);
  });

  it('reads at most maxResponseBytes of a 10 MiB body and closes the connection', async () => {
    const response = await client.request(url('/flood'), bounds);
    expect(response).toMatchObject({ status: 200, truncated: true });
    expect(response.body.length).toBe(bounds.maxResponseBytes);
    await expect.poll(() => flood.closed).toBe(true);
    expect(flood.finished).toBe(false);
    expect(flood.written).toBeLessThan(10 * MiB);
  });

  it('opens no connection for a request whose signal is already aborted', async () => {
    const before = receiver.seen.connections;
    await expect(client.request(url('/echo'), { ...bounds, signal: AbortSignal.abort() })).rejects.toThrow(/abort/i);
    expect(receiver.seen.connections).toBe(before);
  });

  it('fails a refused connection with a message that says so', async () => {
    const closed = await startServer();
    await closed.close();
    await expect(client.request(`http://127.0.0.1:${closed.port}/`, bounds)).rejects.toThrow(
      /^connection to 127\.0\.0\.1:\d+ failed: .*ECONNREFUSED/,
    );
  });

  it('serves a lookup that Node calls without `all` (autoSelectFamily off) as well as with it', async () => {
    const guarded = createEgressClient({
      allowPrivateNetworkTargets: false,
      allowInsecureHttp: true,
      resolve: resolveFrom({ 'receiver.test': ['127.0.0.1'] }),
    });
    const before = getDefaultAutoSelectFamily();
    setDefaultAutoSelectFamily(false);
    try {
      const response = await client.request(`http://receiver.test:${receiver.port}/echo`, bounds);
      expect(response.status).toBe(200);
      await expect(guarded.request(`http://receiver.test:${receiver.port}/echo`, bounds)).rejects.toBeInstanceOf(EgressRefusedError);
    } finally {
      setDefaultAutoSelectFamily(before);
      guarded.close();
    }
  });

  describe('through the guarded fetch', () => {
    let guarded: GuardedFetch;
    beforeAll(() => {
      guarded = createGuardedFetch({ allowPrivateNetworkTargets: true, resolve: resolveFrom({ 'receiver.test': ['127.0.0.1'] }) });
    });
    afterAll(() => guarded.close());

    it('streams a response as it arrives: each event is read before the next is written', async () => {
      const response = await guarded.fetch(url('/stream'));
      expect(response.headers.get('content-type')).toBe('text/event-stream');
      const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
      const arrivals: string[] = [];
      for (let read = await reader.read(); !read.done; read = await reader.read()) {
        arrivals.push(read.value);
        const release = readByClient;
        readByClient = undefined;
        release?.();
      }
      expect(arrivals).toEqual(['data: one\n\n', 'data: two\n\n', 'data: three\n\n']);
    });

    it('sends the method, headers and body, and reaches a name through the injected resolver', async () => {
      const response = await guarded.fetch(`http://receiver.test:${receiver.port}/echo`, {
        method: 'POST',
        headers: { 'x-marker': 'f1', 'content-type': 'application/json' },
        body: '{"model":"m"}',
      });
      expect([response.status, await response.json()]).toEqual([200, { method: 'POST', marker: 'f1', body: '{"model":"m"}' }]);
    });

    it('returns a redirect as it is and does not follow it', async () => {
      const response = await guarded.fetch(url('/redirect'));
      expect([response.status, response.headers.get('location')]).toEqual([302, url('/landed')]);
      expect(receiver.seen.requests).not.toContain('/landed');
    });

    it('fails a connection that is not refused by the guard with fetch’s own error', async () => {
      const closed = await startServer();
      await closed.close();
      const error = await guarded.fetch(`http://127.0.0.1:${closed.port}/`).catch((e) => e);
      expect(error).toBeInstanceOf(TypeError);
      expect(error).not.toBeInstanceOf(EgressRefusedError);
    });

    it('takes a URL, not a Request of the built-in fetch', async () => {
      await expect(guarded.fetch(new Request(url('/echo')))).rejects.toThrow(/takes a URL/);
    });
  });
});

describe('isPrivateAddress', () => {
  it.each([
    ['8.8.8.8', false],
    ['1.1.1.1', false],
    ['93.184.216.34', false],
    ['172.32.0.1', false],
    ['100.128.0.1', false],
    ['2606:4700:4700::1111', false],
    ['2a00:1450:4001:80b::200e', false],
    ['::ffff:8.8.8.8', false],
    ['64:ff9b::808:808', false],
    ['2002:808:808::1', false],
    ['example.com', false],
    ['', false],
    ['127.0.0.1', true],
    ['0.0.0.0', true],
    ['10.255.255.255', true],
    ['172.16.0.0', true],
    ['192.168.0.1', true],
    ['169.254.169.254', true],
    ['100.64.0.1', true],
    ['192.0.0.8', true],
    ['192.0.2.1', true],
    ['198.19.255.255', true],
    ['203.0.113.7', true],
    ['239.255.255.250', true],
    ['255.255.255.255', true],
    ['::1', true],
    ['::', true],
    ['[::1]', true],
    ['fe80::1%eth0', true],
    ['fc00::1', true],
    ['fdff:ffff::1', true],
    ['ff02::1', true],
    ['::ffff:127.0.0.1', true],
    ['::ffff:7f00:1', true],
    ['::127.0.0.1', true],
    ['64:ff9b::192.168.0.1', true],
    ['64:ff9b:1::1', true],
    ['2002:c0a8:101::', true],
    ['2001:db8::1', true],
  ] as const)('%s → %s', (address, expected) => expect(isPrivateAddress(address)).toBe(expected));
});
