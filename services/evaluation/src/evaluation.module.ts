import { EvaluationServiceDefinition, RetentionServiceDefinition, RUN_EVENTS_TOPIC, RunEventEnvelopeSchema } from '@hangar/contracts';
import { namesEventOf, parseMessage } from '@hangar/messaging';
import { grpcServiceModule, retentionGrpc, type HangarConfig } from '@hangar/platform';
import { createOnlineEvaluator, type OnlineEvaluationSettings } from './online/online-evaluator.js';
import { createOnlineRepository } from './online/online.repository.js';
import { createCanaryScanner } from './experiments/canary-scanner.js';
import { createExperimentRepository } from './experiments/experiment.repository.js';
import { createExperimentService } from './experiments/experiment.service.js';
import { createEvaluationClients } from './clients/grpc-clients.js';
import { evaluationGrpc } from './evaluation.grpc.js';
import { EVALUATION_SCHEMA, evaluationMigrations } from './migrations/index.js';
import { EVALUATION_RETENTION_TARGETS } from './retention-targets.js';
import type { EvaluationDatabase } from './database.js';
import { createEvaluationRepository } from './suites/eval.repository.js';
import { createEvaluationService } from './suites/eval.service.js';
import { createSuiteWorker, type SuiteWorkerSettings } from './suites/suite-worker.js';

/**
 * How suite runs are executed. SPEC has no keys for them (docs/decisions.md "Eval suites"): a run
 * asked of this instance starts at once, one asked of another within a poll; four cases of a suite
 * run at a time, each bounded like a workflow run (`Workflows:RunTimeout`'s default).
 */
const SUITE_WORKER: SuiteWorkerSettings = {
  pollIntervalMs: 2_000,
  leaseMs: 30_000,
  maxConcurrentSuiteRuns: 2,
  caseConcurrency: 4,
  caseTimeoutMs: 10 * 60_000,
  retryAfterMs: 5_000,
  maxFailures: 10,
};

/** The consumer group of online evaluation on the run events log: each completion is heard by one instance. */
const ONLINE_CONSUMER_GROUP = 'hangar-online-evaluation';
const COMPLETIONS = new Set(['run.completed']);

const onlineSettings = (config: HangarConfig): OnlineEvaluationSettings => ({
  enabled: config.OnlineEvaluation.Enabled,
  sampleRate: config.OnlineEvaluation.SampleRate,
  maxScoresPerHour: config.OnlineEvaluation.MaxScoresPerHour,
  agentNames: config.OnlineEvaluation.AgentNames,
  judgeAgent: config.OnlineEvaluation.JudgeAgent,
  judgeTimeoutMs: config.OnlineEvaluation.JudgeTimeout,
  windowMs: config.OnlineEvaluation.EvaluationWindow,
  lowScoreThreshold: config.OnlineEvaluation.LowScoreThreshold,
  minSampleSize: config.OnlineEvaluation.MinSampleSize,
});

export const evaluationModule = grpcServiceModule({
  name: 'Evaluation',
  dependsOn: ['RunExecutor', 'AgentRegistry'],
  async setup({ config, engines, logger, addressOf }, grpc) {
    const database = await engines.storage.open<EvaluationDatabase>(EVALUATION_SCHEMA, evaluationMigrations);
    const repository = createEvaluationRepository(database.db);
    const clients = createEvaluationClients(addressOf, engines.pubsub);
    const worker = createSuiteWorker({ repository, runner: clients.runner, logger, settings: SUITE_WORKER });
    const service = createEvaluationService({ repository, agents: clients.agents, wake: worker.wake, stopCanceled: worker.stopCanceled });
    const settings = onlineSettings(config);
    const onlineRepository = createOnlineRepository(database.db);
    const online = createOnlineEvaluator({
      repository: onlineRepository,
      runner: clients.runner,
      records: clients.records,
      logger,
      settings,
    });
    if (settings.enabled && settings.sampleRate > 0 && !online.active) {
      logger.warn('OnlineEvaluation is enabled with a sample rate but no judge (OnlineEvaluation:JudgeAgent): no run is scored');
    }
    // Only a deployment that scores reads the log (at-least-once; a run is claimed once, so a redelivery is not judged twice).
    const completions = online.active
      ? await engines.eventLog.subscribe(RUN_EVENTS_TOPIC, ONLINE_CONSUMER_GROUP, async (record) => {
          const message = parseMessage(record.value);
          if (!namesEventOf(message, COMPLETIONS)) return;
          const parsed = RunEventEnvelopeSchema.safeParse(message);
          if (!parsed.success)
            return logger.warn({ offset: record.offset }, 'a run event on the event log is not an envelope; online evaluation skips it');
          await online.heard(parsed.data);
        })
      : undefined;
    const experimentRepository = createExperimentRepository(database.db);
    const experiments = createExperimentService({
      repository: experimentRepository,
      agents: clients.agents,
      online: onlineRepository,
      ports: clients.experiments,
    });
    const canaries = createCanaryScanner({
      repository: experimentRepository,
      online: onlineRepository,
      ports: clients.experiments,
      logger,
      settings: {
        intervalMs: config.Canary.ScanInterval,
        autoRollback: config.Canary.AutoRollbackEnabled,
        lowScoreThreshold: config.OnlineEvaluation.LowScoreThreshold,
        minSampleSize: config.OnlineEvaluation.MinSampleSize,
        windowMs: config.OnlineEvaluation.EvaluationWindow,
      },
    });
    canaries.start();
    grpc.server.add(EvaluationServiceDefinition, evaluationGrpc(service, online, settings, experiments));
    grpc.server.add(RetentionServiceDefinition, retentionGrpc(database, EVALUATION_RETENTION_TARGETS));
    worker.start();
    return {
      // Suite runs held here go back at once, for another instance to go on with.
      drain: () => worker.stop(),
      close: async () => {
        await canaries.stop();
        await completions?.unsubscribe();
        await worker.stop();
        clients.close();
      },
    };
  },
});
