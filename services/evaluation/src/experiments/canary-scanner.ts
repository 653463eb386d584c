import type { Caller, Logger } from '@hangar/platform';
import type { ExperimentPorts } from '../clients/ports.js';
import type { OnlineRepository } from '../online/online.repository.js';
import type { ExperimentRecord, ExperimentRepository } from './experiment.repository.js';
import { canaryVariants } from './experiment.service.js';

export interface CanarySettings {
  /** Canary:ScanInterval. */
  intervalMs: number;
  /** Canary:AutoRollbackEnabled. */
  autoRollback: boolean;
  /** OnlineEvaluation:LowScoreThreshold, MinSampleSize and EvaluationWindow. */
  lowScoreThreshold: number;
  minSampleSize: number;
  windowMs: number;
}

/**
 * Moves running canaries, each once per `Canary:ScanInterval` across instances: a canary version
 * whose online score (since the canary started, within the evaluation window) averages below
 * `LowScoreThreshold` over at least `MinSampleSize` scored runs is rolled back to the baseline (a new
 * version) when `Canary:AutoRollbackEnabled`, with the reason audited and a `canary.rolled-back`
 * webhook; one whose score holds takes `stepPercent` more of the runs, and is done at 100 %.
 */
export function createCanaryScanner(deps: {
  repository: ExperimentRepository;
  online: OnlineRepository;
  ports: ExperimentPorts;
  logger: Logger;
  settings: CanarySettings;
}) {
  const { repository, online, ports, logger, settings } = deps;
  let timer: NodeJS.Timeout | undefined;
  let scanning: Promise<void> | undefined;

  async function rollBack(experiment: ExperimentRecord, caller: Caller, score: { samples: number; meanScore: number }) {
    const canary = experiment.canary!;
    const reason =
      `canary version ${canary.canaryVersion} scored ${score.meanScore.toFixed(1)} on average over ${score.samples} runs, ` +
      `below OnlineEvaluation:LowScoreThreshold ${settings.lowScoreThreshold}`;
    // The rollback first: a registry that cannot answer leaves the canary running, to be rolled back at the next scan.
    const version = await ports.rollback(caller, experiment.agentName, canary.baselineVersion);
    await repository.end(experiment.tenantId, experiment.name, 'RolledBack', reason);
    await ports.announce(experiment.tenantId, experiment.agentName);
    const details = {
      experiment: experiment.name,
      agentName: experiment.agentName,
      canaryVersion: canary.canaryVersion,
      baselineVersion: canary.baselineVersion,
      rolledBackToVersion: version,
      meanScore: score.meanScore,
      samples: score.samples,
      reason,
    };
    // The rollback happened: a trail or webhook that fails is logged, not retried (that would roll back again).
    await ports
      .audit(caller, { action: 'canary.rolled-back', resourceType: 'agent', resourceId: experiment.agentName, details })
      .catch((error) => logger.warn({ err: error, experiment: experiment.name }, 'the canary rollback could not be audited'));
    await ports
      .webhook(caller, {
        id: `canary:${experiment.name}:${experiment.startedAt?.toISOString()}`,
        type: 'canary.rolled-back',
        data: details,
      })
      .catch((error) => logger.warn({ err: error, experiment: experiment.name }, 'the canary rollback could not be offered to webhooks'));
    logger.warn(details, 'canary rolled back');
  }

  async function move(experiment: ExperimentRecord): Promise<void> {
    const canary = experiment.canary!;
    const caller: Caller = { tenantId: experiment.tenantId, actor: 'canary' };
    const since = new Date(Math.max(experiment.startedAt?.getTime() ?? 0, Date.now() - settings.windowMs));
    const score = (await online.byVersion(experiment.tenantId, experiment.agentName, since)).get(canary.canaryVersion);
    if (!score || score.samples < settings.minSampleSize) return; // not enough to judge by yet
    if (score.meanScore < settings.lowScoreThreshold) {
      if (settings.autoRollback) return rollBack(experiment, caller, score);
      logger.warn(
        { experiment: experiment.name, meanScore: score.meanScore },
        'canary scores low; Canary:AutoRollbackEnabled is off, so it stays',
      );
      return;
    }
    const percent = Math.min(
      100,
      (experiment.variants.find((variant) => variant.version === canary.canaryVersion)?.weight ?? 0) + canary.stepPercent,
    );
    if (percent >= 100) {
      await repository.setVariants(experiment.tenantId, experiment.name, canaryVariants(canary, 100));
      await repository.end(experiment.tenantId, experiment.name, 'Completed', `canary version ${canary.canaryVersion} takes every run`);
    } else {
      await repository.setVariants(experiment.tenantId, experiment.name, canaryVariants(canary, percent));
    }
    await ports.announce(experiment.tenantId, experiment.agentName);
  }

  async function scan(): Promise<void> {
    let claimed: ExperimentRecord[];
    try {
      claimed = await repository.claimCanaries(settings.intervalMs);
    } catch (error) {
      logger.warn({ err: error }, 'canaries could not be scanned; trying again at the next interval');
      return;
    }
    for (const experiment of claimed) {
      await move(experiment).catch((error) =>
        logger.warn({ err: error, experiment: experiment.name }, 'a canary could not be moved; it is looked at again next interval'),
      );
    }
  }

  return {
    scan,
    start() {
      timer = setInterval(() => {
        scanning ??= scan().finally(() => (scanning = undefined));
      }, settings.intervalMs);
    },
    async stop() {
      clearInterval(timer);
      await scanning;
    },
  };
}
