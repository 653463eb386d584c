import { randomUUID } from 'node:crypto';
import { Ajv, type ValidateFunction } from 'ajv';
import { jsonSchema, stepCountIs, streamText, tool, type ModelMessage, type ToolResultPart, type ToolSet } from 'ai';
import { renderInstructions, type AgentDefinition } from '@hangar/contracts';
import {
  clampPage,
  conflict,
  HangarError,
  isUuid,
  notFound,
  validationError,
  type Caller,
  type HangarConfig,
  type Logger,
} from '@hangar/platform';
import type { PubSub } from '@hangar/messaging';
import { costOf, priceFor } from './pricing.js';
import type { CircuitBreaker } from './providers/circuit-breaker.js';
import type { ModelResolver } from './providers/model-providers.js';
import {
  TERMINAL_STATUSES,
  type ApprovalRow,
  type NewRunEvent,
  type RunEventRow,
  type RunEventTarget,
  type RunFilter,
  type RunRepository,
  type RunRow,
  type ScoreRow,
  type Usage,
} from './run.repository.js';
import { contentGuardFrom } from './content-guard.js';
import { BUILT_IN_EXECUTORS } from './tools.js';

/** Model steps per run (each tool round-trip is one). */
const MAX_STEPS = 8;
/** `Approvals:ExpirationEnabled` false: a request waits (practically) for ever. */
const NEVER_EXPIRES_MS = 100 * 365 * 24 * 60 * 60 * 1000;
/** The handler key of queued runs, for `Scheduling:LaneByHandlerKey`. */
export const QUEUED_RUN_HANDLER_KEY = 'agent-run';
const DEFAULT_LANE = 'default';
const TERMINAL_EVENTS = new Set(['run.completed', 'run.failed', 'run.canceled']);
const ZERO_USAGE: Usage = { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, reasoningTokens: 0, totalTokens: 0 };

export interface StartRunRequest {
  agentName: string;
  sessionId?: string;
  messages: Array<{ role: string; content: string }>;
  parameters: Array<{ name: string; value: string }>;
  isStreaming: boolean;
  /** Attachment ids handed to the model with the last user message. */
  attachments: string[];
}

export interface AttachmentContent {
  id: string;
  fileName: string;
  mediaType: string;
  bytes: Uint8Array;
}

/** Shared by every run of one tree (children run inline, in the root's process). */
interface TreeBudget {
  tokens: number;
  cost: number;
  childRuns: number;
}

type Announce = (update: RunUpdate | { type: 'child-completed'; runId: string; status: string }) => Promise<void>;

interface ExecutionContext {
  signal: AbortSignal;
  /** A queued run whose row exists already (status Queued): the worker executes it. */
  queuedRunId?: string;
  /** An interactive run whose process died, restarted here (RunContinuation); its row and input exist. */
  continuedRunId?: string;
  /** Set for a child run: its parent, and the budget of the whole tree. */
  parent?: { run: RunRow; budget: TreeBudget };
}

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

export interface AgentLoader {
  /** The agent's current definition and version; throws 404 for an unknown agent. */
  load(caller: Caller, name: string): Promise<{ definition: AgentDefinition; version: number | null }>;
  /** The registry's prompt estimate (the numbers of the pre-flight check). */
  estimate(
    caller: Caller,
    name: string,
    messages: Array<{ role: string; content: string }>,
    parameters: ReadonlyMap<string, string>,
  ): Promise<{
    estimatedPromptTokens: number;
    allowedPromptTokens: number | null;
    wouldBeRejected: boolean;
  }>;
}

const SCORE_KINDS = ['Numeric', 'Boolean', 'Categorical'] as const;
/** Pub/sub channel that wakes job workers when a run is queued. */
export const JOBS_CHANNEL = 'jobs:run';
const TREE_LIMIT = 200;

export interface SessionGateway {
  open(caller: Caller, sessionId: string, agentName: string): Promise<Array<{ role: string; content: unknown }>>;
  append(caller: Caller, sessionId: string, messages: Array<{ role: string; content: unknown; runId: string }>): Promise<void>;
}

export interface AttachmentReader {
  /** The attachment's bytes; throws 404 for an unknown (or another tenant's) attachment. */
  read(caller: Caller, id: string): Promise<AttachmentContent>;
}

/** Writes an entry to the governance audit trail for the caller. */
export type AuditWriter = (
  caller: Caller,
  entry: { action: string; resourceType: string; resourceId: string; details: Record<string, unknown> },
) => Promise<void>;

export interface RunEngineDeps {
  audit: AuditWriter;
  /** Told after events were stored, so the outbox relay ships them soon. */
  eventsStored: () => void;
  attachments: AttachmentReader;
  config: HangarConfig;
  logger: Logger;
  repository: RunRepository;
  pubsub: PubSub;
  agents: AgentLoader;
  sessions: SessionGateway;
  models: ModelResolver;
  breaker: CircuitBreaker;
  /** Names of the tools in the registry's catalog, with their JSON Schemas. */
  toolCatalog: () => Promise<Map<string, { description: string; inputSchema: Record<string, unknown> }>>;
}

const textOf = (content: unknown): string =>
  typeof content === 'string'
    ? content
    : Array.isArray(content)
      ? content.map((part: any) => part?.text ?? '').join('')
      : JSON.stringify(content);

/** Run execution and recording (SPEC Agents 9–15, Runs, Events). */
export function createRunEngine(deps: RunEngineDeps) {
  const { config, repository, logger } = deps;
  /** Runs executing in this process, so a cancel can reach them (and a root's children). */
  const active = new Map<string, { rootRunId: string; controller: AbortController }>();
  const continuationEnabled = config.RunReconciliation.Enabled && config.RunContinuation.Enabled;
  /** Orphaned runs this process restarted; a graceful stop waits for them. */
  const continuing = new Set<Promise<void>>();

  /** Recording never blocks the agent's answer (SPEC Errors 4): failures are logged and skipped. */
  async function record<T>(what: string, work: () => Promise<T>): Promise<T | undefined> {
    try {
      return await work();
    } catch (error) {
      logger.error({ err: error, what }, 'run recording failed');
      return undefined;
    }
  }

  /**
   * Events are written in order, so the caller's stream never waits for the store: what arrives
   * while a write is in flight goes in the next one, as one multi-row statement (a streamed answer
   * emits an event per text delta). Each event is published only once stored, and the run waits
   * for the writer to drain before it ends.
   */
  function createEventWriter(target: RunEventTarget, afterSeq = 0) {
    const { runId } = target;
    let seq = afterSeq;
    let waiting: Array<NewRunEvent & { stored: () => void }> = [];
    let writing: Promise<void> = Promise.resolve();
    let inFlight = false;

    async function writeWaiting() {
      inFlight = true;
      while (waiting.length) {
        const batch = waiting;
        waiting = [];
        const stored = await record(`events ${batch[0].type}…`, () =>
          repository.appendEvents(
            target,
            batch.map(({ seq, type, data }) => ({ seq, type, data })),
          ),
        );
        if (stored) {
          deps.eventsStored();
          // A reader that missed a publication finds the event in the table.
          for (const event of stored) await deps.pubsub.publish(`run:${runId}`, JSON.stringify(event));
        }
        for (const event of batch) event.stored();
      }
      inFlight = false;
    }

    const emit = (type: string, data: Record<string, unknown>): Promise<void> => {
      // RunRecording:Enabled false keeps the run record (status, usage, cost) but no event log.
      if (!config.RunRecording.Enabled) return Promise.resolve();
      const done = new Promise<void>((stored) => waiting.push({ seq: ++seq, type, data, stored }));
      if (!inFlight) writing = writeWaiting();
      return done;
    };
    return { emit, drained: () => writing };
  }

  function checkParameters(definition: AgentDefinition, parameters: StartRunRequest['parameters']): Map<string, string> {
    const declared = new Map(definition.parameters.map((parameter) => [parameter.name, parameter]));
    const values = new Map<string, string>();
    parameters.forEach((parameter, index) => {
      if (!declared.has(parameter.name))
        throw validationError(`unknown parameter "${parameter.name}"`, [
          { path: `parameters[${index}].name`, message: 'is not a parameter of this agent' },
        ]);
      if (values.has(parameter.name))
        throw validationError(`parameter "${parameter.name}" is given twice`, [
          { path: `parameters[${index}].name`, message: 'must not repeat' },
        ]);
      if (Buffer.byteLength(parameter.value, 'utf8') > config.MaxParameterValueLength) {
        throw validationError(`parameter "${parameter.name}" is longer than ${config.MaxParameterValueLength} bytes`, [
          {
            path: `parameters[${index}].value`,
            message: `must be at most ${config.MaxParameterValueLength} bytes of UTF-8 (MaxParameterValueLength)`,
          },
        ]);
      }
      values.set(parameter.name, parameter.value);
    });
    for (const parameter of definition.parameters) {
      if (parameter.required && !values.has(parameter.name)) {
        throw validationError(`parameter "${parameter.name}" is required`, [
          { path: 'parameters', message: `must include "${parameter.name}"` },
        ]);
      }
    }
    return values;
  }

  const approvalRequired = new Set(config.Approvals.RequiredTools);
  const guard = contentGuardFrom(config);
  /** A decision made on another instance wakes the run through pub/sub; this is the fallback. */
  const APPROVAL_POLL_MS = 1000;

  /** A non-positive graph limit removes it (SPEC Limits). */
  const limit = (value: number | null) => (value === null || value <= 0 ? Infinity : value);
  const graph = {
    maxDepth: config.AgentGraph.MaxDepth,
    maxTotalTokens: limit(config.AgentGraph.MaxTotalTokens),
    maxTotalCost: limit(config.AgentGraph.MaxTotalCost),
    maxTotalRuns: limit(config.AgentGraph.MaxTotalRuns),
  };

  /** Runs a callable agent as a child of `parent`; what the model gets back is the child's answer. */
  async function runChild(
    caller: Caller,
    agentName: string,
    message: string,
    parent: RunRow,
    budget: TreeBudget,
    signal: AbortSignal,
    announce: Announce,
  ) {
    if (parent.depth + 1 > graph.maxDepth)
      throw new HangarError(
        'validation',
        `agent graph depth limit reached (AgentGraph:MaxDepth ${graph.maxDepth})`,
        {},
        'agent_graph_limit',
      );
    if (budget.childRuns + 1 > graph.maxTotalRuns)
      throw new HangarError(
        'validation',
        `agent graph run limit reached (AgentGraph:MaxTotalRuns ${graph.maxTotalRuns})`,
        {},
        'agent_graph_limit',
      );
    budget.childRuns += 1;
    let outcome: { runId: string; status: string; output: string; error?: string } | undefined;
    const request: StartRunRequest = {
      agentName,
      messages: [{ role: 'user', content: message }],
      parameters: [],
      isStreaming: false,
      attachments: [],
    };
    for await (const update of execute(caller, request, { signal, parent: { run: parent, budget } })) {
      if (update.type === 'started') await announce({ type: 'child-run', runId: update.run.id, agentName });
      if (update.type === 'finished') outcome = { runId: update.run.id, status: update.run.status, output: update.outputText };
      if (update.type === 'failed') outcome = { runId: update.run.id, status: update.run.status, output: '', error: update.message };
    }
    await announce({ type: 'child-completed', runId: outcome!.runId, status: outcome!.status });
    return outcome!;
  }

  async function toolsFor(
    definition: AgentDefinition,
    caller: Caller,
    run: () => RunRow,
    budget: TreeBudget,
    signal: AbortSignal,
    announce: Announce,
  ): Promise<ToolSet> {
    const catalog = await deps.toolCatalog();
    const tools: ToolSet = {};
    for (const agentName of definition.agents) {
      tools[agentToolName(agentName)] = tool({
        description: `Ask the agent "${agentName}" and get its answer`,
        inputSchema: jsonSchema({
          type: 'object',
          properties: { message: { type: 'string' } },
          required: ['message'],
          additionalProperties: false,
        } as never),
        execute: (input) =>
          runChild(caller, agentName, String((input as { message: string }).message ?? ''), run(), budget, signal, announce),
      });
    }
    for (const name of definition.tools) {
      const entry = catalog.get(name);
      if (!entry || !BUILT_IN_EXECUTORS[name]) continue; // a reference that disappeared since the agent was saved
      const inputSchema = jsonSchema<Record<string, unknown>>(entry.inputSchema as never);
      // A tool that needs approval has no execute: the model's turn ends at its call, and the run
      // executes it (or not) once a human decided, outside the model call and its timeout.
      tools[name] = approvalRequired.has(name)
        ? tool({ description: entry.description, inputSchema })
        : tool({ description: entry.description, inputSchema, execute: (input) => runCatalogTool(name, input) });
    }
    return tools;
  }

  function runCatalogTool(name: string, input: unknown) {
    return withTimeout(BUILT_IN_EXECUTORS[name](input as Record<string, unknown>), config.Tools.DefaultTimeout, name).then((output) =>
      limitToolOutput(output, config.Tools.DefaultMaxOutputBytes),
    );
  }

  /** Resolves once none of `ids` is Pending; decisions from any instance wake it through pub/sub. */
  async function decisions(runId: string, ids: string[], signal: AbortSignal): Promise<ApprovalRow[]> {
    const pause = createWakeablePause();
    const subscription = await deps.pubsub.subscribe(`approval:${runId}`, pause.wake);
    try {
      while (true) {
        const approvals = await repository.approvals(runId, ids);
        if (approvals.every((approval) => approval.status !== 'Pending')) return approvals;
        if (signal.aborted) throw new Error('aborted');
        await pause.sleep(APPROVAL_POLL_MS, signal);
      }
    } finally {
      await subscription.unsubscribe();
    }
  }

  /** A tool's arguments or result as the event log keeps them (RunRecording:RecordToolPayloads, MaxPayloadLength). */
  const recordedPayload = (value: unknown) =>
    config.RunRecording.RecordToolPayloads ? recordable(value, config.RunRecording.MaxPayloadLength) : null;

  /**
   * The tool calls of a finished model turn that need a decision: records the approvals (the run
   * is AwaitingApproval), waits for every decision, runs the approved calls and returns what the
   * model gets back for its next turn.
   */
  async function* settleApprovals(
    runId: string,
    calls: Array<{ toolCallId: string; toolName: string; input: unknown }>,
    emit: (type: string, data: Record<string, unknown>) => Promise<void>,
    signal: AbortSignal,
  ): AsyncGenerator<RunUpdate, ToolResultPart[]> {
    const requested = await repository.requestApprovals(
      runId,
      calls.map((call) => ({ id: randomUUID(), toolCallId: call.toolCallId, toolName: call.toolName, args: call.input })),
      config.Approvals.ExpirationEnabled ? config.Approvals.DefaultExpiration : NEVER_EXPIRES_MS,
    );
    for (const approval of requested) {
      await emit('approval.requested', {
        approvalId: approval.id,
        toolCallId: approval.toolCallId,
        toolName: approval.toolName,
        args: recordedPayload(approval.args),
        expiresAt: approval.expiresAt,
      });
    }
    yield { type: 'approvals', approvals: requested };
    const decided = await decisions(
      runId,
      requested.map((approval) => approval.id),
      signal,
    );
    await record('run status', () => repository.setStatus(runId, 'Running'));
    const toolResults: ToolResultPart[] = [];
    for (const approval of decided) {
      await emit('approval.decided', {
        approvalId: approval.id,
        status: approval.status,
        decidedBy: approval.decidedBy,
        comment: approval.comment,
      });
      const output = await decidedToolOutput(approval);
      await emit('tool.completed', { toolCallId: approval.toolCallId, toolName: approval.toolName, result: recordedPayload(output) });
      yield { type: 'tool-result', toolCallId: approval.toolCallId, result: output };
      toolResults.push({
        type: 'tool-result',
        toolCallId: approval.toolCallId,
        toolName: approval.toolName,
        output: { type: 'json', value: output as never },
      });
    }
    return toolResults;
  }

  /** What the model learns of a tool call that waited for a decision. */
  async function decidedToolOutput(approval: ApprovalRow): Promise<unknown> {
    if (approval.status === 'Approved') {
      try {
        return await runCatalogTool(approval.toolName, approval.args);
      } catch (error) {
        return { error: String((error as Error)?.message ?? error) };
      }
    }
    return approval.status === 'Expired'
      ? { error: 'the approval request expired before anyone decided; the tool was not run' }
      : { error: `a person denied this tool call${approval.comment ? `: ${approval.comment}` : ''}; the tool was not run` };
  }

  async function readAttachments(caller: Caller, ids: string[]): Promise<AttachmentContent[]> {
    if (new Set(ids).size !== ids.length)
      throw validationError('an attachment is named twice', [{ path: 'attachments', message: 'must not repeat' }]);
    return Promise.all(
      ids.map(async (id, index) => {
        try {
          return await deps.attachments.read(caller, id);
        } catch (error) {
          if ((error as HangarError).status === 404) {
            throw validationError(`attachment ${id} does not exist`, [
              { path: `attachments[${index}]`, message: 'names no attachment of this tenant' },
            ]);
          }
          throw error;
        }
      }),
    );
  }

  /** Every check that refuses a run before it exists (404, 400, 403, 501), and what the run needs. */
  async function prepare(caller: Caller, request: StartRunRequest) {
    const { definition, version } = await deps.agents.load(caller, request.agentName);
    const parameters = checkParameters(definition, request.parameters);
    if (request.messages.length === 0) throw validationError('a run needs a message', [{ path: 'message', message: 'is required' }]);
    const attachments = await readAttachments(caller, request.attachments);
    const history = request.sessionId !== undefined ? await deps.sessions.open(caller, request.sessionId, definition.name) : [];
    if (config.Preflight.Enabled) {
      const prompt = [...history.map((message) => ({ role: message.role, content: textOf(message.content) })), ...request.messages];
      const estimate = await deps.agents.estimate(caller, definition.name, prompt, parameters);
      if (estimate.wouldBeRejected) {
        throw new HangarError(
          'validation',
          `the prompt is estimated at ${estimate.estimatedPromptTokens} tokens; the model allows ${estimate.allowedPromptTokens}`,
          { estimatedPromptTokens: estimate.estimatedPromptTokens, allowedPromptTokens: estimate.allowedPromptTokens },
          'context_window_exceeded',
        );
      }
    }
    return { definition, version, parameters, attachments, history };
  }

  /** Ends a queued run that never reached a model as Failed: no usage, no cost, no price. */
  function failUnstarted(runId: string, errorType: string, errorMessage: string) {
    return repository.finish(runId, {
      status: 'Failed',
      usage: ZERO_USAGE,
      cost: null,
      prices: { input: null, output: null, cachedInput: null },
      errorType,
      errorMessage,
    });
  }

  function start(caller: Caller, request: StartRunRequest, callSignal: AbortSignal): AsyncGenerator<RunUpdate> {
    return execute(caller, request, { signal: callSignal });
  }

  async function* execute(caller: Caller, request: StartRunRequest, context: ExecutionContext): AsyncGenerator<RunUpdate> {
    const callSignal = context.signal;
    const parent = context.parent?.run;
    const budget: TreeBudget = context.parent?.budget ?? { tokens: 0, cost: 0, childRuns: 0 };
    const { definition, version, parameters, attachments, history } = await prepare(caller, request);
    // The content guard sees the caller's words before anything records them or a model reads them.
    const inspectInput = guard && config.ContentGuard.InspectInput;
    const blockedInput = inspectInput && request.messages.some((message) => message.role === 'user' && guard.blocks(message.content));
    if (inspectInput) {
      request = {
        ...request,
        messages: request.messages.map((message) =>
          message.role === 'user' ? { ...message, content: guard.mask(message.content) } : message,
        ),
      };
    }
    const inspectOutput = guard && config.ContentGuard.InspectOutput;
    // Buffered, an answer reaches the caller only once the guard has read all of it.
    const holdOutput = inspectOutput && config.ContentGuard.BufferStreamingOutput;
    const controller = new AbortController();
    const signal = controller.signal;
    const stopWithCaller = () => controller.abort();
    callSignal.addEventListener('abort', stopWithCaller, { once: true });

    const existingRunId = context.queuedRunId ?? context.continuedRunId;
    const runId = existingRunId ?? randomUUID();
    const started = await record('run row', () =>
      context.continuedRunId
        ? repository.get(caller.tenantId, runId)
        : context.queuedRunId
          ? repository.markRunning(runId)
          : repository.insert(caller.tenantId, {
              id: runId,
              agentName: definition.name,
              agentVersion: version,
              sessionId: request.sessionId ?? null,
              kind: parent ? 'Child' : 'Interactive',
              isStreaming: request.isStreaming,
              rootRunId: parent?.rootRunId ?? runId,
              parentRunId: parent?.id ?? null,
              depth: parent ? parent.depth + 1 : 0,
              userId: caller.userId ?? null,
              labels: caller.labels ?? {},
            }),
    );
    const run: RunRow = started ?? placeholderRun(runId, definition.name, version, request, parent);
    active.set(runId, { rootRunId: run.rootRunId, controller });
    // A root interactive run keeps what restarting it needs while it executes (RunContinuation).
    const continuable = continuationEnabled && !parent && !context.queuedRunId;
    if (continuable && !context.continuedRunId)
      await record('run continuation', () => repository.saveContinuation(runId, { caller, request }));
    // The root listens for cancels of its tree sent from any instance; its children run here too.
    const cancels = parent ? undefined : await record('cancel subscription', () => listenForCancels(runId));
    const heartbeat = config.RunReconciliation.Enabled
      ? setInterval(() => void record('run heartbeat', () => repository.heartbeatRun(runId)), config.RunReconciliation.HeartbeatInterval)
      : undefined;
    try {
      if (config.RunRecording.RecordRunInput && !context.continuedRunId) {
        await record('run input', () =>
          repository.recordInput(runId, {
            agentName: definition.name,
            sessionId: request.sessionId ?? null,
            messages: request.messages,
            parameters: request.parameters,
            attachments: request.attachments,
          }),
        );
      }
      const events = createEventWriter(
        { runId, rootRunId: run.rootRunId, tenantId: caller.tenantId, agentName: definition.name },
        existingRunId ? await repository.lastSeq(runId) : 0,
      );
      const emit = events.emit;
      await emit('run.started', { agentName: definition.name, agentVersion: version, sessionId: request.sessionId ?? null });
      yield { type: 'started', run };

      const lastUser = request.messages.map((message) => message.role).lastIndexOf('user');
      const messages: ModelMessage[] = [
        ...history.map((message) => ({ role: message.role, content: textOf(message.content) }) as ModelMessage),
        ...request.messages.map((message, index) =>
          index === lastUser && attachments.length
            ? ({ role: 'user', content: [{ type: 'text', text: message.content }, ...attachments.map(filePart)] } as ModelMessage)
            : ({ role: message.role, content: message.content } as ModelMessage),
        ),
      ];
      // Updates raised inside tool calls (a child run starting) wait here until the stream loop can yield them.
      const pending: RunUpdate[] = [];
      const announce: Announce = async (update) => {
        if (update.type === 'child-completed') {
          await emit('child.completed', { runId: update.runId, status: update.status });
          return;
        }
        if (update.type === 'child-run') await emit('child.started', { runId: update.runId, agentName: update.agentName });
        pending.push(update);
      };
      const tools = await toolsFor(definition, caller, () => run, budget, signal, announce);
      let graphLimit: string | undefined;
      const structured = config.StructuredResponse.Enabled ? structuredResponseCheck(definition) : undefined;
      let structuredFailure: { errorType: string; message: string } | undefined;
      const systemPrompt =
        [renderInstructions(definition.instructions, parameters), structured && structuredResponseHint(definition)]
          .filter(Boolean)
          .join('\n\n') || undefined;
      const settings = definition.model.providerSettings as { temperature?: number; maxOutputTokens?: number; topP?: number };
      let usage: Usage = ZERO_USAGE;
      let outputText = '';
      let answered: { provider: string; model: string } | undefined;
      let failure: { errorType: string; message: string } | undefined = blockedInput
        ? { errorType: 'content_blocked', message: 'the request contains content this deployment does not accept (content guard)' }
        : undefined;

      for (const candidate of blockedInput ? [] : [definition.model, ...definition.model.fallbacks]) {
        const key = `${candidate.provider}/${candidate.model}`;
        const resolved = deps.models.resolve(candidate.provider, candidate.model);
        if (!resolved) {
          failure = { errorType: 'provider_unavailable', message: `provider "${candidate.provider}" is not configured` };
          continue;
        }
        if (deps.breaker.isOpen(key)) {
          failure = { errorType: 'provider_unavailable', message: `the circuit for ${key} is open` };
          continue;
        }
        await record('run model', () => repository.setModel(runId, candidate.provider, candidate.model));
        const timeout = resolved.settings.Timeout;
        const callSignal = timeout ? AbortSignal.any([signal, AbortSignal.timeout(timeout)]) : signal;
        let produced = false;
        let attemptMessages = messages;
        try {
          // A Json/JsonSchema answer that does not validate is asked for again, at most MaxRepairAttempts
          // times; a turn that ends at tool calls needing approval continues once they are decided.
          for (let repairs = 0; ;) {
            const result = streamText({
              model: resolved.languageModel,
              system: systemPrompt,
              messages: attemptMessages,
              tools,
              // Tree budgets are checked between model turns: the tree so far plus this run's steps.
              stopWhen: [
                stepCountIs(MAX_STEPS),
                ({ steps }) => {
                  const spent = usageOf(sumUsage(steps.map((step) => step.usage)));
                  const cost = costOf(spent, priceFor(config.Pricing, candidate.provider, candidate.model), null)?.total ?? 0;
                  if (budget.tokens + spent.totalTokens > graph.maxTotalTokens)
                    graphLimit = `the tree used more than ${graph.maxTotalTokens} tokens (AgentGraph:MaxTotalTokens)`;
                  else if (budget.cost + cost > graph.maxTotalCost)
                    graphLimit = `the tree cost more than ${graph.maxTotalCost} (AgentGraph:MaxTotalCost)`;
                  return graphLimit !== undefined;
                },
              ],
              maxRetries: resolved.settings.MaxRetries ?? 0,
              abortSignal: callSignal,
              temperature: settings.temperature,
              topP: settings.topP,
              maxOutputTokens: settings.maxOutputTokens ?? resolved.settings.DefaultMaxOutputTokens ?? undefined,
              // Errors arrive as stream parts and are handled below; the SDK's default would print them.
              onError: () => {},
            });
            for await (const part of result.fullStream) {
              switch (part.type) {
                case 'text-delta': {
                  produced = true;
                  outputText += part.text;
                  if (holdOutput) break;
                  // Unbuffered, each delta is masked alone: a value split across deltas escapes the mask.
                  const text = inspectOutput ? guard.mask(part.text) : part.text;
                  if (config.RunRecording.RecordMessageDeltas) void emit('message.delta', { text });
                  yield { type: 'text-delta', text };
                  break;
                }
                case 'tool-call':
                  produced = true;
                  await emit('tool.invoking', {
                    toolCallId: part.toolCallId,
                    toolName: part.toolName,
                    args: recordedPayload(part.input),
                  });
                  yield { type: 'tool-call', toolCallId: part.toolCallId, toolName: part.toolName, args: part.input };
                  break;
                case 'tool-result':
                  await emit('tool.completed', {
                    toolCallId: part.toolCallId,
                    toolName: part.toolName,
                    result: recordedPayload(part.output),
                  });
                  yield { type: 'tool-result', toolCallId: part.toolCallId, result: part.output };
                  break;
                case 'tool-error':
                  await emit('tool.failed', {
                    toolCallId: part.toolCallId,
                    toolName: part.toolName,
                    error: String((part.error as Error)?.message ?? part.error),
                  });
                  yield {
                    type: 'tool-result',
                    toolCallId: part.toolCallId,
                    result: { error: String((part.error as Error)?.message ?? part.error) },
                  };
                  break;
                case 'error':
                  throw part.error;
                case 'abort':
                  // A timeout or a canceled run ends the stream with `abort` rather than an error.
                  throw new Error(signal.aborted ? 'aborted' : 'timed out');
                case 'finish':
                  usage = addUsage(usage, usageOf(part.totalUsage));
                  break;
              }
              while (pending.length) yield pending.shift()!;
            }
            const lastStep = (await result.steps).at(-1);
            const undecided = (lastStep?.toolCalls ?? []).filter(
              (call) => approvalRequired.has(call.toolName) && !lastStep!.toolResults.some((done) => done.toolCallId === call.toolCallId),
            );
            if (undecided.length && !graphLimit) {
              const toolResults = yield* settleApprovals(runId, undecided, emit, signal);
              attemptMessages = [...attemptMessages, ...(await result.response).messages, { role: 'tool', content: toolResults }];
              continue;
            }
            const problem = structured?.(outputText);
            if (!problem) break;
            if (repairs++ >= config.StructuredResponse.MaxRepairAttempts) {
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
          deps.breaker.success(key);
          answered = candidate;
          failure = graphLimit ? { errorType: 'agent_graph_limit', message: graphLimit } : structuredFailure;
          break;
        } catch (error) {
          if (signal.aborted) {
            failure = { errorType: 'canceled', message: 'the run was canceled' };
            break;
          }
          deps.breaker.failure(key);
          failure = { errorType: 'provider_error', message: `${key}: ${describe(error)}` };
          // Only the reason: the provider's error carries the request body, which holds the conversation.
          logger.warn({ runId, model: key, reason: failure.message }, 'model call failed');
          // Text already streamed to the caller cannot be taken back: no fallback after output.
          if (produced) break;
          failure.errorType = 'provider_unavailable';
        }
      }

      if (inspectOutput && !failure && outputText) {
        if (guard.blocks(outputText)) {
          failure = {
            errorType: 'content_blocked',
            message: 'the answer contains content this deployment does not release (content guard)',
          };
        } else {
          outputText = guard.mask(outputText);
          if (holdOutput) {
            if (config.RunRecording.RecordMessageDeltas) void emit('message.delta', { text: outputText });
            yield { type: 'text-delta', text: outputText };
          }
        }
      }
      const prices = priceFor(config.Pricing, answered?.provider ?? null, answered?.model ?? null);
      const cost = answered ? costOf(usage, prices, config.Pricing.Currency) : null;
      // Children finish inside their parent's tool call, so the tree's spend is known at the parent's next turn.
      budget.tokens += usage.totalTokens;
      budget.cost += cost?.total ?? 0;
      if (!failure) {
        if (outputText) await emit('message.completed', { text: recordable(outputText, config.RunRecording.MaxPayloadLength) });
        if (request.sessionId !== undefined) {
          await deps.sessions.append(caller, request.sessionId, [
            ...request.messages.map((message, index) => ({
              role: message.role,
              // The turn keeps references to its attachments; they stop resolving once an attachment is deleted.
              content:
                index === lastUser && attachments.length
                  ? [{ type: 'text', text: message.content }, ...attachments.map(attachmentReference)]
                  : message.content,
              runId,
            })),
            { role: 'assistant', content: outputText, runId },
          ]);
        }
      }
      const status = !failure ? 'Completed' : failure.errorType === 'canceled' ? 'Canceled' : 'Failed';
      await events.drained();
      const finished = (await record('run completion', () =>
        repository.finish(runId, {
          status,
          usage,
          cost,
          prices,
          errorType: failure?.errorType ?? null,
          errorMessage: failure?.message ?? null,
        }),
      )) ?? { ...run, status, usage, cost, errorType: failure?.errorType ?? null, errorMessage: failure?.message ?? null };
      if (status === 'Completed') {
        await emit('run.completed', { usage, cost });
        yield { type: 'finished', run: finished, outputText };
      } else if (status === 'Canceled') {
        await emit('run.canceled', { usage, cost });
        yield { type: 'finished', run: finished, outputText };
      } else {
        await emit('run.failed', { errorType: failure!.errorType, message: failure!.message, usage, cost });
        yield { type: 'failed', run: finished, errorType: failure!.errorType, message: failure!.message };
      }
    } finally {
      clearInterval(heartbeat);
      await cancels?.unsubscribe();
      if (continuable) await record('run continuation', () => repository.dropContinuation(runId));
      active.delete(runId);
      callSignal.removeEventListener('abort', stopWithCaller);
    }
  }

  /** Aborts a run executing in this process; a root takes every run of its tree with it. */
  function stopLocally(runId: string): boolean {
    const executing = active.get(runId);
    if (!executing) return false;
    if (executing.rootRunId === runId) for (const other of active.values()) if (other.rootRunId === runId) other.controller.abort();
    executing.controller.abort();
    return true;
  }

  function listenForCancels(rootRunId: string) {
    return deps.pubsub.subscribe(`cancel:${rootRunId}`, (message) => {
      const { runId, replyTo } = JSON.parse(message) as { runId: string; replyTo: string };
      const stopped = stopLocally(runId);
      void deps.pubsub.publish(replyTo, JSON.stringify({ stopped })).catch(() => {});
    });
  }

  /** Sends a cancel to the instance running the run's root and waits for its answer. */
  async function askExecutingInstance(run: RunRow): Promise<boolean> {
    const replyTo = `cancel-reply:${randomUUID()}`;
    let answer: (stopped: boolean) => void = () => {};
    const answered = new Promise<boolean>((resolve) => (answer = resolve));
    const replies = await deps.pubsub.subscribe(replyTo, (message) => answer((JSON.parse(message) as { stopped: boolean }).stopped));
    const timer = setTimeout(() => answer(false), config.Hangar.Runs.CancelReplyTimeout);
    try {
      await deps.pubsub.publish(`cancel:${run.rootRunId}`, JSON.stringify({ runId: run.id, replyTo }));
      return await answered;
    } finally {
      clearTimeout(timer);
      await replies.unsubscribe();
    }
  }

  async function requireRun(caller: Caller, runId: string): Promise<RunRow> {
    const run = isUuid(runId) ? await repository.get(caller.tenantId, runId) : undefined;
    if (!run) throw notFound(`run ${runId} not found`);
    return run;
  }

  /** Stored events after `afterSeq`, then live ones (pub/sub wakes the reader; the table stays the source). */
  async function* events(caller: Caller, runId: string, afterSeq: number, signal: AbortSignal): AsyncGenerator<RunEventRow> {
    await requireRun(caller, runId);
    const pause = createWakeablePause();
    const subscription = await deps.pubsub.subscribe(`run:${runId}`, pause.wake);
    let last = afterSeq;
    let finishedAt: number | undefined;
    try {
      while (!signal.aborted) {
        for (const event of await repository.events(runId, last)) {
          yield event;
          last = event.seq;
          if (TERMINAL_EVENTS.has(event.type)) return;
        }
        const run = await repository.get(caller.tenantId, runId);
        if (!run) return;
        if (TERMINAL_STATUSES.has(run.status)) {
          // The terminal event follows the finished row closely; if it never comes (purged), stop anyway.
          finishedAt ??= Date.now();
          if (Date.now() - finishedAt > 2 * config.Hangar.Api.RunEventPollInterval) return;
        }
        await pause.sleep(config.Hangar.Api.RunEventPollInterval, signal);
      }
    } finally {
      await subscription.unsubscribe();
    }
  }

  /** A feedback change in the audit trail. */
  function auditScore(caller: Caller, action: string, score: ScoreRow) {
    return audit(caller, {
      action,
      resourceType: 'run-score',
      resourceId: score.id,
      details: {
        runId: score.runId,
        messageId: score.messageId,
        name: score.name,
        kind: score.kind,
        value: score.value,
        textValue: score.textValue,
      },
    });
  }

  const auditApproval = (caller: Caller, approval: ApprovalRow) =>
    audit(caller, {
      action: `approval.${approval.status.toLowerCase()}`,
      resourceType: 'run-approval',
      resourceId: approval.id,
      details: { runId: approval.runId, toolName: approval.toolName, comment: approval.comment },
    });

  /** An audit entry; a failed write is logged with the whole entry, and the change stands. */
  async function audit(caller: Caller, entry: Parameters<AuditWriter>[1]) {
    try {
      await deps.audit(caller, entry);
    } catch (error) {
      logger.error({ err: error, audit: { ...entry, tenantId: caller.tenantId, actor: caller.actor } }, 'audit entry could not be written');
    }
  }

  function checkScore(request: FeedbackRequest) {
    const kind = request.kind ?? (request.textValue !== undefined ? 'Categorical' : 'Numeric');
    if (!(SCORE_KINDS as readonly string[]).includes(kind)) {
      throw validationError(`kind must be one of ${SCORE_KINDS.join(', ')}`, [
        { path: 'kind', message: `must be one of ${SCORE_KINDS.join(', ')}` },
      ]);
    }
    if (kind === 'Categorical' && !request.textValue?.trim()) {
      throw validationError('a Categorical score needs textValue', [{ path: 'textValue', message: 'is required for kind Categorical' }]);
    }
    if (kind !== 'Categorical' && (request.value === undefined || !Number.isFinite(request.value))) {
      throw validationError(`a ${kind} score needs a numeric value`, [{ path: 'value', message: `is required for kind ${kind}` }]);
    }
    if (kind === 'Boolean' && request.value !== 0 && request.value !== 1) {
      throw validationError('a Boolean score is 0 or 1', [{ path: 'value', message: 'must be 0 or 1 for kind Boolean' }]);
    }
    return kind;
  }

  return {
    start,
    events,
    get: requireRun,

    /** `Prefer: respond-async`: the same refusals as a run, then a Queued run row and its job. */
    async enqueue(caller: Caller, request: StartRunRequest): Promise<RunRow> {
      if (!config.AsyncRun.Enabled) throw new HangarError('notImplemented', 'queued runs are switched off (AsyncRun:Enabled)');
      const { definition, version } = await prepare(caller, request);
      const runId = randomUUID();
      const run = await repository.enqueue(
        caller.tenantId,
        {
          id: runId,
          agentName: definition.name,
          agentVersion: version,
          sessionId: request.sessionId ?? null,
          kind: 'Async',
          isStreaming: false,
          rootRunId: runId,
          parentRunId: null,
          depth: 0,
          userId: caller.userId ?? null,
          labels: caller.labels ?? {},
        },
        { caller, request },
        config.Scheduling.LaneByHandlerKey[QUEUED_RUN_HANDLER_KEY] ?? DEFAULT_LANE,
      );
      await deps.pubsub.publish(JOBS_CHANNEL, runId);
      return run;
    },

    /** Executes a leased job's run; a refusal now (the agent was deleted meanwhile) fails the run. */
    async runQueued(job: { runId: string; payload: unknown }, signal: AbortSignal): Promise<RunRow | undefined> {
      const { caller, request } = job.payload as { caller: Caller; request: StartRunRequest };
      let last: RunRow | undefined;
      try {
        for await (const update of execute(caller, request, { signal, queuedRunId: job.runId })) {
          if (update.type === 'finished' || update.type === 'failed') last = update.run;
        }
      } catch (error) {
        const refusal = error instanceof HangarError ? error : undefined;
        last = await failUnstarted(job.runId, refusal?.errorType ?? 'internal_error', refusal?.message ?? 'the queued run could not start');
      }
      return last;
    },

    /**
     * One reconciliation scan: orphaned interactive runs (their process stopped beating) are
     * restarted here while `RunContinuation` allows, and closed as Failed / orphaned otherwise.
     */
    async reconcileOrphans() {
      const { OrphanThreshold, MaxRunsPerScan } = config.RunReconciliation;
      const { failed, continued } = await repository.claimOrphans(
        OrphanThreshold,
        MaxRunsPerScan,
        continuationEnabled ? config.RunContinuation.MaxAttempts : 0,
      );
      if (failed.length || continued.length) deps.eventsStored();
      for (const { runId, payload, attempt } of continued) {
        const { caller, request } = payload as { caller: Caller; request: StartRunRequest };
        const restart = (async () => {
          for await (const _update of execute(caller, request, { signal: new AbortController().signal, continuedRunId: runId })) {
            // the client that started the run is gone; its outcome is in the record and the events
          }
        })()
          .catch((error) => logger.error({ err: error, runId }, 'continued run failed'))
          .finally(() => continuing.delete(restart));
        continuing.add(restart);
        logger.warn({ runId, attempt }, 'continuing an orphaned run');
      }
      if (failed.length) logger.warn({ runs: failed }, 'closed orphaned runs');
    },

    /** One expiry scan: pending approvals past `expiresAt` become Expired and their runs go on (the tool is not run). */
    async expireApprovals() {
      const expired = await repository.expireApprovals(config.Approvals.MaxPerScan);
      for (const runId of new Set(expired.map((approval) => approval.runId))) await deps.pubsub.publish(`approval:${runId}`, 'expired');
      return expired.length;
    },

    /** Waits for the orphaned runs this process restarted. */
    drain: () => Promise.all(continuing),

    /** A job whose attempts ran out after its workers died: its run ends as Failed. */
    abandonQueued: (runId: string) =>
      failUnstarted(runId, 'worker_lost', 'the worker executing this queued run stopped (AsyncRun:MaxAttempts reached)'),

    /** The whole tree, resolved from the root whichever member is named; truncated at 200 runs. */
    async tree(caller: Caller, runId: string): Promise<RunRow[]> {
      const run = await requireRun(caller, runId);
      return repository.tree(caller.tenantId, run.rootRunId, TREE_LIMIT);
    },

    /**
     * Stops a run wherever it executes: here directly, elsewhere through the instance running its
     * root (it answers on a reply channel). A root takes its children with it. 409 when no live
     * instance is executing it (finished, or its process died).
     */
    async cancel(caller: Caller, runId: string): Promise<RunRow> {
      const run = await requireRun(caller, runId);
      if (TERMINAL_STATUSES.has(run.status)) throw conflict(`run ${runId} is not executing (status ${run.status})`);
      if (stopLocally(runId)) return run;
      if (run.status === 'Queued') {
        const canceled = await repository.cancelQueued(runId);
        if (canceled) {
          const target = { runId, rootRunId: run.rootRunId, tenantId: caller.tenantId, agentName: run.agentName };
          await createEventWriter(target, await repository.lastSeq(runId)).emit('run.canceled', { usage: ZERO_USAGE, cost: null });
          return canceled;
        }
      }
      if (!(await askExecutingInstance(run))) {
        throw conflict(`run ${runId} is not executing on any live instance (status ${run.status})`);
      }
      return run;
    },

    /** Same author, name and target again updates the score; a blank name is `overall`, a blank messageId the whole run. */
    async saveFeedback(caller: Caller, runId: string, request: FeedbackRequest) {
      await requireRun(caller, runId);
      const kind = checkScore(request);
      const saved = await repository.saveScore({
        id: randomUUID(),
        runId,
        messageId: request.messageId?.trim() || null,
        name: request.name?.trim() || 'overall',
        kind,
        value: kind === 'Categorical' ? null : request.value!,
        textValue: kind === 'Categorical' ? request.textValue!.trim() : null,
        source: 'Human',
        author: caller.userId ?? caller.actor,
        comment: request.comment?.trim() || null,
      });
      await auditScore(caller, saved.created ? 'feedback.created' : 'feedback.updated', saved.score);
      return saved;
    },

    async listApprovals(caller: Caller, runId: string) {
      await requireRun(caller, runId);
      return repository.approvals(runId);
    },

    /**
     * Records a decision on a pending tool call (from any instance) and wakes the run; the instance
     * executing the run emits `approval.decided` and goes on. 409 once decided or expired.
     */
    async decideApproval(caller: Caller, runId: string, approvalId: string, decision: { approved: boolean; comment?: string }) {
      await requireRun(caller, runId);
      const known = isUuid(approvalId) ? await repository.approvals(runId, [approvalId]) : [];
      if (!known.length) throw notFound(`approval ${approvalId} not found`);
      const decided = await repository.decideApproval(runId, approvalId, {
        approved: decision.approved,
        decidedBy: caller.userId ?? caller.actor,
        comment: decision.comment?.trim() || null,
      });
      if (!decided) throw conflict(`approval ${approvalId} is ${known[0].status}, not Pending`);
      await deps.pubsub.publish(`approval:${runId}`, approvalId);
      await auditApproval(caller, decided);
      return decided;
    },

    async listFeedback(caller: Caller, runId: string) {
      await requireRun(caller, runId);
      return repository.scores(runId);
    },

    async deleteFeedback(caller: Caller, runId: string, scoreId: string) {
      await requireRun(caller, runId);
      const deleted = isUuid(scoreId) ? await repository.deleteScore(runId, scoreId) : undefined;
      if (!deleted) throw notFound(`score ${scoreId} not found`);
      await auditScore(caller, 'feedback.deleted', deleted);
    },
    async input(caller: Caller, runId: string) {
      await requireRun(caller, runId);
      const input = await repository.getInput(caller.tenantId, runId);
      if (!input) throw notFound(`run ${runId} has no recorded input`);
      return { input: input.input as Record<string, unknown>, recordedAt: input.recorded_at.toISOString() };
    },
    list(caller: Caller, filter: RunFilter) {
      return repository.list(caller.tenantId, { ...filter, ...clampPage(filter.skip, filter.take) });
    },
  };
}

export type RunEngine = ReturnType<typeof createRunEngine>;

export interface FeedbackRequest {
  name?: string;
  messageId?: string;
  kind?: string;
  value?: number;
  textValue?: string;
  comment?: string;
}

/** Images as image parts, text inline, everything else (PDF, audio) as file parts. */
function filePart(attachment: AttachmentContent) {
  if (attachment.mediaType.startsWith('image/'))
    return { type: 'image' as const, image: attachment.bytes, mediaType: attachment.mediaType };
  if (attachment.mediaType === 'text/plain') {
    return { type: 'text' as const, text: `Attachment ${attachment.fileName}:\n${Buffer.from(attachment.bytes).toString('utf8')}` };
  }
  return { type: 'file' as const, data: attachment.bytes, mediaType: attachment.mediaType, filename: attachment.fileName };
}

const attachmentReference = (attachment: AttachmentContent) => ({
  type: 'attachment',
  attachmentId: attachment.id,
  fileName: attachment.fileName,
  mediaType: attachment.mediaType,
});

const ajv = new Ajv({ allErrors: true, strict: false });
const compiledSchemas = new Map<string, ValidateFunction>();

/**
 * With `StructuredResponse:Enabled`, a `Json` agent must answer with JSON and a `JsonSchema` agent
 * with JSON its schema accepts; the check returns what is wrong, or undefined. A single code fence
 * around the JSON is tolerated.
 */
function structuredResponseCheck(definition: AgentDefinition): ((text: string) => string | undefined) | undefined {
  const format = definition.responseFormat;
  if (format.kind === 'Text') return undefined;
  return (text) => {
    const body = /^\s*```(?:json)?\s*([\s\S]*?)\s*```\s*$/.exec(text)?.[1] ?? text;
    let value: unknown;
    try {
      value = JSON.parse(body);
    } catch {
      return 'it is not JSON';
    }
    if (format.kind !== 'JsonSchema') return undefined;
    const key = JSON.stringify(format.schema ?? {});
    let validate = compiledSchemas.get(key);
    if (!validate) {
      try {
        compiledSchemas.set(key, (validate = ajv.compile(format.schema ?? {})));
      } catch (error) {
        return `the agent's JSON Schema cannot be compiled (${(error as Error).message})`;
      }
    }
    return validate(value) ? undefined : `it does not match the schema: ${ajv.errorsText(validate.errors)}`;
  };
}

const structuredResponseHint = (definition: AgentDefinition) =>
  definition.responseFormat.kind === 'JsonSchema'
    ? `Reply with JSON only, matching this JSON Schema: ${JSON.stringify(definition.responseFormat.schema)}`
    : 'Reply with JSON only.';

function addUsage(a: Usage, b: Usage): Usage {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cachedInputTokens: a.cachedInputTokens + b.cachedInputTokens,
    reasoningTokens: a.reasoningTokens + b.reasoningTokens,
    totalTokens: a.totalTokens + b.totalTokens,
  };
}

/** A recorded payload longer than `limit` characters (as JSON) becomes a marked preview. */
function recordable(value: unknown, limit: number): unknown {
  const json = JSON.stringify(value ?? null);
  return json.length <= limit ? (value ?? null) : { truncated: true, length: json.length, preview: json.slice(0, limit) };
}

/** A tool result over `maxBytes` of UTF-8 (as JSON) reaches the model cut, with a note of what was cut. */
function limitToolOutput(value: unknown, maxBytes: number | null): unknown {
  if (maxBytes === null) return value;
  const json = JSON.stringify(value ?? null);
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes <= maxBytes) return value;
  const note = `…[truncated ${bytes} bytes]`;
  let cut = Buffer.from(json, 'utf8')
    .subarray(0, Math.max(0, maxBytes - Buffer.byteLength(note, 'utf8')))
    .toString('utf8');
  while (Buffer.byteLength(cut + note, 'utf8') > maxBytes) cut = cut.slice(0, -1); // a split character decodes wider
  return cut + note;
}

/** Tool names allow `[A-Za-z0-9_-]` only; agent names may also hold dots. */
const agentToolName = (agentName: string) => `call_${agentName.replace(/[^A-Za-z0-9_-]/g, '_')}`.slice(0, 64);

function sumUsage(
  usages: Array<{
    inputTokens?: number;
    outputTokens?: number;
    totalTokens?: number;
    reasoningTokens?: number;
    cachedInputTokens?: number;
  }>,
) {
  const add = (key: keyof (typeof usages)[number]) => usages.reduce((sum, usage) => sum + (usage[key] ?? 0), 0);
  return {
    inputTokens: add('inputTokens'),
    outputTokens: add('outputTokens'),
    totalTokens: add('totalTokens'),
    reasoningTokens: add('reasoningTokens'),
    cachedInputTokens: add('cachedInputTokens'),
  };
}

function usageOf(usage: {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  reasoningTokens?: number;
  cachedInputTokens?: number;
}): Usage {
  const inputTokens = usage.inputTokens ?? 0;
  const outputTokens = usage.outputTokens ?? 0;
  return {
    inputTokens,
    outputTokens,
    cachedInputTokens: usage.cachedInputTokens ?? 0,
    reasoningTokens: usage.reasoningTokens ?? 0,
    totalTokens: usage.totalTokens ?? inputTokens + outputTokens,
  };
}

function describe(error: unknown): string {
  const message = (error as Error)?.message ?? String(error);
  return (error as Error)?.name === 'TimeoutError' || /aborted|timeout/i.test(message) ? 'timed out' : message.slice(0, 500);
}

function withTimeout<T>(work: Promise<T>, ms: number, name: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new HangarError('unavailable', `tool ${name} took longer than ${ms} ms (Tools:DefaultTimeout)`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** What the caller still gets when the run row could not be written (recording must not block the run). */
function placeholderRun(
  id: string,
  agentName: string,
  agentVersion: number | null,
  request: Pick<StartRunRequest, 'sessionId' | 'isStreaming'>,
  parent?: RunRow,
): RunRow {
  return {
    id,
    agentName,
    agentVersion,
    sessionId: request.sessionId ?? null,
    status: 'Running',
    kind: parent ? 'Child' : 'Interactive',
    isStreaming: request.isStreaming,
    startedAt: new Date().toISOString(),
    completedAt: null,
    durationMs: null,
    usage: ZERO_USAGE,
    cost: null,
    modelProvider: null,
    model: null,
    errorType: null,
    errorMessage: null,
    parentRunId: parent?.id ?? null,
    rootRunId: parent?.rootRunId ?? id,
    depth: parent ? parent.depth + 1 : 0,
    userId: null,
    labels: {},
  };
}

/** A pause that ends after `ms`, on `wake()` (a pub/sub message), or when `signal` aborts. */
function createWakeablePause() {
  let wake: (() => void) | undefined;
  return {
    wake: () => wake?.(),
    sleep: (ms: number, signal: AbortSignal) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
        signal.addEventListener('abort', () => wake?.(), { once: true });
      }),
  };
}
