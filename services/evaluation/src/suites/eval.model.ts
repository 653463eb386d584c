/** A check of a case's answer (API.md "Evaluations and experiments"). */
export type GraderSpec =
  | { kind: 'exact'; value?: string; ignoreCase?: boolean }
  | { kind: 'contains'; value?: string; ignoreCase?: boolean }
  | { kind: 'regex'; pattern: string; flags?: string }
  | { kind: 'jsonSchema'; schema: Record<string, unknown> }
  | { kind: 'judge'; agent: string; rubric?: string; threshold?: number };

export type GraderKind = GraderSpec['kind'];
export const GRADER_KINDS: readonly GraderKind[] = ['exact', 'contains', 'regex', 'jsonSchema', 'judge'];

export interface EvalCase {
  id: string;
  input: string;
  parameters: Record<string, string>;
  expected?: string;
  graders: GraderSpec[];
}

export interface SuiteRecord {
  name: string;
  description: string;
  version: number;
  cases: EvalCase[];
  createdAt: Date;
  updatedAt: Date;
}

export type SuiteRunStatus = 'Queued' | 'Running' | 'Completed' | 'Failed' | 'Canceled';
export type CaseStatus = 'Passed' | 'Failed' | 'Error';

export interface GraderResult {
  kind: GraderKind;
  passed: boolean;
  /** 0 … 1. */
  score: number;
  reason: string;
}

/** One case's run and grades. */
export interface CaseResult {
  caseId: string;
  input: string;
  expected?: string;
  status: CaseStatus;
  score: number;
  runId?: string;
  output: string;
  graders: GraderResult[];
  cost: number | null;
  /** Its judges' runs, when priced (absent on results stored before judges were priced). */
  judgeCost?: number | null;
  inputTokens: number;
  outputTokens: number;
  latencyMs: number;
  error?: string;
}

export interface Aggregate {
  cases: number;
  passed: number;
  failed: number;
  errored: number;
  passRate: number;
  meanScore: number;
  cost: number | null;
  /** The judges' runs, when any was priced. */
  judgeCost: number | null;
  inputTokens: number;
  outputTokens: number;
  latencyP50Ms: number;
  latencyP95Ms: number;
}

export interface SuiteRunRecord {
  id: string;
  suite: string;
  suiteVersion: number;
  agentName: string;
  agentVersion: number | null;
  status: SuiteRunStatus;
  casesDone: number;
  aggregate: Aggregate;
  error: string | null;
  createdAt: Date;
  startedAt: Date | null;
  completedAt: Date | null;
}

/** The aggregate of a suite run's results so far (of `total` cases). */
export function aggregateOf(results: CaseResult[], total: number): Aggregate {
  const count = (status: CaseStatus) => results.filter((result) => result.status === status).length;
  const passed = count('Passed');
  const priced = results.filter((result) => result.cost !== null);
  const judged = results.filter((result) => result.judgeCost !== undefined && result.judgeCost !== null);
  const latencies = results.map((result) => result.latencyMs).sort((a, b) => a - b);
  const percentile = (p: number) => (latencies.length ? latencies[Math.min(latencies.length - 1, Math.ceil(p * latencies.length) - 1)] : 0);
  return {
    cases: total,
    passed,
    failed: count('Failed'),
    errored: count('Error'),
    passRate: total ? passed / total : 0,
    meanScore: results.length ? results.reduce((sum, result) => sum + result.score, 0) / results.length : 0,
    cost: priced.length ? priced.reduce((sum, result) => sum + result.cost!, 0) : null,
    judgeCost: judged.length ? judged.reduce((sum, result) => sum + result.judgeCost!, 0) : null,
    inputTokens: results.reduce((sum, result) => sum + result.inputTokens, 0),
    outputTokens: results.reduce((sum, result) => sum + result.outputTokens, 0),
    latencyP50Ms: percentile(0.5),
    latencyP95Ms: percentile(0.95),
  };
}
