import { AGENT_CHANGES_CHANNEL, agentCacheKey } from '@hangar/contracts';
import { createAnnouncedCache, type PubSub } from '@hangar/messaging';
import { HangarError, type Logger } from '@hangar/platform';
import type { AgentLoader } from './ports.js';

/** How long an executor trusts a stored agent it loaded: the longest a change takes when its announcement is lost. */
export const AGENT_CACHE_MS = 30_000;

type Loaded = Awaited<ReturnType<AgentLoader['load']>>;

/**
 * The registry's agents, kept per tenant and name so a run does not wait on a registry call: the
 * registry announces every change of a stored agent before it answers it, and the next run loads
 * the agent again. Only stored agents are kept (a version): a factory builds per caller, and a
 * declarative code agent costs the registry nothing. When the registry cannot answer, the last
 * definition known stands.
 */
export function createCachedAgents(deps: { agents: AgentLoader; pubsub: PubSub; logger: Logger }) {
  const cache = createAnnouncedCache<Loaded>({
    pubsub: deps.pubsub,
    channel: AGENT_CHANGES_CHANNEL,
    ttlMs: AGENT_CACHE_MS,
    maxEntries: 10_000,
    keep: (loaded) => (loaded as Loaded).version !== null,
    // A registry that answers (a deleted agent is 404) is believed; only one that cannot answer is stood by.
    standsOn: (error) => !(error instanceof HangarError) || error.status >= 500,
    onUnheard: (error) => deps.logger.warn({ err: error }, `agent changes cannot be heard; a change takes up to ${AGENT_CACHE_MS} ms`),
  });
  const agents: AgentLoader = {
    // A pinned version is asked of the registry each time: only evaluations and experiments pin one.
    load: (caller, name, version) =>
      version !== undefined
        ? deps.agents.load(caller, name, version)
        : cache.get(
            agentCacheKey(caller.tenantId, name),
            () => deps.agents.load(caller, name),
            (error) =>
              deps.logger.warn(
                { err: (error as Error).message, agent: name },
                'agent registry unavailable; the last known definition stands',
              ),
          ),
    estimate: (...args) => deps.agents.estimate(...args),
  };
  return { agents, start: cache.start, stop: cache.stop };
}
