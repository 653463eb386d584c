import { randomUUID } from 'node:crypto';
import type { ToolResultPart } from 'ai';
import { conflict, inSpan, isUuid, notFound, SpanKind, type Caller, type HangarConfig } from '@hangar/platform';
import type { AuditWriter } from '../clients/ports.js';
import { channels, type TypedPubSub } from '../events/channels.js';
import type { Emit } from '../events/event-writer.js';
import type { Recorder } from '../recording.js';
import type { RunRepository } from '../runs/run.repository.js';
import { recordedPayload, type RunUpdate } from '../runs/run-update.js';
import type { HeldTools, ToolSets } from '../runs/tool-set.js';
import { createWakeablePause } from '../wakeable-pause.js';
import type { ApprovalRow } from './approval.model.js';
import type { ApprovalRepository } from './approval.repository.js';

/** `Approvals:ExpirationEnabled` false: a request waits (practically) for ever. */
const NEVER_EXPIRES_MS = 100 * 365 * 24 * 60 * 60 * 1000;
/** A decision made on another instance wakes the run through pub/sub; this is the fallback. */
const APPROVAL_POLL_MS = 1000;

/**
 * Told when a run starts and stops waiting for people: a queued run gives its worker slot back
 * meanwhile (a wait may last a day), and `resumed` resolves once it holds a slot again.
 */
export interface HumanWait {
  waiting(): void;
  resumed(): Promise<void>;
}

export interface ApprovalsDeps {
  approvals: ApprovalRepository;
  runs: Pick<RunRepository, 'setStatus'>;
  pubsub: TypedPubSub;
  tools: Pick<ToolSets, 'runCatalogTool'>;
  record: Recorder;
  /** Never throws (see auditOrLog). */
  audit: AuditWriter;
  settings: Pick<HangarConfig, 'Approvals' | 'RunRecording'>;
}

/** Tool calls that wait for a human decision (SPEC "Approvals"): requested by a run, decided from any instance. */
export function createApprovals(deps: ApprovalsDeps) {
  const { Approvals, RunRecording } = deps.settings;

  /** Resolves once none of `ids` is Pending; decisions from any instance wake it through pub/sub. */
  async function decisions(runId: string, ids: string[], signal: AbortSignal): Promise<ApprovalRow[]> {
    const pause = createWakeablePause();
    const subscription = await deps.record('approval subscription', () => deps.pubsub.subscribe(channels.approvals(runId), pause.wake));
    try {
      while (true) {
        const approvals = await deps.approvals.approvals(runId, ids);
        if (approvals.every((approval) => approval.status !== 'Pending')) return approvals;
        if (signal.aborted) throw new Error('aborted');
        await pause.sleep(APPROVAL_POLL_MS, signal);
      }
    } finally {
      await subscription?.unsubscribe();
    }
  }

  /** What the model learns of a tool call that waited for a decision. */
  async function decidedToolOutput(approval: ApprovalRow, held: HeldTools | undefined, signal: AbortSignal): Promise<unknown> {
    if (approval.status === 'Approved') {
      try {
        const execute = held?.[approval.toolName];
        return await (execute
          ? execute(approval.args, approval.toolCallId, signal)
          : deps.tools.runCatalogTool(approval.toolName, approval.args));
      } catch (error) {
        return { error: String((error as Error)?.message ?? error) };
      }
    }
    return approval.status === 'Expired'
      ? { error: 'the approval request expired before anyone decided; the tool was not run' }
      : { error: `a person denied this tool call${approval.comment ? `: ${approval.comment}` : ''}; the tool was not run` };
  }

  return {
    /**
     * The tool calls of a finished model turn that need a decision: records the approvals (the run
     * is AwaitingApproval), waits for every decision, runs the approved calls and returns what the
     * model gets back for its next turn.
     */
    async *settle(
      runId: string,
      calls: Array<{ toolCallId: string; toolName: string; input: unknown }>,
      emit: Emit,
      signal: AbortSignal,
      humanWait?: HumanWait,
      /** The executions of tools that are not catalog tools, held back for approval (see holdForApproval). */
      held?: HeldTools,
    ): AsyncGenerator<RunUpdate, ToolResultPart[]> {
      const requested = await deps.approvals.requestApprovals(
        runId,
        calls.map((call) => ({ id: randomUUID(), toolCallId: call.toolCallId, toolName: call.toolName, args: call.input })),
        Approvals.ExpirationEnabled ? Approvals.DefaultExpiration : NEVER_EXPIRES_MS,
      );
      for (const approval of requested) {
        await emit('approval.requested', {
          approvalId: approval.id,
          toolCallId: approval.toolCallId,
          toolName: approval.toolName,
          args: recordedPayload(RunRecording, approval.args),
          expiresAt: approval.expiresAt,
        });
      }
      yield { type: 'approvals', approvals: requested };
      humanWait?.waiting();
      const decided = await inSpan('approval.wait', { kind: SpanKind.INTERNAL, attributes: { 'hangar.approvals': requested.length } }, () =>
        decisions(
          runId,
          requested.map((approval) => approval.id),
          signal,
        ),
      );
      await humanWait?.resumed();
      await deps.record('run status', () => deps.runs.setStatus(runId, 'Running'));
      const toolResults: ToolResultPart[] = [];
      for (const approval of decided) {
        await emit('approval.decided', {
          approvalId: approval.id,
          status: approval.status,
          decidedBy: approval.decidedBy,
          comment: approval.comment,
        });
        const output = await decidedToolOutput(approval, held, signal);
        await emit('tool.completed', {
          toolCallId: approval.toolCallId,
          toolName: approval.toolName,
          result: recordedPayload(RunRecording, output),
        });
        yield { type: 'tool-result', toolCallId: approval.toolCallId, result: output };
        toolResults.push({
          type: 'tool-result',
          toolCallId: approval.toolCallId,
          toolName: approval.toolName,
          output: { type: 'json', value: output as never },
        });
      }
      return toolResults;
    },

    list: (runId: string) => deps.approvals.approvals(runId),

    /**
     * Records a decision on a pending tool call (from any instance) and wakes the run; the instance
     * executing the run emits `approval.decided` and goes on. 409 once decided or expired.
     */
    async decide(caller: Caller, runId: string, approvalId: string, decision: { approved: boolean; comment?: string }) {
      const known = isUuid(approvalId) ? await deps.approvals.approvals(runId, [approvalId]) : [];
      if (!known.length) throw notFound(`approval ${approvalId} not found`);
      const decided = await deps.approvals.decideApproval(runId, approvalId, {
        approved: decision.approved,
        decidedBy: caller.userId ?? caller.actor,
        comment: decision.comment?.trim() || null,
      });
      if (!decided) throw conflict(`approval ${approvalId} is ${known[0].status}, not Pending`);
      // The decision is stored: a lost wake-up only delays the run until its next poll.
      await deps.record('approval wake-up', () => deps.pubsub.publish(channels.approvals(runId), { approvalId }));
      await deps.audit(caller, {
        action: `approval.${decided.status.toLowerCase()}`,
        resourceType: 'run-approval',
        resourceId: decided.id,
        details: { runId: decided.runId, toolName: decided.toolName, comment: decided.comment },
      });
      return decided;
    },

    /** One expiry scan: pending approvals past `expiresAt` become Expired and their runs go on (the tool is not run). */
    async expire() {
      const expired = await deps.approvals.expireApprovals(Approvals.MaxPerScan);
      for (const runId of new Set(expired.map((approval) => approval.runId)))
        await deps.record('approval wake-up', () => deps.pubsub.publish(channels.approvals(runId), { approvalId: null }));
      return expired.length;
    },
  };
}

export type Approvals = ReturnType<typeof createApprovals>;
