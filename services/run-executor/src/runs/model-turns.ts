import { AISDKError } from '@ai-sdk/provider';
import { stepCountIs, streamText, type ModelMessage, type ToolSet } from 'ai';
import type { AgentDefinition } from '@hangar/contracts';
import { classifyError, EgressRefusedError, type HangarConfig, type Logger } from '@hangar/platform';
import type { Approvals, HumanWait } from '../approvals/approvals.service.js';
import type { HeldTools } from './tool-set.js';
import type { Emit } from '../events/event-writer.js';
import { costOf, priceFor } from '../pricing.js';
import type { CircuitBreaker } from '../providers/circuit-breaker.js';
import type { ModelCallTarget } from '../providers/model-health.js';
import type { ModelResolver, TenantBindings } from '../providers/model-providers.js';
import type { Recorder } from '../recording.js';
import { addUsage, sumUsage, usageOf, ZERO_USAGE, type Usage } from './run.model.js';
import type { RunRepository } from './run.repository.js';
import { recordedPayload, type RunUpdate } from './run-update.js';
import { modelCallTelemetry } from '../traces/run-tracing.js';
import { abortFailure } from './run-interruption.js';
import { coalescedTextDeltas } from './coalesced-deltas.js';

/** Model steps per model call (each tool round-trip is one). */
const MAX_STEPS = 8;

/** Shared by every run of one tree (children run inline, in the root's process). */
export interface TreeBudget {
  tokens: number;
  cost: number;
  childRuns: number;
}

export interface RunFailure {
  errorType: string;
  message: string;
}

export interface ModelTurnsDeps {
  models: ModelResolver;
  breaker: CircuitBreaker;
  /** Told of each model call's outcome and duration (metrics, model health). */
  observeCall: (target: ModelCallTarget, outcome: 'success' | 'failure', durationMs: number) => void;
  approvals: Pick<Approvals, 'settle'>;
  runs: Pick<RunRepository, 'setModel'>;
  record: Recorder;
  logger: Logger;
  needsApproval: (toolName: string) => boolean;
  settings: Pick<HangarConfig, 'Pricing' | 'RunRecording' | 'StructuredResponse' | 'Observability'>;
  graph: { maxTotalTokens: number; maxTotalCost: number };
}

export interface ModelTurnsInput {
  runId: string;
  /** The run's row, written while the first request leaves: the model and approvals it names wait for it. */
  rowWritten: Promise<unknown>;
  /** The run's tenant and its own provider bindings (they replace global providers of the same name). */
  tenant?: TenantBindings;
  /** The model the run's row names already (a new run's row names its first model). */
  recordedModel: { provider: string | null; model: string | null };
  definition: AgentDefinition;
  system: string | undefined;
  messages: ModelMessage[];
  tools: ToolSet;
  budget: TreeBudget;
  emit: Emit;
  signal: AbortSignal;
  /** Whether text deltas reach the caller as they come (false: the content guard reads the whole answer first). */
  streamDeltas: boolean;
  /** Masks a delta before it is recorded or reaches the caller. */
  maskDelta: (text: string) => string;
  /** What is wrong with a Json/JsonSchema answer, or undefined (StructuredResponse). */
  structuredProblem?: (text: string) => string | undefined;
  /** Anything raised inside tool calls (a child run starting), yielded between stream parts. */
  pending: RunUpdate[];
  /** What the run spent so far: a run that ends mid-turn records it, and tree budgets count it between steps. */
  spent: RunSpend;
  /** A queued run's worker slot, given back while approvals wait for people. */
  humanWait?: HumanWait;
  /** Every tool call waits for a person (Voice:RequireApproval); `held` runs the approved ones. */
  approveEveryTool?: { held: HeldTools };
}

/** What a run spent so far: its model steps' usage, and what it paid beside them (images drawn, history compacted), priced (null: nothing priced). */
export interface RunSpend {
  usage: Usage;
  extraCost: number | null;
}

export interface ModelTurnsResult {
  usage: Usage;
  outputText: string;
  /** The model that answered; undefined when none did. */
  answered?: { provider: string; model: string };
  failure?: RunFailure;
}

/**
 * The model turns of one run: the agent's model, then each fallback while none produced output
 * (a provider that is not configured, whose circuit is open, or that fails before its first
 * output). Within one model: tool rounds, approval rounds, structured-response repairs and the
 * tree's token and cost budgets.
 */
export function createModelTurns(deps: ModelTurnsDeps) {
  const { settings, graph } = deps;

  return async function* modelTurns(input: ModelTurnsInput): AsyncGenerator<RunUpdate, ModelTurnsResult> {
    // The model being tried is recorded off the call's path; done before the run's end is recorded.
    const recorded = { modelWrite: input.rowWritten };
    try {
      return yield* turns(input, recorded);
    } finally {
      await recorded.modelWrite;
    }
  };

  async function* turns(input: ModelTurnsInput, recorded: { modelWrite: Promise<unknown> }): AsyncGenerator<RunUpdate, ModelTurnsResult> {
    const { runId, definition, budget, emit, signal, pending } = input;
    let recordedModel = input.recordedModel;
    const providerSettings = definition.model.providerSettings as { temperature?: number; maxOutputTokens?: number; topP?: number };
    let usage: Usage = ZERO_USAGE;
    let outputText = '';
    let failure: RunFailure | undefined;

    for (const candidate of [definition.model, ...definition.model.fallbacks]) {
      const key = `${candidate.provider}/${candidate.model}`;
      const resolved = deps.models.resolve(candidate.provider, candidate.model, input.tenant);
      if (!resolved) {
        failure = { errorType: 'provider_unavailable', message: `provider "${candidate.provider}" is not configured` };
        continue;
      }
      if (deps.breaker.isOpen(resolved.circuit)) {
        failure = { errorType: 'provider_unavailable', message: `the circuit for ${key} is open` };
        continue;
      }
      // One after another, so the row names the model that was tried last.
      const alreadyRecorded = candidate.provider === recordedModel.provider && candidate.model === recordedModel.model;
      if (!alreadyRecorded) {
        recordedModel = { provider: candidate.provider, model: candidate.model };
        recorded.modelWrite = recorded.modelWrite.then(() =>
          deps.record('run model', () => deps.runs.setModel(runId, candidate.provider, candidate.model)),
        );
      }
      const timeout = resolved.settings.Timeout;
      const callSignal = timeout ? AbortSignal.any([signal, AbortSignal.timeout(timeout)]) : signal;
      let produced = false;
      let graphLimit: string | undefined;
      let structuredFailure: RunFailure | undefined;
      let attemptMessages = input.messages;
      let settling = false;
      let callStarted = 0;
      try {
        // A Json/JsonSchema answer that does not validate is asked for again, at most MaxRepairAttempts
        // times; a turn that ends at tool calls needing approval continues once they are decided.
        for (let repairs = 0; ;) {
          callStarted = performance.now();
          const result = streamText({
            model: resolved.languageModel,
            system: input.system,
            messages: attemptMessages,
            // A run request may carry system turns of its own (API.md "Runs"); they follow the agent's instructions.
            allowSystemInMessages: true,
            // The model-call and tool-call spans, under the run's span (the run iterates its turns in its context).
            experimental_telemetry: modelCallTelemetry(settings, runId, input.definition.name),
            tools: input.tools,
            // Tree budgets are checked between model turns: the tree so far plus this run's steps.
            stopWhen: [
              stepCountIs(MAX_STEPS),
              ({ steps }) => {
                const spent = sumUsage(steps.map((step) => step.usage));
                // What the run paid beside its turns counts too (images drawn, charged as they are; its history's compaction).
                const cost =
                  (costOf(spent, priceFor(settings.Pricing, candidate.provider, candidate.model), null)?.total ?? 0) +
                  (input.spent.extraCost ?? 0);
                if (budget.tokens + spent.totalTokens > graph.maxTotalTokens)
                  graphLimit = `the tree used more than ${graph.maxTotalTokens} tokens (AgentGraph:MaxTotalTokens)`;
                else if (budget.cost + cost > graph.maxTotalCost)
                  graphLimit = `the tree cost more than ${graph.maxTotalCost} (AgentGraph:MaxTotalCost)`;
                return graphLimit !== undefined;
              },
            ],
            maxRetries: resolved.settings.MaxRetries ?? 0,
            abortSignal: callSignal,
            temperature: providerSettings.temperature,
            topP: providerSettings.topP,
            maxOutputTokens: providerSettings.maxOutputTokens ?? resolved.settings.DefaultMaxOutputTokens ?? undefined,
            // Errors arrive as stream parts and are handled below; the SDK's default would print them.
            onError: () => {},
          });
          // Text deltas that queued up while the run was busy come as one (a model faster than the run).
          for await (const part of coalescedTextDeltas(result.fullStream)) {
            switch (part.type) {
              case 'text-delta': {
                produced = true;
                outputText += part.text;
                if (!input.streamDeltas) break;
                const text = input.maskDelta(part.text);
                if (settings.RunRecording.RecordMessageDeltas) void emit('message.delta', { text }, { batch: true });
                yield { type: 'text-delta', text };
                break;
              }
              case 'tool-call':
                produced = true;
                await emit('tool.invoking', {
                  toolCallId: part.toolCallId,
                  toolName: part.toolName,
                  args: recordedPayload(settings.RunRecording, part.input),
                });
                yield { type: 'tool-call', toolCallId: part.toolCallId, toolName: part.toolName, args: part.input };
                break;
              case 'tool-result':
                await emit('tool.completed', {
                  toolCallId: part.toolCallId,
                  toolName: part.toolName,
                  result: recordedPayload(settings.RunRecording, part.output),
                });
                yield { type: 'tool-result', toolCallId: part.toolCallId, result: part.output };
                break;
              case 'tool-error': {
                const error = String((part.error as Error)?.message ?? part.error);
                await emit('tool.failed', { toolCallId: part.toolCallId, toolName: part.toolName, error });
                yield { type: 'tool-result', toolCallId: part.toolCallId, result: { error } };
                break;
              }
              case 'error':
                throw part.error;
              case 'abort':
                // A timeout or a canceled run ends the stream with `abort` rather than an error.
                throw new Error(signal.aborted ? 'aborted' : 'timed out');
              case 'finish-step':
                input.spent.usage = addUsage(input.spent.usage, usageOf(part.usage));
                break;
              case 'finish':
                usage = addUsage(usage, usageOf(part.totalUsage));
                break;
            }
            while (pending.length) yield pending.shift()!;
          }
          deps.observeCall(resolved, 'success', performance.now() - callStarted);
          const lastStep = (await result.steps).at(-1);
          // A call the SDK refused (an unknown tool, input against its schema) was answered with its error already.
          const answered = new Set(
            (lastStep?.content ?? [])
              .filter((part) => part.type === 'tool-result' || part.type === 'tool-error')
              .map((part) => (part as { toolCallId: string }).toolCallId),
          );
          const undecided = (lastStep?.toolCalls ?? []).filter(
            (call) =>
              (input.approveEveryTool || deps.needsApproval(call.toolName)) &&
              !(call as { invalid?: boolean }).invalid &&
              !answered.has(call.toolCallId),
          );
          if (undecided.length && !graphLimit) {
            settling = true;
            await input.rowWritten;
            const toolResults = yield* deps.approvals.settle(runId, undecided, emit, signal, input.humanWait, input.approveEveryTool?.held);
            settling = false;
            // What an approved held call raised (a child run starting) goes out now, not with the next model call.
            while (pending.length) yield pending.shift()!;
            attemptMessages = [...attemptMessages, ...(await result.response).messages, { role: 'tool', content: toolResults }];
            continue;
          }
          const problem = input.structuredProblem?.(outputText);
          if (!problem) break;
          if (repairs++ >= settings.StructuredResponse.MaxRepairAttempts) {
            structuredFailure = { errorType: 'invalid_structured_response', message: problem };
            break;
          }
          attemptMessages = [
            ...attemptMessages,
            { role: 'assistant', content: outputText },
            { role: 'user', content: `That answer is not valid: ${problem}. Reply again with only the corrected JSON.` },
          ];
          outputText = '';
        }
        deps.breaker.success(resolved.circuit);
        return {
          usage,
          outputText,
          answered: candidate,
          failure: graphLimit ? { errorType: 'agent_graph_limit', message: graphLimit } : structuredFailure,
        };
      } catch (error) {
        if (signal.aborted) return { usage, outputText, failure: abortFailure(signal) };
        // Not the model's fault (an approval round's store, an engine that went away): the run fails, the circuit stays as it is.
        // The SDK's own errors are the provider's, whatever their cause (a refused connection is an unreachable provider).
        if (settling || (!AISDKError.isInstance(error) && classifyError(error)?.status === 503)) throw error;
        deps.breaker.failure(resolved.circuit);
        deps.observeCall(resolved, 'failure', performance.now() - callStarted);
        failure = { errorType: 'provider_error', message: `${key}: ${describe(error)}` };
        // Only the reason: the provider's error carries the request body, which holds the conversation.
        deps.logger.warn({ runId, model: key, reason: failure.message }, 'model call failed');
        // Text already streamed to the caller cannot be taken back: no fallback after output.
        if (produced) return { usage, outputText, failure };
        failure.errorType = 'provider_unavailable';
      }
    }
    return { usage, outputText, failure };
  }
}

export type ModelTurns = ReturnType<typeof createModelTurns>;

function describe(error: unknown): string {
  if (error instanceof EgressRefusedError) return `refused by the egress guard: ${error.reason}`;
  const message = (error as Error)?.message ?? String(error);
  return (error as Error)?.name === 'TimeoutError' || /aborted|timeout/i.test(message) ? 'timed out' : message.slice(0, 500);
}
