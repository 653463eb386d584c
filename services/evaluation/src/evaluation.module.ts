import { EvaluationServiceDefinition, RetentionServiceDefinition } from '@hangar/contracts';
import { grpcServiceModule, retentionGrpc } from '@hangar/platform';
import { createEvaluationClients } from './clients/grpc-clients.js';
import { evaluationGrpc } from './evaluation.grpc.js';
import { EVALUATION_SCHEMA, evaluationMigrations } from './migrations/index.js';
import { EVALUATION_RETENTION_TARGETS } from './retention-targets.js';
import { createEvaluationRepository, type EvaluationDatabase } from './suites/eval.repository.js';
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

export const evaluationModule = grpcServiceModule({
  name: 'Evaluation',
  dependsOn: ['RunExecutor', 'AgentRegistry'],
  async setup({ engines, logger, addressOf }, grpc) {
    const database = await engines.storage.open<EvaluationDatabase>(EVALUATION_SCHEMA, evaluationMigrations);
    const repository = createEvaluationRepository(database.db);
    const clients = createEvaluationClients(addressOf);
    const worker = createSuiteWorker({ repository, runner: clients.runner, logger, settings: SUITE_WORKER });
    const service = createEvaluationService({ repository, agents: clients.agents, wake: worker.wake });
    grpc.server.add(EvaluationServiceDefinition, evaluationGrpc(service));
    grpc.server.add(RetentionServiceDefinition, retentionGrpc(database, EVALUATION_RETENTION_TARGETS));
    worker.start();
    return {
      // Suite runs held here go back at once, for another instance to go on with.
      drain: () => worker.stop(),
      close: async () => {
        await worker.stop();
        clients.close();
      },
    };
  },
});
