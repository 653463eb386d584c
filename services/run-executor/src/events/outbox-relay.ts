import { randomUUID } from 'node:crypto';
import { RUN_EVENTS_TOPIC } from '@hangar/contracts';
import type { EventLog } from '@hangar/messaging';
import type { Logger } from '@hangar/platform';
import type { EventRepository } from './event.repository.js';

export interface OutboxRelaySettings {
  /** How often the outbox is read when nothing nudges the relay. */
  pollIntervalMs: number;
  /** How long a nudge waits so events written close together ship in one batch. */
  batchDelayMs: number;
  batchSize: number;
  /** How long one shipment may hold the outbox before another relay may take over. */
  leaseMs: number;
}

/**
 * Ships stored run events from the outbox to the event log, oldest first, in batches. A failed
 * shipment leaves the events in the outbox for the next round (at-least-once: a consumer may see
 * an event twice, never out of order for one run tree).
 */
export function createOutboxRelay(deps: {
  repository: Pick<EventRepository, 'shipOutbox'>;
  eventLog: EventLog;
  logger: Logger;
  settings: OutboxRelaySettings;
}) {
  const { repository, eventLog, logger, settings } = deps;
  const owner = `relay-${randomUUID()}`;
  let timer: NodeJS.Timeout | undefined;
  let nextRoundAt = Infinity;
  let round: Promise<void> | undefined;
  let nudgedDuringRound = false;
  let stopping = false;

  async function drain() {
    try {
      while (true) {
        const shipped = await repository.shipOutbox(owner, settings.batchSize, settings.leaseMs, (records) =>
          eventLog.append(RUN_EVENTS_TOPIC, records),
        );
        if (shipped < settings.batchSize) return;
      }
    } catch (error) {
      logger.warn({ err: error }, 'run events could not be shipped to the event log; they stay in the outbox');
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
