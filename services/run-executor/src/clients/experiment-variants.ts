import {
  chooseVariant,
  EvaluationServiceDefinition,
  EXPERIMENT_CHANGES_CHANNEL,
  experimentCacheKey,
  type RunningExperiment,
} from '@hangar/contracts';
import { createAnnouncedCache, type PubSub } from '@hangar/messaging';
import { createChannel, createServiceClient, type Caller, type CallerOptions, type Logger } from '@hangar/platform';
import type { Channel, Client } from 'nice-grpc';
import { randomUUID } from 'node:crypto';

/** How long an executor trusts what it knows of an agent's experiment: the longest a change takes when its announcement is lost. */
const EXPERIMENT_CACHE_MS = 30_000;
/** How long a run waits, as it starts, for the evaluation service to name the agent's experiment. */
const LOOKUP_TIMEOUT_MS = 2_000;

/** The variant of an agent's running experiment a run gets. */
export interface ExperimentAssignment {
  experiment: string;
  version: number;
}

export interface ExperimentVariants {
  /** The variant for a run of the agent (sticky per session), or none when no experiment of it runs. Never throws. */
  assign(caller: Caller, agentName: string, sessionId: string | undefined): Promise<ExperimentAssignment | undefined>;
}

/**
 * The evaluation service's running experiments, kept per tenant and agent and looked up again when
 * a change is announced. An evaluation service that cannot answer never fails a run: the last
 * experiment known stands, or the run takes the agent's current version.
 */
export function createExperimentVariants(deps: { address: () => string; pubsub: PubSub; logger: Logger }) {
  // Reached on the first run: in one process the evaluation module starts after this one.
  let connection: { channel: Channel; client: Client<typeof EvaluationServiceDefinition, CallerOptions> } | null | undefined;
  const evaluation = () => {
    if (connection === undefined) {
      try {
        const channel = createChannel(deps.address());
        connection = { channel, client: createServiceClient(EvaluationServiceDefinition, channel) };
      } catch (error) {
        deps.logger.warn(
          { err: (error as Error).message },
          'no evaluation service to ask for experiments: runs take their agent’s current version',
        );
        connection = null;
      }
    }
    return connection?.client;
  };
  const cache = createAnnouncedCache<RunningExperiment | null>({
    pubsub: deps.pubsub,
    channel: EXPERIMENT_CHANGES_CHANNEL,
    ttlMs: EXPERIMENT_CACHE_MS,
    maxEntries: 10_000,
    onUnheard: (error) =>
      deps.logger.warn({ err: error }, `experiment changes cannot be heard; a change takes up to ${EXPERIMENT_CACHE_MS} ms`),
  });
  const variants: ExperimentVariants = {
    async assign(caller, agentName, sessionId) {
      const client = evaluation();
      if (!client) return undefined;
      let running: RunningExperiment | null;
      try {
        running = await cache.get(experimentCacheKey(caller.tenantId, agentName), async () => {
          const found = await client.getRunningExperiment({ agentName }, { caller, signal: AbortSignal.timeout(LOOKUP_TIMEOUT_MS) });
          return found.name === undefined ? null : { name: found.name, variants: found.variants };
        });
      } catch (error) {
        deps.logger.warn(
          { err: (error as Error).message, agent: agentName },
          'experiments unknown (evaluation service unavailable); the run takes the current version',
        );
        return undefined;
      }
      if (!running) return undefined;
      const version = chooseVariant(running.variants, sessionId ?? randomUUID());
      return version === undefined ? undefined : { experiment: running.name, version };
    },
  };
  return {
    variants,
    start: cache.start,
    stop: async () => {
      await cache.stop();
      connection?.channel.close();
    },
  };
}
