import { randomUUID } from 'node:crypto';
import type { EventLog, NewLogRecord } from './ports.js';

export interface OutboxRelaySettings {
  /** How often the outbox is read when nothing nudges the relay. */
  pollIntervalMs: number;
  /** How long a nudge waits so events written close together ship in one batch. */
  batchDelayMs: number;
  batchSize: number;
  /** How long one shipment may hold the outbox before another relay may take over. */
  leaseMs: number;
}

/** One round of shipping: hands up to `limit` outbox rows to `ship` under a lease; the number shipped. */
export type ShipOutbox = (
  lease: { owner: string; leaseMs: number; limit: number },
  ship: (records: NewLogRecord[]) => Promise<void>,
) => Promise<number>;

/**
 * Ships what a service stored in its outbox to `topic` on the event log, oldest first, in batches.
 * A failed shipment leaves the rows in the outbox for the next round (at-least-once: a consumer may
 * see a record twice, never out of order for one key).
 */
export function createOutboxRelay(deps: {
  shipOutbox: ShipOutbox;
  eventLog: EventLog;
  topic: string;
  /** Told when a round fails (the rows stay for the next one). */
  onError: (error: unknown) => void;
  settings: OutboxRelaySettings;
}) {
  const { eventLog, settings } = deps;
  const owner = `relay-${randomUUID()}`;
  let timer: NodeJS.Timeout | undefined;
  let nextRoundAt = Infinity;
  let round: Promise<void> | undefined;
  let nudgedDuringRound = false;
  let stopping = false;

  async function drain() {
    try {
      while (true) {
        const shipped = await deps.shipOutbox({ owner, leaseMs: settings.leaseMs, limit: settings.batchSize }, (records) =>
          eventLog.append(deps.topic, records),
        );
        if (shipped < settings.batchSize) return;
      }
    } catch (error) {
      deps.onError(error);
    }
  }

  /** Plans the next round in `delayMs` unless one is planned sooner (so a stream of nudges cannot postpone it). */
  function schedule(delayMs: number) {
    if (stopping || round) return;
    const at = Date.now() + delayMs;
    if (at >= nextRoundAt) return;
    clearTimeout(timer);
    nextRoundAt = at;
    timer = setTimeout(() => {
      nextRoundAt = Infinity;
      round = drain().finally(() => {
        round = undefined;
        const again = nudgedDuringRound;
        nudgedDuringRound = false;
        schedule(again ? settings.batchDelayMs : settings.pollIntervalMs);
      });
    }, delayMs);
  }

  return {
    start: () => schedule(0),
    /** Events were just stored: ship them soon, batched with whatever follows within batchDelayMs. */
    nudge() {
      if (round) nudgedDuringRound = true;
      else schedule(settings.batchDelayMs);
    },
    /** Ships what is left, then stops. */
    async stop() {
      stopping = true;
      clearTimeout(timer);
      await round;
      await drain();
    },
  };
}
