import type { evaluationPb as pb } from '@hangar/contracts';
import type { CallerContext } from '@hangar/platform';
import type { Aggregate, CaseResult, EvalCase, GraderSpec, SuiteRecord, SuiteRunRecord } from './suites/eval.model.js';
import type { EvaluationService } from './suites/eval.service.js';
import type { OnlineEvaluationSettings, OnlineEvaluator } from './online/online-evaluator.js';
import { experimentGrpc } from './experiments/experiment.grpc.js';
import type { ExperimentService } from './experiments/experiment.service.js';

/** The fields of its kind only; the service checks them. */
const graderFromProto = (grader: pb.EvalGrader): GraderSpec => {
  switch (grader.kind) {
    case 'exact':
    case 'contains':
      return { kind: grader.kind, value: grader.value, ignoreCase: grader.ignoreCase };
    case 'regex':
      return { kind: 'regex', pattern: grader.pattern ?? '', flags: grader.flags };
    case 'jsonSchema':
      return { kind: 'jsonSchema', schema: grader.schema! };
    default:
      // judge, or an unknown kind the service names as such
      return { kind: grader.kind, agent: grader.agent ?? '', rubric: grader.rubric, threshold: grader.threshold } as GraderSpec;
  }
};

const graderToProto = (grader: GraderSpec): pb.EvalGrader => ({ schema: undefined, ...grader });

const caseToProto = (evalCase: EvalCase): pb.EvalCase => ({ ...evalCase, graders: evalCase.graders.map(graderToProto) });

const suiteToProto = (suite: SuiteRecord): pb.EvalSuite => ({
  name: suite.name,
  description: suite.description,
  version: suite.version,
  cases: suite.cases.map(caseToProto),
  createdAt: suite.createdAt.toISOString(),
  updatedAt: suite.updatedAt.toISOString(),
});

const aggregateToProto = (aggregate: Aggregate): pb.EvalAggregate => ({
  ...aggregate,
  cost: aggregate.cost ?? undefined,
  judgeCost: aggregate.judgeCost ?? undefined,
});

const runToProto = (run: SuiteRunRecord): pb.EvalSuiteRun => ({
  id: run.id,
  suite: run.suite,
  suiteVersion: run.suiteVersion,
  agentName: run.agentName,
  agentVersion: run.agentVersion ?? undefined,
  status: run.status,
  casesDone: run.casesDone,
  aggregate: aggregateToProto(run.aggregate),
  error: run.error ?? undefined,
  createdAt: run.createdAt.toISOString(),
  startedAt: run.startedAt?.toISOString(),
  completedAt: run.completedAt?.toISOString(),
});

const resultToProto = (result: CaseResult): pb.EvalCaseResult => ({
  ...result,
  cost: result.cost ?? undefined,
  judgeCost: result.judgeCost ?? undefined,
});

/** gRPC ↔ evaluation rules; translation only. */
export function evaluationGrpc(
  evaluation: EvaluationService,
  online: OnlineEvaluator,
  settings: OnlineEvaluationSettings,
  experiments: ExperimentService,
): pb.EvaluationServiceImplementation<CallerContext> {
  return {
    ...experimentGrpc(experiments),
    async putSuite(request, { caller }) {
      const cases = request.cases.map((entry) => ({
        id: entry.id || undefined,
        input: entry.input,
        parameters: entry.parameters,
        expected: entry.expected,
        graders: entry.graders.map(graderFromProto),
      }));
      const { suite, created } = await evaluation.putSuite(caller, request.name, { description: request.description, cases });
      return { suite: suiteToProto(suite), created };
    },
    async getSuite({ name }, { caller }) {
      return { suite: suiteToProto(await evaluation.getSuite(caller, name)) };
    },
    async listSuites(_request, { caller }) {
      return { suites: (await evaluation.listSuites(caller)).map(suiteToProto) };
    },
    async deleteSuite({ name }, { caller }) {
      await evaluation.deleteSuite(caller, name);
      return {};
    },
    async startSuiteRun(request, { caller }) {
      return { run: runToProto(await evaluation.startRun(caller, request.suite, request.agentName, request.agentVersion)) };
    },
    async getSuiteRun({ id }, { caller }) {
      const { run, results } = await evaluation.getRun(caller, id);
      return { run: runToProto(run), results: results.map(resultToProto) };
    },
    async cancelSuiteRun({ id }, { caller }) {
      return { run: runToProto(await evaluation.cancelRun(caller, id)) };
    },
    async listSuiteRuns({ suite }, { caller }) {
      return { runs: (await evaluation.listRuns(caller, suite)).map(runToProto) };
    },
    async compareSuiteRuns(request, { caller }) {
      const { base, head, cases } = await evaluation.compare(caller, request.suite, request.baseRunId, request.headRunId);
      return {
        base: runToProto(base),
        head: runToProto(head),
        cases: cases.map((entry) => ({
          caseId: entry.caseId,
          baseStatus: entry.base?.status,
          baseScore: entry.base?.score,
          headStatus: entry.head?.status,
          headScore: entry.head?.score,
          change: entry.change,
        })),
      };
    },
    async getOnlineSummary(_request, { caller }) {
      const agents = await online.summary(caller);
      return {
        enabled: online.active,
        sampleRate: settings.sampleRate,
        judgeAgent: settings.judgeAgent ?? undefined,
        windowMs: settings.windowMs,
        lowScoreThreshold: settings.lowScoreThreshold,
        minSampleSize: settings.minSampleSize,
        agents: agents.map((agent) => ({ ...agent, lastScoredAt: agent.lastScoredAt.toISOString() })),
      };
    },
  };
}
