import { z } from 'zod';

/** API.md "Schedules": the handler a firing runs, and what each takes as its payload. */
export const AGENT_RUN_HANDLER_KEY = 'agent-run';

/** `Scheduling:HttpSchedulableHandlerKeys` while it is empty. */
export const DEFAULT_SCHEDULABLE_HANDLER_KEYS: readonly string[] = [AGENT_RUN_HANDLER_KEY];

/** The `agent-run` payload: a run request of a stored agent, as the run route takes it. */
export const AgentRunPayloadSchema = z
  .strictObject({
    agentName: z.string().min(1).max(128),
    message: z.string().min(1).max(1_000_000).optional(),
    messages: z
      .array(z.strictObject({ role: z.enum(['system', 'user', 'assistant']), content: z.string().max(1_000_000) }))
      .min(1)
      .max(500)
      .optional(),
    sessionId: z.string().min(1).max(128).optional(),
    parameters: z
      .array(z.strictObject({ name: z.string().min(1).max(64), value: z.string() }))
      .max(64)
      .optional(),
  })
  .refine((payload) => (payload.message === undefined) !== (payload.messages === undefined), {
    message: 'give exactly one of message or messages',
    path: ['message'],
  })
  .meta({ id: 'AgentRunSchedulePayload' });

export type AgentRunPayload = z.infer<typeof AgentRunPayloadSchema>;
