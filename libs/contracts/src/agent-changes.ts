import { z } from 'zod';

/** The event-log topic the registry's outbox ships agent changes to; records are keyed by `tenant/name`. */
export const AGENT_CHANGES_TOPIC = 'hangar.agent-changes';

/**
 * Pub/sub channel on which the registry announces a stored agent that changed (`{ id }`: its
 * `tenant/name`, see `agentCacheKey`), before it answers: run executors drop what they cached of it.
 */
export const AGENT_CHANGES_CHANNEL = 'hangar.agents.changed';

export const agentCacheKey = (tenantId: string, name: string) => `${tenantId}/${name}`;

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
