import { retryAfterSeconds } from './problem-error.js';

export interface RetryPolicy {
  /** Tries in all, the first included. */
  attempts: number;
  /** The first pause; each next one doubles (with jitter), up to `maxDelayMs`. */
  baseDelayMs: number;
  /** The longest pause; a `Retry-After` asking for more ends the retries (the caller sees its error). */
  maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { attempts: 4, baseDelayMs: 250, maxDelayMs: 10_000 };

export type Fetch = (request: Request) => Promise<Response>;

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Exponential backoff with jitter in [half, whole] of the step, so clients that failed together do not return together. */
export const backoffDelay = (policy: RetryPolicy, retry: number) =>
  Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1) * (0.5 + Math.random() / 2));

/** Only a POST carrying an Idempotency-Key can be sent again without doing its work twice: the gateway replays the first answer. */
const isRepeatable = (request: Request) => request.method === 'POST' && request.headers.has('idempotency-key');

/** 503 (draining, no provider), or 409 while the first request with this key is still executing. */
async function asksForRetry(response: Response): Promise<boolean> {
  if (response.status === 503) return true;
  if (response.status !== 409) return false;
  const errorType = await response
    .clone()
    .json()
    .then(
      (problem) => (problem as { errorType?: unknown } | null)?.errorType,
      () => undefined,
    );
  return errorType === 'idempotency_in_progress';
}

/**
 * A fetch that sends a keyed POST again, with the same key, after a network failure, a 503 or a 409
 * `idempotency_in_progress`: at most `attempts` times, pausing by backoff or as `Retry-After` says.
 * Any other request goes through once.
 */
export function createRetryingFetch(fetch: Fetch, policy: RetryPolicy): Fetch {
  return async (request) => {
    if (!isRepeatable(request) || policy.attempts <= 1) return fetch(request);
    for (let attempt = 1; ; attempt++) {
      const last = attempt >= policy.attempts;
      // The body can be read once: every try but the last sends a copy.
      const sent = last ? request : request.clone();
      let response: Response;
      try {
        response = await fetch(sent);
      } catch (error) {
        if (last || request.signal.aborted) throw error;
        await pause(backoffDelay(policy, attempt), request.signal);
        continue;
      }
      if (last || !(await asksForRetry(response))) return response;
      const retryAfter = retryAfterSeconds(response.headers);
      const delay = retryAfter === undefined ? backoffDelay(policy, attempt) : retryAfter * 1000;
      if (delay > policy.maxDelayMs) return response;
      await response.body?.cancel();
      await pause(delay, request.signal);
    }
  };
}
