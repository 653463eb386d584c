import type { ApprovalRow } from '../approvals/approval.model.js';
import type { RunRow } from './run.model.js';

/** What a run tells its caller while it executes (the StartRun stream). */
export type RunUpdate =
  | { type: 'started'; run: RunRow }
  | { type: 'text-delta'; text: string }
  | { type: 'tool-call'; toolCallId: string; toolName: string; args: unknown }
  | { type: 'tool-result'; toolCallId: string; result: unknown }
  | { type: 'child-run'; runId: string; agentName: string }
  /** Tool calls that wait for a human decision (the run is AwaitingApproval meanwhile). */
  | { type: 'approvals'; approvals: ApprovalRow[] }
  /** A completed or canceled run. */
  | { type: 'finished'; run: RunRow; outputText: string }
  | { type: 'failed'; run: RunRow; errorType: string; message: string };

/** A tool's arguments or result as the event log keeps them (RunRecording:RecordToolPayloads, MaxPayloadLength). */
export function recordedPayload(settings: { RecordToolPayloads: boolean; MaxPayloadLength: number }, value: unknown): unknown {
  return settings.RecordToolPayloads ? recordable(value, settings.MaxPayloadLength) : null;
}

/** A recorded payload longer than `limit` characters (as JSON) becomes a marked preview. */
export function recordable(value: unknown, limit: number): unknown {
  const json = JSON.stringify(value ?? null);
  return json.length <= limit ? (value ?? null) : { truncated: true, length: json.length, preview: json.slice(0, limit) };
}
