import { describe, expect, it } from 'vitest';
import { createRetryingFetch, type RetryPolicy } from '../src/retrying-fetch.js';

const POLICY: RetryPolicy = { attempts: 3, baseDelayMs: 1, maxDelayMs: 50 };

const problem = (status: number, errorType: string, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify({ type: `urn:hangar:problem:${errorType}`, title: 'x', status, detail: 'x', errorType }), {
    status,
    headers: { 'content-type': 'application/problem+json', ...headers },
  });

/** A fetch answering from a script (a Response, or an Error to throw), recording what each call sent. */
function scriptedFetch(answers: Array<Response | Error>) {
  const sent: Array<{ method: string; key: string | null; body: string }> = [];
  const fetch = async (request: Request) => {
    sent.push({ method: request.method, key: request.headers.get('idempotency-key'), body: await request.text() });
    const answer = answers.shift();
    if (!answer) throw new Error('unscripted call');
    if (answer instanceof Error) throw answer;
    return answer;
  };
  return { fetch, sent };
}

const keyedPost = () =>
  new Request('http://hangar.test/api/agents', { method: 'POST', headers: { 'idempotency-key': 'k-1' }, body: '{"name":"a"}' });

describe('createRetryingFetch', () => {
  it('sends a keyed POST again with the same key and body after a network failure', async () => {
    const { fetch, sent } = scriptedFetch([new TypeError('fetch failed'), new Response('{}', { status: 201 })]);
    const response = await createRetryingFetch(fetch, POLICY)(keyedPost());
    expect(response.status).toBe(201);
    expect(sent).toEqual([
      { method: 'POST', key: 'k-1', body: '{"name":"a"}' },
      { method: 'POST', key: 'k-1', body: '{"name":"a"}' },
    ]);
  });

  it('waits out 409 idempotency_in_progress and 503, but not another 409', async () => {
    const { fetch, sent } = scriptedFetch([problem(409, 'idempotency_in_progress'), problem(503, 'draining'), new Response('{}')]);
    expect((await createRetryingFetch(fetch, POLICY)(keyedPost())).status).toBe(200);
    expect(sent).toHaveLength(3);

    const conflict = scriptedFetch([problem(409, 'conflict')]);
    expect((await createRetryingFetch(conflict.fetch, POLICY)(keyedPost())).status).toBe(409);
    expect(conflict.sent).toHaveLength(1);
  });

  it('honours Retry-After, and answers at once when it asks for longer than the longest pause', async () => {
    const { fetch, sent } = scriptedFetch([problem(503, 'draining', { 'retry-after': '0' }), new Response('{}')]);
    expect((await createRetryingFetch(fetch, POLICY)(keyedPost())).status).toBe(200);
    expect(sent).toHaveLength(2);

    const later = scriptedFetch([problem(503, 'draining', { 'retry-after': '60' })]);
    expect((await createRetryingFetch(later.fetch, POLICY)(keyedPost())).status).toBe(503);
    expect(later.sent).toHaveLength(1);
  });

  it('gives up after the policy’s attempts with the last failure', async () => {
    const failing = scriptedFetch([new TypeError('a'), new TypeError('b'), new TypeError('c'), new TypeError('d')]);
    await expect(createRetryingFetch(failing.fetch, POLICY)(keyedPost())).rejects.toThrow('c');
    expect(failing.sent).toHaveLength(3);

    const busy = scriptedFetch([problem(503, 'draining'), problem(503, 'draining'), problem(503, 'draining')]);
    expect((await createRetryingFetch(busy.fetch, POLICY)(keyedPost())).status).toBe(503);
    expect(busy.sent).toHaveLength(3);
  });

  it('sends a POST without a key, and any other method, once', async () => {
    for (const request of [
      new Request('http://hangar.test/api/agents', { method: 'POST', body: '{}' }),
      new Request('http://hangar.test/api/runs', { method: 'GET' }),
      new Request('http://hangar.test/api/agents/a', { method: 'PUT', headers: { 'idempotency-key': 'k' }, body: '{}' }),
    ]) {
      const { fetch, sent } = scriptedFetch([problem(503, 'draining')]);
      expect((await createRetryingFetch(fetch, POLICY)(request)).status).toBe(503);
      expect(sent).toHaveLength(1);
    }
  });

  it('stops waiting between tries when the request is aborted', async () => {
    const abort = new AbortController();
    const { fetch, sent } = scriptedFetch([new TypeError('fetch failed')]);
    const request = new Request(keyedPost(), { signal: abort.signal });
    const pending = createRetryingFetch(fetch, { ...POLICY, baseDelayMs: 10_000, maxDelayMs: 10_000 })(request);
    await new Promise((resolve) => setTimeout(resolve, 20));
    abort.abort(new Error('caller left'));
    await expect(pending).rejects.toThrow('caller left');
    expect(sent).toHaveLength(1);
  });
});
