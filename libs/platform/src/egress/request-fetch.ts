import { STATUS_CODES } from 'node:http';
import type { Readable } from 'node:stream';
import { Agent, interceptors, request, type Dispatcher } from 'undici';

type Fetch = typeof globalThis.fetch;

/** Statuses whose response has no body (the Response constructor refuses one). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/**
 * A `fetch` for the AI SDK providers' `fetch` option, built on undici's `request`: fetch's WHATWG
 * machinery (its Request, controller and body mixins) costs about half a millisecond and some CPU
 * per call, which a model call pays before its first token (measured on loopback: first byte after
 * 1.0 ms instead of 1.5). What providers send — a string, bytes or no body, from a URL — goes this
 * way; anything else (a Request, FormData, a stream) goes to `fallback`.
 *
 * It keeps what the SDK relies on: the answer streams as it arrives, an abort rejects (or fails the
 * body) with an AbortError, and a connection that fails rejects with fetch's `TypeError('fetch
 * failed')` carrying the cause (the SDK retries and falls back on that). Redirects are followed as
 * far as `dispatcher` follows them; the body is not decompressed, so none is asked for.
 */
export function requestFetch(dispatcher: Dispatcher, fallback: Fetch): Fetch {
  return async (input, init) => {
    const body = init?.body;
    const plainBody = body === undefined || body === null || typeof body === 'string' || body instanceof Uint8Array;
    if ((typeof input !== 'string' && !(input instanceof URL)) || !plainBody) return fallback(input, init);
    const method = (init?.method ?? 'GET').toUpperCase();
    const headers = new Headers(init?.headers);
    if (typeof body === 'string' && !headers.has('content-type')) headers.set('content-type', 'text/plain;charset=UTF-8');
    let answer: Dispatcher.ResponseData;
    try {
      answer = await request(input, {
        dispatcher,
        method: method as Dispatcher.HttpMethod,
        headers: Object.fromEntries(headers),
        body: body ?? undefined,
        signal: init?.signal ?? undefined,
      });
    } catch (error) {
      if ((error as Error)?.name === 'AbortError' || init?.signal?.aborted) throw error;
      throw new TypeError('fetch failed', { cause: error });
    }
    const { statusCode, headers: received, body: stream } = answer;
    const responseHeaders = new Headers();
    for (const [name, value] of Object.entries(received)) {
      if (Array.isArray(value)) for (const item of value) responseHeaders.append(name, item);
      else if (value !== undefined) responseHeaders.set(name, value);
    }
    const empty = NULL_BODY_STATUSES.has(statusCode) || method === 'HEAD';
    if (empty) await stream.dump();
    return new Response(empty ? null : webBody(stream, init?.signal ?? undefined), {
      status: statusCode,
      statusText: STATUS_CODES[statusCode] ?? '',
      headers: responseHeaders,
    });
  };
}

/**
 * The {@link requestFetch} of the operator's own providers: their endpoints are configuration, not
 * a tenant's input, so no egress guard; redirects are followed as fetch follows them (up to 20).
 */
export function createDirectFetch(): { fetch: Fetch; close(): Promise<void> } {
  const agent = new Agent();
  return {
    fetch: requestFetch(agent.compose(interceptors.redirect({ maxRedirections: 20 })), globalThis.fetch),
    close: () => agent.close(),
  };
}

/**
 * The answer's body as fetch gives it: bytes as they arrive, read no further ahead than asked; a
 * body cut off fails with fetch's `TypeError('terminated')` (its cause the socket's error), an
 * aborted one with the signal's reason; canceling it closes the connection.
 */
function webBody(stream: Readable, signal: AbortSignal | undefined): ReadableStream<Uint8Array> {
  // Once closed, errored or canceled, the web stream takes nothing more (its controller would throw).
  let settled = false;
  let body!: ReadableStreamDefaultController<Uint8Array>;
  // What arrived since the last read goes on as one chunk (undici hands over each chunk of a chunked
  // answer on its own, a few bytes each for a streamed model answer), as much as the reader asks for.
  const pass = () => {
    for (let chunk: Buffer | null; !settled && (body.desiredSize ?? 0) > 0 && (chunk = stream.read()) !== null;)
      body.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
  };
  return new ReadableStream<Uint8Array>({
    start(controller) {
      body = controller;
      stream.on('readable', pass);
      stream.once('end', () => {
        if (settled) return;
        settled = true;
        controller.close();
      });
      stream.on('error', (error) => {
        if (settled) return;
        settled = true;
        controller.error(signal?.aborted ? signal.reason : new TypeError('terminated', { cause: error }));
      });
    },
    pull: pass,
    cancel(reason) {
      settled = true;
      stream.destroy(reason instanceof Error ? reason : undefined);
    },
  });
}
