import type { evaluationPb as pb } from '@hangar/contracts';
import type { CallerContext } from '@hangar/platform';
import type { ExperimentRecord } from './experiment.repository.js';
import type { ExperimentService } from './experiment.service.js';

type ExperimentMethods = Pick<
  pb.EvaluationServiceImplementation<CallerContext>,
  | 'putExperiment'
  | 'getExperiment'
  | 'listExperiments'
  | 'deleteExperiment'
  | 'startExperiment'
  | 'stopExperiment'
  | 'getExperimentResults'
  | 'getRunningExperiment'
>;

const experimentToProto = (experiment: ExperimentRecord): pb.Experiment => ({
  name: experiment.name,
  agentName: experiment.agentName,
  variants: experiment.variants,
  canary: experiment.canary ?? undefined,
  status: experiment.status,
  reason: experiment.reason ?? undefined,
  createdAt: experiment.createdAt.toISOString(),
  updatedAt: experiment.updatedAt.toISOString(),
  startedAt: experiment.startedAt?.toISOString(),
  stoppedAt: experiment.stoppedAt?.toISOString(),
});

/** gRPC ↔ experiment rules; translation only. */
export function experimentGrpc(experiments: ExperimentService): ExperimentMethods {
  return {
    async putExperiment(request, { caller }) {
      const { experiment, created } = await experiments.put(caller, request.name, {
        agentName: request.agentName,
        variants: request.variants,
        canary: request.canary,
      });
      return { experiment: experimentToProto(experiment), created };
    },
    async getExperiment({ name }, { caller }) {
      return { experiment: experimentToProto(await experiments.get(caller, name)) };
    },
    async listExperiments(_request, { caller }) {
      return { experiments: (await experiments.list(caller)).map(experimentToProto) };
    },
    async deleteExperiment({ name }, { caller }) {
      await experiments.delete(caller, name);
      return {};
    },
    async startExperiment({ name }, { caller }) {
      return { experiment: experimentToProto(await experiments.start(caller, name)) };
    },
    async stopExperiment({ name }, { caller }) {
      return { experiment: experimentToProto(await experiments.stop(caller, name)) };
    },
    async getExperimentResults({ name }, { caller }) {
      const { experiment, variants } = await experiments.results(caller, name);
      return {
        experiment: experimentToProto(experiment),
        variants: variants.map((variant) => ({ ...variant, cost: variant.cost ?? undefined, meanScore: variant.meanScore ?? undefined })),
      };
    },
    async getRunningExperiment({ agentName }, { caller }) {
      const running = await experiments.running(caller, agentName);
      return running ? { name: running.name, variants: running.variants } : { variants: [] };
    },
  };
}
