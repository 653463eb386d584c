import { randomUUID } from 'node:crypto';
import { EgressRefusedError, type EgressClient, type Logger } from '@hangar/platform';
import type { AttemptOutcome, DueDelivery, WebhookRepository } from './webhook.repository.js';
import { isUsableSecret, signatureHeaders } from './webhook-signing.js';

export interface DeliverySettings {
  /** `Webhooks:Timeout`: one attempt, connection to last byte read. */
  timeoutMs: number;
  /** `Webhooks:MaxResponseBytes`: read at most this much of an answer. */
  maxResponseBytes: number;
  /** `Webhooks:RetryDelays`: the pause before each retry; after the last, the delivery is Abandoned. */
  retryDelaysMs: number[];
  /** `Webhooks:DisableAfterConsecutiveFailures`. */
  disableAfter: number;
  /** Attempts in flight at once in this process. */
  concurrency: number;
  /** How often due deliveries are looked for when nothing nudges the worker (other instances' work, takeovers). */
  pollIntervalMs: number;
  userAgent: string;
}

export interface DeliveryWorkerDeps {
  repository: Pick<WebhookRepository, 'claimDue' | 'recordAttempt'>;
  egress: EgressClient;
  /** The value of the signing secret a subscription names, or why there is none. */
  secret: (secretKey: string) => { value: string } | { error: string };
  /** A subscription was disabled by its failures (for the audit trail). */
  disabled: (delivery: DueDelivery) => void;
  logger: Logger;
  settings: DeliverySettings;
  /** 0 ≤ n < 1; jitter of the retry delays (tests pin it). */
  random?: () => number;
}

/** A retry waits its scheduled delay ±10 %, so receivers that failed together are not retried together. */
const JITTER = 0.1;
/** A lease outlives the attempt it covers; a process that dies mid-attempt loses it after this margin. */
const LEASE_MARGIN_MS = 5_000;
/** Planned retry times kept per process; later ones are attempted by the poll. */
const MAX_PLANNED_WAKES = 10_000;

/**
 * Sends due webhook deliveries: leases them (any number of governance instances share the work),
 * signs and posts each once per attempt, records the attempt, and plans the retry or gives up.
 * A delivery whose lease holder died is attempted again by whoever leases it next, with the same
 * `webhook-id` (at least once).
 */
export function createDeliveryWorker(deps: DeliveryWorkerDeps) {
  const { repository, settings, logger } = deps;
  const random = deps.random ?? Math.random;
  const owner = `webhooks-${randomUUID()}`;
  const leaseMs = settings.timeoutMs + LEASE_MARGIN_MS;
  const inFlight = new Set<Promise<void>>();
  let claiming: Promise<void> | undefined;
  let claimAgain = false;
  let stopped = false;
  let poll: NodeJS.Timeout | undefined;
  // When the retries this process planned come due, soonest first; one timer waits for the first.
  // Past MAX_PLANNED_WAKES the latest are left to the poll.
  const wakeTimes: number[] = [];
  let wakeTimer: NodeJS.Timeout | undefined;
  let claims = 0;

  async function attempt(delivery: DueDelivery): Promise<AttemptOutcome> {
    const startedAt = new Date();
    const started = performance.now();
    const elapsed = () => performance.now() - started;
    const failed = (error: string, responseStatus: number | null = null) => ({ startedAt, durationMs: elapsed(), responseStatus, error });
    const secret = deps.secret(delivery.secretKey);
    if ('error' in secret) return { ...failed(secret.error), delivered: false };
    if (!isUsableSecret(secret.value)) {
      return {
        ...failed(`the signing secret "${delivery.secretKey}" is not a Standard Webhooks secret (whsec_ and base64)`),
        delivered: false,
      };
    }
    try {
      const response = await deps.egress.request(delivery.url, {
        method: 'POST',
        headers: {
          ...delivery.headers,
          'content-type': 'application/json',
          'user-agent': settings.userAgent,
          ...signatureHeaders(secret.value, delivery.eventId, delivery.body, startedAt),
        },
        body: delivery.body,
        timeoutMs: settings.timeoutMs,
        maxResponseBytes: settings.maxResponseBytes,
      });
      if (response.status >= 200 && response.status < 300) {
        return { startedAt, durationMs: elapsed(), responseStatus: response.status, error: null, delivered: true };
      }
      const why =
        response.status >= 300 && response.status < 400
          ? `the receiver redirected (HTTP ${response.status}); redirects are not followed`
          : `the receiver answered HTTP ${response.status}`;
      return { ...failed(why, response.status), delivered: false };
    } catch (error) {
      const message = error instanceof EgressRefusedError ? `refused: ${error.reason}` : (error as Error).message;
      return { ...failed(message), delivered: false };
    }
  }

  /** When the next attempt is due after `attemptsMade` failed ones; undefined once the schedule is spent. */
  function retryAt(attemptsMade: number): Date | undefined {
    const delay = settings.retryDelaysMs[attemptsMade - 1];
    if (delay === undefined) return undefined;
    return new Date(Date.now() + delay * (1 - JITTER + 2 * JITTER * random()));
  }

  /** `lease` names this claim: a late record of an attempt whose lease was taken over (even by this process) is refused. */
  async function deliver(delivery: DueDelivery, lease: string) {
    const outcome = await attempt(delivery);
    if (!outcome.delivered) outcome.retryAt = retryAt(delivery.attempt + 1);
    const { recorded, disabled } = await repository.recordAttempt(delivery, lease, outcome, settings.disableAfter);
    if (!recorded)
      return logger.warn({ deliveryId: delivery.id }, 'webhook delivery lease was lost during its attempt; another instance retries it');
    if (disabled) deps.disabled(delivery);
    if (outcome.retryAt) wakeAt(outcome.retryAt);
  }

  function wakeAt(at: Date) {
    const time = at.getTime();
    const later = wakeTimes.findIndex((planned) => planned > time);
    const index = later < 0 ? wakeTimes.length : later;
    wakeTimes.splice(index, 0, time);
    if (wakeTimes.length > MAX_PLANNED_WAKES) wakeTimes.pop();
    if (index === 0) waitForFirstWake();
  }

  function waitForFirstWake() {
    clearTimeout(wakeTimer);
    if (!wakeTimes.length || stopped) return;
    wakeTimer = setTimeout(
      () => {
        const now = Date.now();
        while (wakeTimes.length && wakeTimes[0] <= now) wakeTimes.shift();
        waitForFirstWake();
        nudge();
      },
      Math.max(0, wakeTimes[0] - Date.now()),
    );
    wakeTimer.unref();
  }

  async function claim() {
    while (!stopped) {
      const free = settings.concurrency - inFlight.size;
      if (free <= 0) return;
      const lease = `${owner}-${++claims}`;
      const due = await repository.claimDue(lease, free, leaseMs);
      for (const delivery of due) {
        const running: Promise<void> = deliver(delivery, lease)
          .catch((error: unknown) =>
            logger.warn(
              { err: error, deliveryId: delivery.id },
              'webhook attempt could not be recorded; it is retried once its lease expires',
            ),
          )
          .finally(() => {
            inFlight.delete(running);
            nudge();
          });
        inFlight.add(running);
      }
      if (due.length < free) return;
    }
  }

  /** Looks for due deliveries now (one look at a time; a nudge during a look triggers another). */
  function nudge() {
    if (stopped) return;
    if (claiming) {
      claimAgain = true;
      return;
    }
    claiming = claim()
      .catch((error) => logger.warn({ err: error }, 'due webhook deliveries could not be read; trying again shortly'))
      .finally(() => {
        claiming = undefined;
        if (claimAgain) {
          claimAgain = false;
          nudge();
        }
      });
  }

  return {
    start() {
      poll = setInterval(nudge, settings.pollIntervalMs);
      poll.unref();
      nudge();
    },
    nudge,
    /** Stops looking for work and waits for the attempts in flight (each bounded by the timeout). */
    async stop() {
      stopped = true;
      clearInterval(poll);
      clearTimeout(wakeTimer);
      await claiming;
      await Promise.allSettled([...inFlight]);
    },
  };
}
