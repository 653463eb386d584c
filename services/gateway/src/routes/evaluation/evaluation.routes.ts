import { z } from 'zod';
import { locationHeader, problemResponse } from '../../api.schemas.js';
import { defineRoute } from '../../http/route.js';
import {
  caseResultJson,
  OnlineSummarySchema,
  ComparisonSchema,
  graderToProto,
  SuiteRequestSchema,
  SuiteRunDetailSchema,
  suiteJson,
  SuiteRunRequestSchema,
  SuiteRunSchema,
  suiteRunJson,
  SuiteSchema,
  suiteSummaryJson,
  SuiteSummarySchema,
} from './evaluation.schemas.js';

const TAG = 'Evaluations';
const SuiteParams = z.object({ suite: z.string() });
const RunParams = z.object({ id: z.string() });
const NO_SUITE = problemResponse('No such eval suite');

/** API.md "Evaluations and experiments": eval suites, executed by the evaluation service. */
export const evaluationRoutes = [
  defineRoute({
    method: 'get',
    path: '/api/evals',
    operationId: 'listEvalSuites',
    summary: 'List eval suites',
    description: 'Returns the tenant’s eval suites by name, without their cases.',
    tag: TAG,
    auth: { role: 'Reader', scope: 'EvalsRead' },
    responses: { 200: { description: 'Suites', schema: SuiteSummarySchema.array() } },
    async handler({ caller }, { evaluation }) {
      return { status: 200, body: (await evaluation.listSuites({}, { caller })).suites.map(suiteSummaryJson) };
    },
  }),
  // Before `/api/evals/{suite}`, which would take `online` for a suite's name (none may have it).
  defineRoute({
    method: 'get',
    path: '/api/evals/online',
    operationId: 'getOnlineEvaluation',
    summary: 'Online evaluation per agent',
    description:
      'Summarises the judge’s scores of sampled completed runs (OnlineEvaluation:*) per agent over OnlineEvaluation:EvaluationWindow: samples, mean and lowest score (0 … 100), and `low` when at least MinSampleSize samples average below LowScoreThreshold. Each score is also on its run (GET /api/runs/{runId}/feedback, source Evaluator).',
    tag: TAG,
    auth: { role: 'Reader', scope: 'EvalsRead' },
    responses: { 200: { description: 'The summary', schema: OnlineSummarySchema } },
    async handler({ caller }, { evaluation }) {
      const summary = await evaluation.getOnlineSummary({}, { caller });
      return {
        status: 200,
        body: {
          enabled: summary.enabled,
          sampleRate: summary.sampleRate,
          judgeAgent: summary.judgeAgent ?? null,
          windowMs: summary.windowMs,
          lowScoreThreshold: summary.lowScoreThreshold,
          minSampleSize: summary.minSampleSize,
          agents: summary.agents.map((agent) => ({ ...agent, lastScoredAt: agent.lastScoredAt! })),
        },
      };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/evals/{suite}',
    operationId: 'getEvalSuite',
    summary: 'Get an eval suite',
    description: 'Returns the suite with its cases, each with its id and graders as they are run.',
    tag: TAG,
    auth: { role: 'Reader', scope: 'EvalsRead' },
    params: SuiteParams,
    responses: { 200: { description: 'The suite', schema: SuiteSchema }, 404: NO_SUITE },
    async handler({ params, caller }, { evaluation }) {
      return { status: 200, body: suiteJson((await evaluation.getSuite({ name: params.suite }, { caller })).suite!) };
    },
  }),
  defineRoute({
    method: 'put',
    path: '/api/evals/{suite}',
    operationId: 'putEvalSuite',
    summary: 'Create or replace an eval suite',
    description:
      'Creates the suite (201, version 1) or replaces its cases as its next version (200). Each case is a user message with graders that must all pass: exact and contains compare with `value` or the case’s `expected`, regex matches a pattern, jsonSchema checks the answer read as JSON, judge asks an agent of the tenant for a score from 0 to 100. A case without graders is graded exact on `expected`. An invalid pattern or schema, a duplicate case id or the reserved name `online` is 400 with every reason.',
    tag: TAG,
    auth: { role: 'Admin', scope: 'EvalsAdmin' },
    params: SuiteParams,
    body: SuiteRequestSchema,
    responses: {
      200: { description: 'Replaced', schema: SuiteSchema },
      201: { description: 'Created', schema: SuiteSchema },
      400: problemResponse('Invalid name, case or grader'),
    },
    async handler({ params, body, caller }, { evaluation }) {
      const { suite, created } = await evaluation.putSuite(
        {
          name: params.suite,
          description: body.description ?? '',
          cases: body.cases.map((entry) => ({
            id: entry.id ?? '',
            input: entry.input,
            parameters: entry.parameters ?? {},
            expected: entry.expected,
            graders: (entry.graders ?? []).map(graderToProto),
          })),
        },
        { caller },
      );
      return { status: created ? 201 : 200, body: suiteJson(suite!) };
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/api/evals/{suite}',
    operationId: 'deleteEvalSuite',
    summary: 'Delete an eval suite',
    description: 'Deletes the suite with its runs and their results (the agents’ runs stay recorded).',
    tag: TAG,
    auth: { role: 'Admin', scope: 'EvalsAdmin' },
    params: SuiteParams,
    responses: { 204: { description: 'Deleted' }, 404: NO_SUITE },
    async handler({ params, caller }, { evaluation }) {
      await evaluation.deleteSuite({ name: params.suite }, { caller });
      return { status: 204 };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/evals/{suite}/runs',
    operationId: 'startEvalSuiteRun',
    summary: 'Run an eval suite',
    description:
      'Queues a run of the suite over an agent version (its current one when absent, pinned now) and answers 202 `{ id }` at once; any instance of the evaluation service executes it, four cases at a time, each case a run of kind Evaluation that counts against quotas like any run. Poll the eval run named in Location (`/api/eval-runs/{id}`) for progress, results per case and the summary. An unknown agent or version is 404; a judge agent that does not exist is 400.',
    tag: TAG,
    auth: { role: 'Operator', scope: 'RunsWrite' },
    params: SuiteParams,
    body: SuiteRunRequestSchema,
    responses: {
      202: {
        description: 'Queued',
        schema: z.object({ id: z.string() }).meta({ id: 'EvalRunAccepted' }),
        headers: { Location: locationHeader('The eval run, {prefix}/api/eval-runs/{id}') },
      },
      400: problemResponse('A judge agent the suite names does not exist'),
      404: problemResponse('No such suite, agent or agent version'),
    },
    async handler({ params, body, caller }, { evaluation, config }) {
      const { run } = await evaluation.startSuiteRun(
        { suite: params.suite, agentName: body.agentName, agentVersion: body.agentVersion },
        { caller },
      );
      return { status: 202, body: { id: run!.id }, headers: { Location: `${config.Hangar.Api.Prefix}/api/eval-runs/${run!.id}` } };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/evals/{suite}/runs',
    operationId: 'listEvalSuiteRuns',
    summary: 'List the runs of an eval suite',
    description: 'Returns the suite’s latest 100 runs, newest first, each with its summary (so far, for a run still going).',
    tag: TAG,
    auth: { role: 'Reader', scope: 'EvalsRead' },
    params: SuiteParams,
    responses: { 200: { description: 'Suite runs', schema: SuiteRunSchema.array() }, 404: NO_SUITE },
    async handler({ params, caller }, { evaluation }) {
      return { status: 200, body: (await evaluation.listSuiteRuns({ suite: params.suite }, { caller })).runs.map(suiteRunJson) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/eval-runs/{id}',
    operationId: 'getEvalRun',
    summary: 'Get an eval run',
    description:
      'Returns the run of a suite with its summary and the result of every case done: its run, answer, grades, cost and latency.',
    tag: TAG,
    auth: { role: 'Reader', scope: 'EvalsRead' },
    params: RunParams,
    responses: { 200: { description: 'The suite run', schema: SuiteRunDetailSchema }, 404: problemResponse('No such eval run') },
    async handler({ params, caller }, { evaluation }) {
      const { run, results } = await evaluation.getSuiteRun({ id: params.id }, { caller });
      return { status: 200, body: { ...suiteRunJson(run!), results: results.map(caseResultJson) } };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/eval-runs/{id}/cancel',
    operationId: 'cancelEvalRun',
    summary: 'Cancel an eval run',
    description:
      'Ends a queued or running suite run as Canceled at once and stops its cases: those under way are canceled with their runs (by another instance of the evaluation service that holds it, within a third of its lease), and no result is added after this, so its summary stays that of the cases done. Canceling a canceled run answers it again; one that already completed or failed is 409.',
    tag: TAG,
    auth: { role: 'Operator', scope: 'RunsWrite' },
    params: RunParams,
    responses: {
      200: { description: 'The canceled suite run', schema: SuiteRunSchema },
      404: problemResponse('No such eval run'),
      409: problemResponse('The eval run already completed or failed'),
    },
    async handler({ params, caller }, { evaluation }) {
      const { run } = await evaluation.cancelSuiteRun({ id: params.id }, { caller });
      return { status: 200, body: suiteRunJson(run!) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/evals/{suite}/compare',
    operationId: 'compareEvalSuiteRuns',
    summary: 'Compare two runs of an eval suite',
    description:
      'Sets two runs of the suite side by side: the change of pass rate, mean score, cost and median latency (head − base), and every case by id as Improved, Regressed, Unchanged, Added or Removed.',
    tag: TAG,
    auth: { role: 'Reader', scope: 'EvalsRead' },
    params: SuiteParams,
    query: z.object({ base: z.string().min(1).describe('The earlier run'), head: z.string().min(1).describe('The run compared with it') }),
    responses: { 200: { description: 'The comparison', schema: ComparisonSchema }, 404: problemResponse('No such suite or run') },
    async handler({ params, query, caller }, { evaluation }) {
      const compared = await evaluation.compareSuiteRuns({ suite: params.suite, baseRunId: query.base, headRunId: query.head }, { caller });
      const base = suiteRunJson(compared.base!);
      const head = suiteRunJson(compared.head!);
      const cost = base.summary.cost === null || head.summary.cost === null ? null : head.summary.cost - base.summary.cost;
      return {
        status: 200,
        body: {
          base,
          head,
          delta: {
            passRate: head.summary.passRate - base.summary.passRate,
            meanScore: head.summary.meanScore - base.summary.meanScore,
            cost,
            latencyMsP50: head.summary.latencyMsP50 - base.summary.latencyMsP50,
          },
          cases: compared.cases.map((entry) => ({
            caseId: entry.caseId,
            base: entry.baseStatus === undefined ? null : { status: entry.baseStatus, score: entry.baseScore! },
            head: entry.headStatus === undefined ? null : { status: entry.headStatus, score: entry.headScore! },
            change: entry.change as 'Improved' | 'Regressed' | 'Unchanged' | 'Added' | 'Removed',
          })),
        },
      };
    },
  }),
];
