import { z } from 'zod';
import { RunMessageSchema, RunMessagesSchema, RunParametersSchema } from './run-request.js';

/** API.md "Schedules": the handler a firing runs, and what each takes as its payload. */
export const AGENT_RUN_HANDLER_KEY = 'agent-run';

/** `Scheduling:HttpSchedulableHandlerKeys` while it is empty. */
export const DEFAULT_SCHEDULABLE_HANDLER_KEYS: readonly string[] = [AGENT_RUN_HANDLER_KEY];

/** The `agent-run` payload: a run request of a stored agent, as the run route takes it. */
export const AgentRunPayloadSchema = z
  .strictObject({
    agentName: z.string().min(1).max(128),
    message: RunMessageSchema.optional(),
    messages: RunMessagesSchema.optional(),
    sessionId: z.string().min(1).max(128).optional(),
    parameters: RunParametersSchema.optional(),
  })
  .refine((payload) => (payload.message === undefined) !== (payload.messages === undefined), {
    message: 'give exactly one of message or messages',
    path: ['message'],
  })
  .meta({ id: 'AgentRunSchedulePayload' });

export type AgentRunPayload = z.infer<typeof AgentRunPayloadSchema>;
