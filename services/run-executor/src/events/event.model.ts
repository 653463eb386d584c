export interface RunEventRow {
  seq: number;
  runId: string;
  type: string;
  at: string;
  data: Record<string, unknown>;
}

/** Where a run event belongs: its run, the tree's root (the event log's key) and the tenant. */
export interface RunEventTarget {
  runId: string;
  rootRunId: string;
  tenantId: string;
  agentName: string;
  /** The run span's W3C trace context, carried with each event on the event log. */
  traceparent?: string;
}

export interface NewRunEvent {
  seq: number;
  type: string;
  data: Record<string, unknown>;
}

/** The events that end a run's log: a reader of the log stops after one. */
export const TERMINAL_EVENTS: ReadonlySet<string> = new Set(['run.completed', 'run.failed', 'run.canceled']);
