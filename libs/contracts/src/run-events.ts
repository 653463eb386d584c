import { z } from 'zod';

/** The event-log topic the run-executor's outbox ships run events to; records are keyed by the run tree's root. */
export const RUN_EVENTS_TOPIC = 'hangar.run-events';

/** One run event on the event log: the envelope the outbox writes with each stored event. */
export interface RunEventEnvelope {
  tenantId: string;
  runId: string;
  rootRunId: string;
  agentName: string;
  seq: number;
  type: string;
  at: string;
  /** The event's own data; a finished run's carries `usage` and `cost`. */
  data: { usage?: { totalTokens?: number }; cost?: { total?: number } | null; [key: string]: unknown };
  /** The W3C trace context of the run's span, so what a consumer does about the event joins the run's trace. */
  traceparent?: string | null;
}

/** The envelope as consumers check it: a record that is not one is skipped, never cast. */
export const RunEventEnvelopeSchema = z.looseObject({
  tenantId: z.string(),
  runId: z.string(),
  rootRunId: z.string(),
  agentName: z.string(),
  seq: z.number().int(),
  type: z.string(),
  at: z.string(),
  data: z.record(z.string(), z.unknown()),
  traceparent: z.string().nullish(),
});
