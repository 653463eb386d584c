import type { evaluationPb as pb } from '@hangar/contracts';
import { z } from 'zod';

const ignoreCase = z.boolean().optional().describe('Compare case-insensitively (both sides trimmed in any case)');

export const GraderSchema = z
  .discriminatedUnion('kind', [
    z.strictObject({
      kind: z.literal('exact'),
      value: z.string().optional().describe('The case’s `expected` when absent'),
      ignoreCase,
    }),
    z.strictObject({
      kind: z.literal('contains'),
      value: z.string().optional().describe('The case’s `expected` when absent'),
      ignoreCase,
    }),
    z.strictObject({
      kind: z.literal('regex'),
      pattern: z.string().min(1).max(1000).describe('A JavaScript regular expression the answer must match (1 s at most per answer)'),
      flags: z
        .string()
        .regex(/^[dgimsuvy]*$/, 'must be JavaScript regular expression flags')
        .optional(),
    }),
    z.strictObject({
      kind: z.literal('jsonSchema'),
      schema: z.record(z.string(), z.unknown()).describe('A JSON Schema the answer, read as JSON, must satisfy'),
    }),
    z.strictObject({
      kind: z.literal('judge'),
      agent: z.string().min(1).describe('An agent of the tenant that scores the answer from 0 to 100 (asked for JSON {score, reason})'),
      rubric: z.string().max(4000).optional(),
      threshold: z.number().min(0).max(100).optional().describe('The passing score; 60 by default'),
    }),
  ])
  .meta({ id: 'EvalGrader' });

const CaseRequestSchema = z.strictObject({
  id: z.string().optional().describe('Unique in the suite; `case-<n>` (its position from 1) by default'),
  input: z.string().min(1).max(100_000).describe('The user message the agent answers'),
  parameters: z.record(z.string(), z.string()).optional().describe('The agent’s run parameters'),
  expected: z.string().optional(),
  graders: GraderSchema.array().max(20).optional().describe('All must pass; without graders a case is graded `exact` on `expected`'),
});

export const SuiteRequestSchema = z
  .strictObject({
    description: z.string().max(2000).optional(),
    cases: CaseRequestSchema.array().min(1).max(1000),
  })
  .meta({ id: 'EvalSuiteRequest' });

const CaseSchema = z.object({
  id: z.string(),
  input: z.string(),
  parameters: z.record(z.string(), z.string()),
  expected: z.string().optional(),
  graders: GraderSchema.array(),
});

export const SuiteSummarySchema = z
  .object({
    name: z.string(),
    description: z.string(),
    version: z.number().int().describe('1 when created, one more on each replacement'),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'EvalSuiteSummary' });

export const SuiteSchema = SuiteSummarySchema.extend({ cases: CaseSchema.array() }).meta({ id: 'EvalSuite' });

export const SuiteRunRequestSchema = z
  .strictObject({
    agentName: z.string().min(1),
    agentVersion: z.number().int().min(1).optional().describe('A stored version of the agent; its current version when absent'),
  })
  .meta({ id: 'EvalRunRequest' });

const SummarySchema = z
  .object({
    passed: z.number().int(),
    failed: z.number().int().describe('Cases whose answer did not pass, errored ones included'),
    errored: z.number().int().describe('Of the failed, those whose run failed or could not be graded'),
    cases: z.number().int(),
    passRate: z.number().describe('passed / cases, 0 … 1'),
    meanScore: z.number().describe('The mean case score of the cases done, 0 … 1'),
    cost: z.number().nullable().describe('The cases’ run costs; null when none was priced'),
    judgeCost: z.number().nullable().describe('Their judges’ run costs; null when none was priced'),
    inputTokens: z.number().int(),
    outputTokens: z.number().int(),
    latencyMsP50: z.number(),
    latencyMsP95: z.number(),
  })
  .meta({ id: 'EvalRunSummary' });

export const SuiteRunSchema = z
  .object({
    id: z.string(),
    suite: z.string(),
    suiteVersion: z.number().int().describe('The suite’s version whose cases ran'),
    agentName: z.string(),
    agentVersion: z.number().int().nullable().describe('Null for a code agent'),
    status: z.enum(['Queued', 'Running', 'Completed', 'Failed', 'Canceled']),
    casesDone: z.number().int(),
    summary: SummarySchema.describe('Over the cases done so far until the run ends'),
    error: z.string().nullable(),
    createdAt: z.iso.datetime(),
    startedAt: z.iso.datetime().nullable(),
    completedAt: z.iso.datetime().nullable(),
  })
  .meta({ id: 'EvalRun' });

const CaseResultSchema = z.object({
  caseId: z.string(),
  runId: z.string().nullable().describe('The agent’s run (kind Evaluation)'),
  passed: z.boolean(),
  score: z.number().describe('The mean of its graders’ scores, 0 … 1'),
  status: z.enum(['Passed', 'Failed', 'Error']).describe('Error: the run failed or the answer could not be graded'),
  graders: z.object({ kind: z.string(), passed: z.boolean(), score: z.number(), detail: z.string() }).array(),
  input: z.string(),
  expected: z.string().nullable(),
  output: z.string(),
  cost: z.number().nullable(),
  judgeCost: z.number().nullable(),
  inputTokens: z.number().int(),
  outputTokens: z.number().int(),
  latencyMs: z.number(),
  error: z.string().nullable(),
});

export const SuiteRunDetailSchema = SuiteRunSchema.extend({ results: CaseResultSchema.array() }).meta({ id: 'EvalRunDetail' });

export const ComparisonSchema = z
  .object({
    base: SuiteRunSchema,
    head: SuiteRunSchema,
    delta: z
      .object({ passRate: z.number(), meanScore: z.number(), cost: z.number().nullable(), latencyMsP50: z.number() })
      .describe('head − base'),
    cases: z
      .object({
        caseId: z.string(),
        base: z.object({ status: z.string(), score: z.number() }).nullable(),
        head: z.object({ status: z.string(), score: z.number() }).nullable(),
        change: z.enum(['Improved', 'Regressed', 'Unchanged', 'Added', 'Removed']),
      })
      .array(),
  })
  .meta({ id: 'EvalRunComparison' });

export const OnlineSummarySchema = z
  .object({
    enabled: z.boolean().describe('Enabled, a positive sample rate and a judge agent: runs are being scored'),
    sampleRate: z.number(),
    judgeAgent: z.string().nullable(),
    windowMs: z.number().int(),
    lowScoreThreshold: z.number(),
    minSampleSize: z.number().int(),
    agents: z
      .object({
        agentName: z.string(),
        samples: z.number().int(),
        meanScore: z.number(),
        minScore: z.number(),
        low: z.boolean(),
        lastScoredAt: z.iso.datetime(),
      })
      .array(),
  })
  .meta({ id: 'OnlineEvaluationSummary' });

type Grader = z.infer<typeof GraderSchema>;

export const graderToProto = (grader: Grader): pb.EvalGrader => ({ schema: undefined, ...grader });

export const graderJson = (grader: pb.EvalGrader): Grader => {
  const defined = Object.fromEntries(Object.entries(grader).filter(([, value]) => value !== undefined));
  return defined as Grader;
};

export const suiteSummaryJson = (suite: pb.EvalSuite) => ({
  name: suite.name,
  description: suite.description,
  version: suite.version,
  createdAt: suite.createdAt!,
  updatedAt: suite.updatedAt!,
});

export const suiteJson = (suite: pb.EvalSuite) => ({
  ...suiteSummaryJson(suite),
  cases: suite.cases.map((entry) => ({
    id: entry.id,
    input: entry.input,
    parameters: entry.parameters,
    ...(entry.expected !== undefined && { expected: entry.expected }),
    graders: entry.graders.map(graderJson),
  })),
});

export const suiteRunJson = (run: pb.EvalSuiteRun) => {
  const aggregate = run.aggregate!;
  return {
    id: run.id,
    suite: run.suite,
    suiteVersion: run.suiteVersion,
    agentName: run.agentName,
    agentVersion: run.agentVersion ?? null,
    status: run.status as z.infer<typeof SuiteRunSchema>['status'],
    casesDone: run.casesDone,
    summary: {
      passed: aggregate.passed,
      failed: aggregate.failed + aggregate.errored,
      errored: aggregate.errored,
      cases: aggregate.cases,
      passRate: aggregate.passRate,
      meanScore: aggregate.meanScore,
      cost: aggregate.cost ?? null,
      judgeCost: aggregate.judgeCost ?? null,
      inputTokens: aggregate.inputTokens,
      outputTokens: aggregate.outputTokens,
      latencyMsP50: aggregate.latencyP50Ms,
      latencyMsP95: aggregate.latencyP95Ms,
    },
    error: run.error ?? null,
    createdAt: run.createdAt!,
    startedAt: run.startedAt ?? null,
    completedAt: run.completedAt ?? null,
  };
};

export const caseResultJson = (result: pb.EvalCaseResult) => ({
  caseId: result.caseId,
  runId: result.runId ?? null,
  passed: result.status === 'Passed',
  score: result.score,
  status: result.status as z.infer<typeof CaseResultSchema>['status'],
  graders: result.graders.map((grader) => ({ kind: grader.kind, passed: grader.passed, score: grader.score, detail: grader.reason })),
  input: result.input,
  expected: result.expected ?? null,
  output: result.output,
  cost: result.cost ?? null,
  judgeCost: result.judgeCost ?? null,
  inputTokens: result.inputTokens,
  outputTokens: result.outputTokens,
  latencyMs: result.latencyMs,
  error: result.error ?? null,
});
