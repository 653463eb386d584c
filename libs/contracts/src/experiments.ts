import { createHash } from 'node:crypto';

/**
 * Pub/sub channel on which the evaluation service announces that an agent's experiments changed
 * (`{ id }`: {@link experimentCacheKey}): created, started, stopped, a canary's share moved. Run
 * executors then ask for the agent's running experiment again.
 */
export const EXPERIMENT_CHANGES_CHANNEL = 'hangar.experiments.changed';

export const experimentCacheKey = (tenantId: string, agentName: string) => `${tenantId}/${agentName}`;

/** A running experiment as a run executor splits an agent's runs by it. */
export interface RunningExperiment {
  name: string;
  variants: Array<{ version: number; weight: number }>;
}

/** The labels that tag a run of an experiment's variant (`GET /api/runs?label=experiment:<name>`). */
export const experimentLabels = (experiment: string, version: number) => ({ experiment, variant: String(version) });

/**
 * The variant a run gets, by weight: the same for every run with the same `stickyKey` (a session
 * stays on its variant), whichever executor starts it.
 */
export function chooseVariant(variants: RunningExperiment['variants'], stickyKey: string): number | undefined {
  const total = variants.reduce((sum, variant) => sum + Math.max(0, variant.weight), 0);
  if (total <= 0) return undefined;
  let point = (createHash('sha256').update(stickyKey).digest().readUInt32BE(0) / 0x1_0000_0000) * total;
  for (const variant of variants) {
    point -= Math.max(0, variant.weight);
    if (point < 0) return variant.version;
  }
  return variants.at(-1)!.version;
}
