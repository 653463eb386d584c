import { z } from 'zod';

/** The conversation and parameters of a run request, as the run route and a schedule's agent-run payload take them. */
export const RunMessageSchema = z.string().min(1).max(1_000_000);

export const RunMessagesSchema = z
  .array(z.strictObject({ role: z.enum(['system', 'user', 'assistant']), content: z.string().max(1_000_000) }))
  .min(1)
  .max(500);

export const RunParametersSchema = z.array(z.strictObject({ name: z.string().min(1).max(64), value: z.string() })).max(64);
