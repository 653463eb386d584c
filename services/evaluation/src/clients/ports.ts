import type { Caller } from '@hangar/platform';

/** One run of an agent on a case's input (or a judge's prompt), of kind `Evaluation`. */
export interface CaseRunRequest {
  agentName: string;
  agentVersion?: number;
  input: string;
  parameters: Record<string, string>;
}

/** How a case's run ended: completed with its answer, or failed (the agent's own failure, a result like any other). */
export interface CaseRun {
  runId?: string;
  completed: boolean;
  output: string;
  error?: string;
  inputTokens: number;
  outputTokens: number;
  cost: number | null;
  latencyMs: number;
}

/** The run executor, as the evaluation service uses it. */
export interface CaseRunner {
  run(caller: Caller, request: CaseRunRequest, signal: AbortSignal): Promise<CaseRun>;
}

/** The agent registry, as the evaluation service uses it. */
export interface AgentVersions {
  /** The version a suite run pins: the one asked for, or the current one; null for a code agent. Throws 404 for an unknown agent or version. */
  pin(caller: Caller, name: string, version?: number): Promise<number | null>;
}
