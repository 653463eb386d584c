import { request as httpRequestRaw } from 'node:http';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { allInOneModules } from '@hangar/all-in-one';
import { abortedRequestCount } from '@hangar/gateway';
import { startHangar, startMockOpenAI, TEST_TOKEN, type HangarUnderTest, type HttpResult, type MockOpenAI } from '@hangar/testing';
import { expectProblem } from '@hangar/testing/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** Regressions of the hostile-input review (issue 9): each request here once froze the process or answered 500. */

let hangar: HangarUnderTest;
let mock: MockOpenAI;
const AUTH = { authorization: `Bearer ${TEST_TOKEN}` };

beforeAll(async () => {
  mock = await startMockOpenAI();
  mock.script('nul', () => ({ text: 'a\u0000b c', usage: { prompt: 1, completion: 2 } }));
  hangar = await startHangar({
    modules: allInOneModules(),
    overrides: { Providers: { mock: { Kind: 'OpenAICompatible', Endpoint: mock.url } } },
  });
  for (const [name, model] of [
    ['target', { provider: 'demo', model: 'echo' }],
    ['nul-speaker', { provider: 'mock', model: 'nul' }],
  ] as const) {
    const created = await hangar.request('POST', '/api/agents', { body: { name, model } });
    expect(created.status, created.text).toBe(201);
  }
});

afterAll(async () => {
  await hangar?.stop();
  await mock?.close();
});

/** One request with the path and body exactly as given (no URL normalization), read to the end. */
function raw(
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: Buffer | string } = {},
): Promise<HttpResult> {
  const base = new URL(hangar.url);
  return new Promise((resolve, reject) => {
    const call = httpRequestRaw(
      { host: base.hostname, port: base.port, method, path, headers: { ...AUTH, ...options.headers } },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => {
          let body: unknown;
          try {
            body = JSON.parse(text);
          } catch {
            body = undefined;
          }
          resolve({ status: response.statusCode!, headers: new Headers(response.headers as Record<string, string>), text, body });
        });
      },
    );
    call.on('error', reject);
    call.end(options.body);
  });
}

/** Polls /healthz every 10 ms while `work` runs; the slowest answer is how long the process was held. */
async function slowestHealthzDuring<T>(work: () => Promise<T>): Promise<{ result: T; slowestMs: number }> {
  let running = true;
  let slowestMs = 0;
  const poller = (async () => {
    while (running) {
      const started = performance.now();
      await fetch(`${hangar.url.replace(/\/$/, '')}/healthz`);
      slowestMs = Math.max(slowestMs, performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })();
  try {
    return { result: await work(), slowestMs };
  } finally {
    running = false;
    await poller;
  }
}

describe('one request never stalls the process', () => {
  // Before: 16,000 × "A" held the event loop 25.8 s; 70,000 got no answer within 60 s.
  it.each([
    ['one letter', 'A'],
    ['punctuation', '!'],
  ])('an estimate of 1,000,000 × %s (a body just under 1 MiB) answers within 1 s while /healthz stays under 100 ms', async (_, letter) => {
    await hangar.request('POST', '/api/agents/target/estimate', { body: { message: 'warm the tokenizer up' } });
    // The largest message a run request takes (1,000,000 characters), in a body just under the 1 MiB limit.
    const message = letter.repeat(1_000_000);
    const { result, slowestMs } = await slowestHealthzDuring(async () => {
      const started = performance.now();
      const answer = await hangar.request('POST', '/api/agents/target/estimate', { body: { message } });
      return { answer, elapsedMs: performance.now() - started };
    });
    expect(result.answer.status, result.answer.text).toBe(200);
    expect(result.answer.body.estimatedPromptTokens).toBeGreaterThan(1000);
    expect(result.elapsedMs).toBeLessThan(1000);
    expect(slowestMs).toBeLessThan(100);
  });
});

describe('malformed percent-encoding in a path names no record: 404, never 500', () => {
  it.each(['%ZZ', '%', '%C0%AF', '%ED%A0%80', '%FF%FE', 'target%'])('GET /api/agents/%s', async (segment) => {
    expectProblem(await raw('GET', `/api/agents/${segment}`), 404, 'not_found');
  });

  it('in other routes too', async () => {
    expectProblem(await raw('GET', '/api/runs/%ZZ'), 404, 'not_found');
    expectProblem(await raw('GET', '/api/sessions/%C0%AF/messages'), 404, 'not_found');
    expectProblem(
      await raw('POST', '/api/agents/%FF/run', { headers: { 'content-type': 'application/json' }, body: '{"message":"hi"}' }),
      404,
      'not_found',
    );
  });
});

describe('a NUL character never reaches a store', () => {
  it('in a path: no record has such a name (404)', async () => {
    expectProblem(await raw('GET', '/api/agents/a%00b'), 404, 'not_found');
    expectProblem(await raw('GET', '/api/agents/a%00b/versions'), 404, 'not_found');
  });

  it.each([
    '/api/runs?agentName=%00',
    '/api/runs?sessionId=a%00',
    '/api/runs?errorType=%00x',
    '/api/runs?userId=%00',
    '/api/runs?label=k%3Dv%00',
    '/api/sessions?agentName=%00',
    '/api/attachments?sessionId=%00',
    '/api/audit?action=%00',
  ])('in a query (%s): 400 naming the parameter', async (path) => {
    const result = await raw('GET', path);
    expectProblem(result, 400, 'validation_failed');
    expect(JSON.stringify(result.body.errors)).toContain(new URLSearchParams(path.split('?')[1]).keys().next().value);
  });

  it.each([
    [
      'an agent description',
      'POST',
      '/api/agents',
      { name: 'nul', description: 'a\u0000b', model: { provider: 'demo', model: 'echo' } },
      'description',
    ],
    ['an agent model', 'POST', '/api/agents', { name: 'nul', model: { provider: 'demo', model: 'e\u0000' } }, 'model.model'],
    ['a run message', 'POST', '/api/agents/target/run', { message: 'a\u0000b', sessionId: 's1' }, 'message'],
    ['an object key', 'POST', '/api/agents/target/run', { message: 'hi', parameters: { 'k\u0000': 'v' } }, 'parameters'],
  ])('in a body (%s): 400 naming the field, nothing stored', async (_, method, path, body, field) => {
    const result = await hangar.request(method, path, { body, headers: { 'idempotency-key': `nul-${field}` } });
    expectProblem(result, 400, 'validation_failed');
    expect(result.body.errors[0].path).toContain(field);
    expectProblem(await hangar.request('GET', '/api/agents/nul'), 404, 'not_found');
  });

  it('a model answering a NUL completes its run: the caller gets the answer, the stores keep U+FFFD', async () => {
    const answered = await hangar.request('POST', '/api/agents/nul-speaker/run', {
      body: { message: 'hi', sessionId: 'nul-session' },
      headers: { 'idempotency-key': 'nul-answer' },
    });
    expect(answered.status, answered.text).toBe(200);
    expect(answered.body).toMatchObject({ status: 'Completed', output: { text: 'a\u0000b c' } });
    const events = (await hangar.request('GET', `/api/runs/${answered.body.runId}/events`)).text;
    expect(events).toContain('"text":"a\ufffdb c"');
    expect(events).toContain('event: run.completed');
    const history = await hangar.request('GET', '/api/sessions/nul-session');
    expect(JSON.stringify(history.body)).toContain('a\ufffdb c');
  });

  it('a run with a NUL in its message is refused in every mode, before any run exists', async () => {
    const before = (await hangar.request('GET', '/api/runs?agentName=target')).body.length;
    const modes: Array<Record<string, string>> = [{}, { prefer: 'respond-async' }, { accept: 'text/event-stream' }];
    for (const headers of modes) {
      expectProblem(
        await hangar.request('POST', '/api/agents/target/run', { body: { message: 'a\u0000b' }, headers }),
        400,
        'validation_failed',
      );
    }
    expect((await hangar.request('GET', '/api/runs?agentName=target')).body.length).toBe(before);
  });
});

describe('bodies that do not decode', () => {
  it.each(['gzip', 'deflate', 'br'])('Content-Encoding %s over a body that is not: 400', async (encoding) => {
    const result = await raw('POST', '/api/agents', {
      headers: { 'content-type': 'application/json', 'content-encoding': encoding },
      body: 'not gzip at all',
    });
    expectProblem(result, 400, 'validation_failed');
  });

  it('a real gzip body still works, and a compression bomb is still 413', async () => {
    const ok = await raw('POST', '/api/agents/target/estimate', {
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync(JSON.stringify({ message: 'hello' })),
    });
    expect(ok.status, ok.text).toBe(200);
    const bomb = await raw('POST', '/api/agents/target/estimate', {
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync(JSON.stringify({ message: 'A'.repeat(8 * 1024 * 1024) })),
    });
    expectProblem(bomb, 413, 'payload_too_large');
  });

  it('JSON nested 20,000 deep (with an Idempotency-Key) is 400, on every JSON route', async () => {
    const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
    for (const path of ['/api/agents', '/api/agents/target/run', '/api/agents/validate']) {
      const result = await raw('POST', path, {
        headers: { 'content-type': 'application/json', 'idempotency-key': `deep-${path}` },
        body: `{"message":"hi","parameters":{"x":${deep}}}`,
      });
      expectProblem(result, 400, 'validation_failed');
      expect(result.body.errors[0].message).toMatch(/nested deeper than 64/);
    }
  });

  it('a body cut off by its client is counted, not answered as a server error', async () => {
    const before = abortedRequestCount();
    const base = new URL(hangar.url);
    await new Promise<void>((resolve) => {
      const call = httpRequestRaw({
        host: base.hostname,
        port: base.port,
        method: 'POST',
        path: '/api/agents',
        headers: { ...AUTH, 'content-type': 'application/json', 'content-length': '1000' },
      });
      call.on('error', () => resolve());
      call.write('{"name":"cut');
      setTimeout(() => call.destroy(), 50);
    });
    await expect.poll(() => abortedRequestCount(), { timeout: 2000 }).toBe(before + 1);
    expect((await hangar.request('GET', '/healthz')).status).toBe(200);
  });
});

describe('requests that are not valid HTTP', () => {
  it.each([
    ['a body beyond its framing', 'GET /api/agents HTTP/1.1\r\nHost: x\r\n\r\njunk\r\n\r\n'],
    ['a header without a colon', 'GET /api/agents HTTP/1.1\r\nHost: x\r\nbroken header\r\n\r\n'],
    ['headers beyond 16 KiB', `GET /api/agents HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`],
  ])('%s: answered with problem+json, the process goes on', async (_, message) => {
    const base = new URL(hangar.url);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(base.port), base.hostname, () => socket.end(message));
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString()));
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
    });
    const last = answer.slice(answer.lastIndexOf('HTTP/1.1 '));
    expect(last).toMatch(/^HTTP\/1\.1 4(00|31) /);
    expect(last).toContain('Content-Type: application/problem+json');
    expect(JSON.parse(last.slice(last.indexOf('\r\n\r\n') + 4))).toMatchObject({ errorType: 'validation_failed' });
    expect((await hangar.request('GET', '/healthz')).status).toBe(200);
  });
});
