import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDirectFetch, requestFetch } from '@hangar/platform';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The request-based fetch the model providers use: what the AI SDK reads from fetch — status,
 * headers, a body streamed as it arrives, fetch's errors on abort and on failed connections —
 * holds, against a real HTTP server on loopback.
 */

let server: http.Server;
let base: string;
const received: Array<{ method: string; url: string; headers: http.IncomingHttpHeaders; body: string }> = [];
/** Lets the streaming route write its next event. */
let writeNext: (() => void) | undefined;

beforeAll(async () => {
  server = http.createServer(async (request, response) => {
    let body = '';
    for await (const chunk of request) body += chunk;
    received.push({ method: request.method!, url: request.url!, headers: request.headers, body });
    switch (request.url) {
      case '/echo':
        response.writeHead(201, { 'content-type': 'application/json', 'set-cookie': ['a=1', 'b=2'] });
        response.end(JSON.stringify({ body }));
        return;
      case '/empty':
        response.writeHead(204).end();
        return;
      case '/moved':
        response.writeHead(307, { location: '/echo' }).end();
        return;
      case '/stream':
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        for (let event = 1; event <= 3; event++) {
          response.write(`data: ${event}\n\n`);
          await new Promise<void>((resolve) => (writeNext = resolve));
        }
        response.end();
        return;
      case '/many':
        // Each write is a chunk of its own in the chunked answer; they all arrive before the reader reads.
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        for (let event = 1; event <= 100; event++) response.write(`data: ${event}\n\n`);
        setTimeout(() => response.end(), 100);
        return;
      case '/cut':
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write('data: 1\n\n');
        setTimeout(() => request.socket.destroy(), 20);
        return;
      case '/hang':
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write('data: 1\n\n');
        return;
      default:
        response.writeHead(404).end();
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((closed) => server.close(closed));
});

const agent = new Agent();
afterAll(() => agent.close());
const unexpectedFallback = (() => {
  throw new Error('the fallback was not expected');
}) as unknown as typeof fetch;
const requested = requestFetch(agent, unexpectedFallback);
const decoder = new TextDecoder();

describe('requestFetch', () => {
  it('sends the method, headers and string body, and answers with the status, every header and the body', async () => {
    const response = await requested(`${base}/echo`, {
      method: 'post',
      headers: { authorization: 'Bearer k', 'x-two': 'yes' },
      body: '{"hi":1}',
    });
    expect(response.status).toBe(201);
    expect(response.statusText).toBe('Created');
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(await response.json()).toEqual({ body: '{"hi":1}' });
    const request = received.at(-1)!;
    expect(request).toMatchObject({ method: 'POST', url: '/echo', body: '{"hi":1}' });
    expect(request.headers).toMatchObject({ authorization: 'Bearer k', 'x-two': 'yes', 'content-type': 'text/plain;charset=UTF-8' });
  });

  it('takes Headers and bytes as fetch does', async () => {
    const response = await requested(new URL(`${base}/echo`), {
      method: 'PUT',
      headers: new Headers({ 'content-type': 'application/octet-stream' }),
      body: new TextEncoder().encode('bytes'),
    });
    expect(await response.json()).toEqual({ body: 'bytes' });
    expect(received.at(-1)!.headers['content-type']).toBe('application/octet-stream');
  });

  it('answers a 204 with no body', async () => {
    const response = await requested(`${base}/empty`, { method: 'DELETE' });
    expect(response.status).toBe(204);
    expect(response.body).toBeNull();
  });

  it('streams the body as it arrives: each event is read before the next is written', async () => {
    const response = await requested(`${base}/stream`);
    const reader = response.body!.getReader();
    const events: string[] = [];
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      events.push(decoder.decode(value));
      writeNext?.();
    }
    expect(events.join('')).toBe('data: 1\n\ndata: 2\n\ndata: 3\n\n');
    expect(events.length).toBeGreaterThanOrEqual(3);
  });

  it('hands over what arrived since the last read as one chunk, not one per chunk of the chunked answer', async () => {
    const response = await requested(`${base}/many`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const reads: string[] = [];
    for await (const bytes of response.body!) reads.push(decoder.decode(bytes));
    expect(reads.join('')).toBe(Array.from({ length: 100 }, (_, index) => `data: ${index + 1}\n\n`).join(''));
    expect(reads.length).toBeLessThanOrEqual(2);
  });

  it('fails a body cut off mid-way with fetch’s TypeError("terminated"), the socket’s error as its cause', async () => {
    const response = await requested(`${base}/cut`);
    const reader = response.body!.getReader();
    expect(decoder.decode((await reader.read()).value)).toBe('data: 1\n\n');
    const failure = await reader.read().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TypeError);
    expect((failure as TypeError).message).toBe('terminated');
    expect((failure as TypeError).cause).toBeInstanceOf(Error);
  });

  it('rejects with an AbortError when aborted before the answer, and fails the body with the signal’s reason after it', async () => {
    const before = new AbortController();
    before.abort();
    await expect(requested(`${base}/echo`, { signal: before.signal })).rejects.toMatchObject({ name: 'AbortError' });

    const during = new AbortController();
    const response = await requested(`${base}/hang`, { signal: during.signal });
    const reader = response.body!.getReader();
    await reader.read();
    const reason = new DOMException('stopped', 'AbortError');
    during.abort(reason);
    await expect(reader.read()).rejects.toBe(reason);
  });

  it('fails a connection that cannot be made with fetch’s TypeError("fetch failed") and its cause (the SDK retries on it)', async () => {
    const closed = http.createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const { port } = closed.address() as AddressInfo;
    await new Promise((done) => closed.close(done));
    const failure = await requested(`http://127.0.0.1:${port}/`).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TypeError);
    expect((failure as TypeError).message).toBe('fetch failed');
    expect(((failure as TypeError).cause as { code?: string }).code).toBe('ECONNREFUSED');
  });

  it('hands what it does not send itself (FormData, a Request) to the fallback', async () => {
    const seen: unknown[] = [];
    const fallback = (async (input: unknown) => {
      seen.push(input);
      return new Response('fallback');
    }) as typeof fetch;
    const withFallback = requestFetch(agent, fallback);
    expect(await (await withFallback(`${base}/echo`, { method: 'POST', body: new FormData() })).text()).toBe('fallback');
    const request = new Request(`${base}/echo`);
    expect(await (await withFallback(request)).text()).toBe('fallback');
    expect(seen).toEqual([`${base}/echo`, request]);
  });

  it('does not follow a redirect unless its dispatcher does; the direct fetch follows it as fetch would', async () => {
    expect((await requested(`${base}/moved`, { method: 'POST', body: 'x' })).status).toBe(307);
    const direct = createDirectFetch();
    try {
      const response = await direct.fetch(`${base}/moved`, { method: 'POST', body: 'again' });
      expect(response.status).toBe(201);
      expect(await response.json()).toEqual({ body: 'again' });
    } finally {
      await direct.close();
    }
  });
});
