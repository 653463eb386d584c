import { conflict, notFound, RECORD_NAME, RECORD_NAME_RULE, validationError, type Caller, type FieldError } from '@hangar/platform';
import type { AgentVersions, ExperimentPorts } from '../clients/ports.js';
import type { OnlineRepository } from '../online/online.repository.js';
import type { CanaryPolicy, ExperimentRecord, ExperimentRepository, Variant } from './experiment.repository.js';

const MAX_VARIANTS = 10;
const MAX_WEIGHT = 1000;
/** How many of an experiment's runs its results read (newest first). */
const RESULT_RUNS = 5000;

export interface ExperimentInput {
  agentName: string;
  variants: Variant[];
  canary?: Omit<CanaryPolicy, 'initialPercent' | 'stepPercent'> & Partial<Pick<CanaryPolicy, 'initialPercent' | 'stepPercent'>>;
}

/** A canary's variants at `percent` for its new version. */
export const canaryVariants = (canary: CanaryPolicy, percent: number): Variant[] => [
  { version: canary.baselineVersion, weight: 100 - percent },
  { version: canary.canaryVersion, weight: percent },
];

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.floor((sorted.length - 1) / 2)] : 0;
};

/** Experiments over an agent's versions: the rules; SQL in the repository, the canary's moves in the scanner. */
export function createExperimentService(deps: {
  repository: ExperimentRepository;
  agents: AgentVersions;
  online: OnlineRepository;
  ports: ExperimentPorts;
}) {
  const { repository, ports } = deps;

  async function experimentOf(caller: Caller, name: string): Promise<ExperimentRecord> {
    const found = RECORD_NAME.test(name) ? await repository.get(caller.tenantId, name) : undefined;
    if (!found) throw notFound(`experiment "${name}" not found`);
    return found;
  }

  async function checkInput(
    caller: Caller,
    name: string,
    input: ExperimentInput,
  ): Promise<{ variants: Variant[]; canary: CanaryPolicy | null }> {
    const errors: FieldError[] = [];
    if (!RECORD_NAME.test(name)) errors.push({ path: 'name', message: RECORD_NAME_RULE });
    const canary: CanaryPolicy | null = input.canary
      ? {
          baselineVersion: input.canary.baselineVersion,
          canaryVersion: input.canary.canaryVersion,
          initialPercent: input.canary.initialPercent ?? 10,
          stepPercent: input.canary.stepPercent ?? 10,
        }
      : null;
    if (canary) {
      if (input.variants.length) errors.push({ path: 'variants', message: 'a canary’s variants follow from it: leave them out' });
      if (canary.baselineVersion === canary.canaryVersion)
        errors.push({ path: 'canary.canaryVersion', message: 'must differ from baselineVersion' });
      if (canary.initialPercent < 1 || canary.initialPercent > 99)
        errors.push({ path: 'canary.initialPercent', message: 'must be from 1 to 99' });
      if (canary.stepPercent < 1 || canary.stepPercent > 100) errors.push({ path: 'canary.stepPercent', message: 'must be from 1 to 100' });
    } else {
      if (input.variants.length < 2 || input.variants.length > MAX_VARIANTS)
        errors.push({ path: 'variants', message: `must be 2 to ${MAX_VARIANTS}` });
      if (new Set(input.variants.map((variant) => variant.version)).size !== input.variants.length)
        errors.push({ path: 'variants', message: 'name each version once' });
      input.variants.forEach((variant, index) => {
        if (!Number.isInteger(variant.weight) || variant.weight < 0 || variant.weight > MAX_WEIGHT)
          errors.push({ path: `variants[${index}].weight`, message: `must be an integer from 0 to ${MAX_WEIGHT}` });
      });
      if (input.variants.every((variant) => variant.weight === 0)) errors.push({ path: 'variants', message: 'a weight must be above 0' });
    }
    if (errors.length) throw validationError(`experiment "${name}" is not valid`, errors);
    const variants = canary ? canaryVariants(canary, canary.initialPercent) : input.variants;
    // Every version must exist now (a code agent has none): 404 names the first that does not.
    await Promise.all(variants.map((variant) => deps.agents.pin(caller, input.agentName, variant.version)));
    return { variants, canary };
  }

  return {
    async put(caller: Caller, name: string, input: ExperimentInput) {
      const existing = RECORD_NAME.test(name) ? await repository.get(caller.tenantId, name) : undefined;
      if (existing?.status === 'Running') throw conflict(`experiment "${name}" is running; stop it before changing it`);
      const { variants, canary } = await checkInput(caller, name, input);
      return repository.put(caller.tenantId, { name, agentName: input.agentName, variants, canary });
    },

    get: experimentOf,

    list: (caller: Caller) => repository.list(caller.tenantId),

    async delete(caller: Caller, name: string): Promise<void> {
      const deleted = RECORD_NAME.test(name) ? await repository.delete(caller.tenantId, name) : undefined;
      if (!deleted) throw notFound(`experiment "${name}" not found`);
      if (deleted.status === 'Running') await ports.announce(caller.tenantId, deleted.agentName);
    },

    /** Runs of its agent are split by it from now; another running experiment of the agent is 409. */
    async start(caller: Caller, name: string): Promise<ExperimentRecord> {
      const experiment = await experimentOf(caller, name);
      if (experiment.status === 'Running') return experiment;
      const started = await repository.start(caller.tenantId, name);
      if (started === 'conflict') throw conflict(`agent "${experiment.agentName}" has another running experiment`);
      if (!started) throw notFound(`experiment "${name}" not found`);
      await ports.announce(caller.tenantId, started.agentName);
      return started;
    },

    async stop(caller: Caller, name: string): Promise<ExperimentRecord> {
      const experiment = await experimentOf(caller, name);
      const stopped = await repository.end(caller.tenantId, name, 'Stopped', `stopped by ${caller.actor}`);
      if (!stopped) return experiment;
      await ports.announce(caller.tenantId, stopped.agentName);
      return stopped;
    },

    /** Per variant: its runs (tagged `experiment:<name>`), how they ended, cost, median latency, and online evaluation's scores. */
    async results(caller: Caller, name: string) {
      const experiment = await experimentOf(caller, name);
      const [runs, scores] = await Promise.all([
        ports.taggedRuns(caller, name, RESULT_RUNS),
        experiment.startedAt ? deps.online.byVersion(caller.tenantId, experiment.agentName, experiment.startedAt) : new Map(),
      ]);
      const variants = experiment.variants.map((variant) => {
        const own = runs.filter((run) => run.agentVersion === variant.version);
        const priced = own.filter((run) => run.cost !== null);
        const score = scores.get(variant.version);
        return {
          ...variant,
          runs: own.length,
          completed: own.filter((run) => run.status === 'Completed').length,
          failed: own.filter((run) => run.status === 'Failed').length,
          cost: priced.length ? priced.reduce((sum, run) => sum + run.cost!, 0) : null,
          latencyP50Ms: median(own.flatMap((run) => (run.durationMs === null ? [] : [run.durationMs]))),
          scored: score?.samples ?? 0,
          meanScore: score?.meanScore ?? null,
        };
      });
      return { experiment, variants };
    },

    /** The agent's running experiment, as run executors split runs by it. */
    async running(caller: Caller, agentName: string) {
      const running = await repository.running(caller.tenantId, agentName);
      return running && { name: running.name, variants: running.variants };
    },
  };
}

export type ExperimentService = ReturnType<typeof createExperimentService>;
