import type { Caller } from '@hangar/platform';
import type { GatewayContext } from '../../gateway.context.js';

/**
 * The agents an exposure list names that exist for the caller and can run (a factory agent without
 * a model cannot): lists are resolved per request, so an agent created after start is served at once.
 */
export async function exposedAgents(context: GatewayContext, caller: Caller, names: readonly string[]) {
  if (!names.length) return [];
  const wanted = new Set(names);
  const { agents } = await context.registry.listAgents({}, { caller });
  return agents.filter((agent) => wanted.has(agent.name) && agent.model !== undefined);
}
