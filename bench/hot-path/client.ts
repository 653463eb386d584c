import { Agent, request, type IncomingMessage } from 'node:http';

/** Who a workload talks to: Hangar, the raw proxy, or the mock itself (same model names everywhere). */
export interface Target {
  name: string;
  url: string;
  /** The request that runs model/agent `name`; `json` asks for one JSON response (Idempotency-Key). */
  run(name: string, json?: string): { path: string; headers: Record<string, string>; body: string };
  /** Whether an SSE frame carries a token. */
  isToken(frame: string): boolean;
}

const RUN_BODY = JSON.stringify({ message: 'hi' });

/** Hangar and the proxy answer the same routes; Hangar's tokens are `update` frames. */
export function apiTarget(name: string, url: string, token?: string): Target {
  return {
    name,
    url,
    run: (agent, json) => ({
      path: `/api/agents/${agent}/run`,
      headers: {
        'content-type': 'application/json',
        ...(token && { authorization: `Bearer ${token}` }),
        ...(json && { 'idempotency-key': json }),
      },
      body: RUN_BODY,
    }),
    isToken: (frame) => frame.startsWith('event: update') || frame.includes('"content"'),
  };
}

/** Hangar's OpenAI-compatible route: a streamed chat completion on the agent; tokens are chunks with text. */
export function compatibleTarget(url: string, token: string): Target {
  return {
    name: 'Hangar /v1',
    url,
    run: (agent) => ({
      path: '/v1/chat/completions',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ model: agent, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    }),
    // The first chunk carries the role and an empty content: not a token yet.
    isToken: (frame) => /"content":"[^"]/.test(frame),
  };
}

/** The mock's own chat-completions endpoint. */
export function directTarget(mockUrl: string): Target {
  const base = new URL(mockUrl);
  return {
    name: 'mock directly',
    url: base.origin,
    run: (model) => ({
      path: `${base.pathname}/chat/completions`,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    }),
    isToken: (frame) => frame.includes('"content"'),
  };
}

export interface Exchange {
  status: number;
  /** Milliseconds from sending the request to the response headers. */
  headersMs: number;
  /** The whole body when `keepBody` (small answers only). */
  body: string;
  /** Arrival times (ms since sending) of token frames. */
  tokenTimes: number[];
  /** Names of the SSE events seen (`event:` lines), in order, when `keepEvents`. */
  events: string[];
}

export interface SendOptions {
  method?: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
  agent?: Agent | false;
  isToken?: (frame: string) => boolean;
  keepBody?: boolean;
  /** Called per complete SSE frame; return true to stop reading (the request is destroyed). */
  onFrame?: (frame: string) => boolean | void;
  /** Resolves at the response headers instead of the end; the caller owns `response`. */
  untilHeaders?: boolean;
  /** The whole exchange (to the headers with `untilHeaders`) must be done within this, or it is destroyed. */
  timeoutMs?: number;
}

/** One HTTP exchange over node:http, timing each SSE frame's arrival; rejects on socket errors and timeouts. */
export function send(baseUrl: string, options: SendOptions): Promise<Exchange & { response: IncomingMessage }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const result: Exchange = { status: 0, headersMs: 0, body: '', tokenTimes: [], events: [] };
    const url = new URL(options.path, baseUrl);
    const call = request(url, { method: options.method ?? 'POST', headers: options.headers, agent: options.agent }, (response) => {
      result.status = response.statusCode ?? 0;
      result.headersMs = performance.now() - started;
      if (options.untilHeaders) {
        clearTimeout(timer);
        return resolve({ ...result, response });
      }
      let pending = '';
      response.setEncoding('utf8');
      response.on('data', (text: string) => {
        const at = performance.now() - started;
        if (options.keepBody) result.body += text;
        pending += text;
        let end: number;
        while ((end = pending.indexOf('\n\n')) >= 0) {
          const frame = pending.slice(0, end);
          pending = pending.slice(end + 2);
          if (options.isToken?.(frame)) result.tokenTimes.push(at);
          if (frame.startsWith('event: ')) result.events.push(frame.slice(7, frame.indexOf('\n')));
          if (options.onFrame?.(frame)) {
            clearTimeout(timer);
            call.destroy();
            return resolve({ ...result, response });
          }
        }
      });
      response.on('end', () => {
        clearTimeout(timer);
        resolve({ ...result, response });
      });
      response.on('error', reject);
    });
    call.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    const timer = options.timeoutMs
      ? setTimeout(() => call.destroy(new Error(`not answered within ${options.timeoutMs} ms`)), options.timeoutMs)
      : undefined;
    call.end(options.body);
  });
}

/** A short label for a failed exchange: the error code and message (`ECONNRESET socket hang up`). */
export const errorKind = (error: unknown) => {
  const { code, message } = error as NodeJS.ErrnoException;
  return [code, message].filter(Boolean).join(' ');
};

export const percentile = (values: number[], p: number) => {
  if (!values.length) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};

export const ms = (value: number) => `${value.toFixed(1)} ms`;
export const ratio = (hangar: number, baseline: number) => `×${(hangar / baseline).toFixed(2)}`;
export const diff = (hangar: number, baseline: number, unit = 'ms') =>
  `${hangar - baseline >= 0 ? '+' : ''}${(hangar - baseline).toFixed(1)} ${unit}`;
