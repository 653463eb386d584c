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

/** A completed run as online evaluation judges it. */
export interface JudgedRun {
  kind: string;
  status: string;
  agentVersion: number | null;
  /** The user's last message, when the run's input was recorded. */
  input?: string;
  /** The run's answer (its `message.completed` event), when it gave one. */
  output?: string;
}

/** The run executor's records, as online evaluation reads and scores them. */
export interface RunRecords {
  read(caller: Caller, runId: string): Promise<JudgedRun>;
  /** Saves the judge's score on the run, as source `Evaluator`. */
  score(caller: Caller, runId: string, score: { name: string; value: number; comment: string }): Promise<void>;
}

/** An agent's run as an experiment's results count it. */
export interface ExperimentRun {
  agentVersion: number | null;
  status: string;
  cost: number | null;
  durationMs: number | null;
}

/** What experiments and canaries ask of the other services. */
export interface ExperimentPorts {
  /** The runs tagged with the experiment (label `experiment:<name>`), at most `limit`. */
  taggedRuns(caller: Caller, experiment: string, limit: number): Promise<ExperimentRun[]>;
  /** Rolls the agent back to `version` (a new version); returns it. */
  rollback(caller: Caller, agentName: string, version: number): Promise<number>;
  audit(
    caller: Caller,
    entry: { action: string; resourceType: string; resourceId: string; details: Record<string, unknown> },
  ): Promise<void>;
  /** A webhook event for the tenant's subscribers; `id` makes it once. */
  webhook(caller: Caller, event: { id: string; type: string; data: Record<string, unknown> }): Promise<void>;
  /** Tells run executors that the agent's experiments changed. */
  announce(tenantId: string, agentName: string): Promise<void>;
}
