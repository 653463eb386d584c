import { renderInstructions } from '@hangar/contracts';
import type { Caller, HangarConfig, Logger } from '@hangar/platform';
import type { HumanWait } from '../approvals/approvals.service.js';
import { summaryMessage, type HistoryCompactor, type TooLong } from './compaction.js';
import type { ContentGuard } from '../content-guard.js';
import type { Emit } from '../events/event-writer.js';
import type { ModelTurns, ModelTurnsResult, RunSpend, TreeBudget } from './model-turns.js';
import type { PreparedRun } from './prepare.js';
import { modelMessages } from './run-messages.js';
import { ZERO_USAGE, type RunRow, type StartRunRequest } from './run.model.js';
import type { RunUpdate } from './run-update.js';
import { structuredResponseCheck, structuredResponseHint } from './structured-response.js';
import { holdForApproval, type AskAgent, type RunToolContext, type ToolSets } from './tool-set.js';

export interface GuardedTurnsDeps {
  tools: ToolSets;
  modelTurns: ModelTurns;
  compaction?: HistoryCompactor;
  logger: Logger;
  guard: ContentGuard | undefined;
  settings: Pick<HangarConfig, 'ContentGuard' | 'RunRecording' | 'StructuredResponse' | 'Voice' | 'Preflight'>;
}

export interface TurnsInput {
  caller: Caller;
  request: StartRunRequest;
  prepared: PreparedRun;
  run: RunRow;
  /** The run's row being written (see ModelTurnsInput). */
  rowWritten: Promise<unknown>;
  budget: TreeBudget;
  signal: AbortSignal;
  emit: Emit;
  /** The content guard refused the caller's words: no model is asked. */
  blockedInput: boolean;
  spent: RunSpend;
  humanWait: HumanWait | undefined;
  /** Adds what the run's image tool drew to the run's charges. */
  chargeImages: RunToolContext['chargeImages'];
  /** Runs a callable agent as a child; `announce` hands its updates to this run's stream. */
  askAgent: (agentName: string, message: string, announce: (update: RunUpdate) => Promise<void>) => ReturnType<AskAgent>;
}

/** A run's model turns with the content guard around them (SPEC Agents 13): its input refused, its answer held, read, masked. */
export function createGuardedTurns(deps: GuardedTurnsDeps) {
  const { settings } = deps;

  /**
   * The session's history as this run sends it: compacted by `UtilityModel` when it would not fit
   * the agent's window (its summary first, its cost charged to the run). A compaction that fails
   * leaves it whole, said in an event: the model may still take it, or refuses it as the run's
   * failure. `tooLong`: it does not fit even so, and `Preflight:Enabled` refuses such prompts.
   */
  async function compactedHistory(input: TurnsInput): Promise<{ history: PreparedRun['history']; tooLong?: TooLong }> {
    const { prepared, request, signal } = input;
    if (!deps.compaction || !prepared.history.length) return { history: prepared.history };
    try {
      const compacted = await deps.compaction.compact(input.caller, {
        agentName: prepared.definition.name,
        parameters: prepared.parameters,
        history: prepared.history,
        messages: request.messages,
        tenant: prepared.tenant,
        estimate: prepared.estimate,
        signal,
      });
      const tooLong = settings.Preflight.Enabled ? compacted.tooLong : undefined;
      if (!compacted.compaction) return { history: compacted.history, tooLong };
      const { summary, usage, cost, ...about } = compacted.compaction;
      if (cost !== null) input.spent.extraCost = (input.spent.extraCost ?? 0) + cost;
      await input.rowWritten;
      await input.emit('history.compacted', { ...about, inputTokens: usage.inputTokens, outputTokens: usage.outputTokens, cost });
      return { history: [summaryMessage(summary), ...compacted.history], tooLong };
    } catch (error) {
      if (signal.aborted) return { history: prepared.history };
      deps.logger.warn({ err: error, runId: input.run.id }, 'the session history could not be compacted; it is sent whole');
      await input.rowWritten;
      // The provider's own words stay in the log: they may name the operator's account.
      await input.emit('history.compaction_failed', { message: 'the utility model could not summarize the history; it is sent whole' });
      return { history: prepared.history };
    }
  }

  return async function* turns(input: TurnsInput): AsyncGenerator<RunUpdate, ModelTurnsResult> {
    const { caller, request, prepared, run, budget, signal, emit, blockedInput, spent, humanWait } = input;
    if (blockedInput) {
      return {
        usage: ZERO_USAGE,
        outputText: '',
        failure: { errorType: 'content_blocked', message: 'the request contains content this deployment does not accept (content guard)' },
      };
    }
    const { definition, parameters, attachments, tenant } = prepared;
    const { history, tooLong } = await compactedHistory(input);
    if (tooLong)
      return {
        usage: ZERO_USAGE,
        outputText: '',
        failure: {
          errorType: 'context_window_exceeded',
          message: `the prompt is estimated at ${tooLong.estimatedPromptTokens} tokens even with its history summarized; the model allows ${tooLong.allowedPromptTokens}`,
        },
      };
    const guard = deps.guard;
    const inspectOutput = guard !== undefined && settings.ContentGuard.InspectOutput;
    // Buffered, an answer reaches the caller only once the guard has read all of it.
    const holdOutput = inspectOutput && settings.ContentGuard.BufferStreamingOutput;
    const structured = settings.StructuredResponse.Enabled ? structuredResponseCheck(definition) : undefined;
    // Updates raised inside tool calls (a child run starting) wait here until the stream loop can yield them.
    const pending: RunUpdate[] = [];
    const runTools = await deps.tools.toolsFor(
      caller,
      definition,
      (agentName, message) => input.askAgent(agentName, message, async (update) => void pending.push(update)),
      { sessionId: request.sessionId, signal, chargeImages: input.chargeImages },
    );
    const { skillInstructions } = runTools;
    // A voice turn acts on words a transcription heard: with Voice:RequireApproval a person confirms each tool call first.
    const approval = run.kind === 'Voice' && settings.Voice.RequireApproval ? holdForApproval(runTools.tools) : undefined;
    const tools = approval?.tools ?? runTools.tools;
    const result = yield* deps.modelTurns({
      runId: run.id,
      rowWritten: input.rowWritten,
      recordedModel: { provider: run.modelProvider, model: run.model },
      tenant,
      definition,
      system:
        [
          renderInstructions(definition.instructions, parameters),
          skillInstructions,
          structured && structuredResponseHint(definition),
          request.instructions,
        ]
          .filter(Boolean)
          .join('\n\n') || undefined,
      messages: modelMessages(history, request, attachments),
      tools,
      budget,
      emit,
      signal,
      streamDeltas: !holdOutput,
      // Unbuffered, each delta is masked alone: a value split across deltas escapes the mask.
      maskDelta: (text) => (inspectOutput ? guard.mask(text) : text),
      structuredProblem: structured,
      pending,
      spent,
      humanWait,
      approveEveryTool: approval && { held: approval.held },
    });
    if (!inspectOutput || result.failure || !result.outputText) return result;
    if (guard.blocks(result.outputText)) {
      return {
        ...result,
        failure: { errorType: 'content_blocked', message: 'the answer contains content this deployment does not release (content guard)' },
      };
    }
    const outputText = guard.mask(result.outputText);
    if (holdOutput) {
      if (settings.RunRecording.RecordMessageDeltas) void emit('message.delta', { text: outputText }, { batch: true });
      yield { type: 'text-delta', text: outputText };
    }
    return { ...result, outputText };
  };
}
