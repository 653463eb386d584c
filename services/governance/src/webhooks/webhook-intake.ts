import { AGENT_CHANGES_TOPIC, AgentChangeSchema, RUN_EVENTS_TOPIC, RunEventEnvelopeSchema, type RunEventEnvelope } from '@hangar/contracts';
import { namesEventOf, parseMessage, type EventLog, type Subscription } from '@hangar/messaging';
import { HangarError, inConsumerSpan, openRunEventData, type ContentCipher, type Logger } from '@hangar/platform';
import { eventIdOf } from './webhook-signing.js';
import type { WebhookService } from './webhook.service.js';

/** The consumer group whose position in each topic marks what webhooks have taken in. */
export const WEBHOOKS_CONSUMER_GROUP = 'governance-webhooks';

const RUN_OUTCOMES = new Set(['run.completed', 'run.failed', 'run.canceled']);
const OFFERED_RUN_EVENTS: ReadonlySet<string> = new Set([...RUN_OUTCOMES, 'approval.requested']);

export interface WebhookIntakeDeps {
  eventLog: EventLog;
  offer: WebhookService['offer'];
  /** The run record as the API shows it (GET /api/runs/{id}), read from the run executor when a subscriber wants it. */
  runRecord: (tenantId: string, runId: string) => Promise<unknown>;
  /** Opens event data the outbox shipped sealed (content protection). */
  cipher: ContentCipher;
  logger: Logger;
}

/**
 * Takes webhook events in from the event log: runs' outcomes and approval requests from the run
 * events, agent changes from the registry's. A record is acknowledged once its deliveries are
 * stored, so a process that dies meanwhile is offered it again (the deliveries are queued once).
 */
export async function startWebhookIntake(deps: WebhookIntakeDeps): Promise<Subscription> {
  const { offer, logger } = deps;
  async function runEvent(value: string, offset: number) {
    const message = parseMessage(value);
    // Most run events are no webhook's (a text delta): skipped before validation and a span of their own.
    if (!namesEventOf(message, OFFERED_RUN_EVENTS)) return;
    const parsed = RunEventEnvelopeSchema.safeParse(message);
    if (!parsed.success) return logger.warn({ offset }, 'a run event on the event log is not an envelope; webhooks skip it');
    const event = parsed.data;
    await inConsumerSpan(
      {
        topic: RUN_EVENTS_TOPIC,
        group: WEBHOOKS_CONSUMER_GROUP,
        traceparent: event.traceparent,
        attributes: { 'hangar.run.id': event.runId, 'hangar.event.type': event.type },
      },
      () => offerRunEvent(event),
    );
  }

  async function offerRunEvent(event: RunEventEnvelope) {
    const common = { id: eventIdOf(`run:${event.runId}:${event.seq}`), tenantId: event.tenantId, timestamp: event.at };
    if (RUN_OUTCOMES.has(event.type)) {
      try {
        await offer({ ...common, type: event.type as 'run.completed', data: () => deps.runRecord(event.tenantId, event.runId) });
      } catch (error) {
        // A run the executor no longer knows can never be read: skipped, or it would hold the log up forever.
        if (!(error instanceof HangarError && error.kind === 'notFound')) throw error;
        logger.warn({ runId: event.runId, type: event.type }, 'the run of a webhook event is not found; the event is skipped');
      }
    } else if (event.type === 'approval.requested') {
      const data = openRunEventData(deps.cipher, event) as { approvalId?: string; toolName?: string };
      await offer({
        ...common,
        type: 'approval.requested',
        data: () => ({ runId: event.runId, approvalId: data.approvalId, toolName: data.toolName }),
      });
    }
  }

  async function agentChange(value: string, offset: number) {
    const change = AgentChangeSchema.safeParse(parseMessage(value));
    if (!change.success) return logger.warn({ offset }, 'an agent change on the event log is not valid; webhooks skip it');
    const { id, tenantId, type, name, version, at } = change.data;
    await offer({ id: eventIdOf(`agent:${id}`), tenantId, type, timestamp: at, data: () => ({ name, version }) });
  }

  return deps.eventLog.subscribe([RUN_EVENTS_TOPIC, AGENT_CHANGES_TOPIC], WEBHOOKS_CONSUMER_GROUP, (record) =>
    record.topic === AGENT_CHANGES_TOPIC ? agentChange(record.value, record.offset) : runEvent(record.value, record.offset),
  );
}
