import { z } from 'zod';

/** The event-log topic the registry's outbox ships agent changes to; records are keyed by `tenant/name`. */
export const AGENT_CHANGES_TOPIC = 'hangar.agent-changes';

/** One stored agent definition created, changed (an update or a rollback) or deleted. */
export const AgentChangeSchema = z.object({
  /** Unique per change: the id webhooks deliver it under. */
  id: z.uuid(),
  tenantId: z.string(),
  type: z.enum(['agent.created', 'agent.updated', 'agent.deleted']),
  name: z.string(),
  /** The version created; for a deletion, the version that was current. */
  version: z.number().int().positive(),
  at: z.string(),
});

export type AgentChange = z.infer<typeof AgentChangeSchema>;
