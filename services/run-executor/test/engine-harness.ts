import { createNoopMeter } from '@opentelemetry/api';
import { MockLanguageModelV2, simulateReadableStream } from 'ai/test';
import type { LanguageModelV2StreamPart } from '@ai-sdk/provider';
import { AgentDefinitionInputSchema, normalizeDefinition, type AgentDefinitionInput } from '@hangar/contracts';
import { createInProcessPubSub } from '@hangar/messaging';
import { createLogger, loadConfig, type Caller, type HangarConfig } from '@hangar/platform';
import type { ApprovalRow } from '../src/approvals/approval.model.js';
import type { ApprovalRepository } from '../src/approvals/approval.repository.js';
import type { AgentLoader, QuotaAdmission, SessionGateway, SkillGateway, TenantSettingsSource, ToolCatalog } from '../src/clients/ports.js';
import type { KnowledgeTools } from '../src/knowledge/knowledge-tools.js';
import type { McpTools } from '../src/mcp/mcp-tools.js';
import type { RunEventRow } from '../src/events/event.model.js';
import type { EventRepository } from '../src/events/event.repository.js';
import type { ScoreRepository } from '../src/feedback/score.repository.js';
import type { JobRepository } from '../src/jobs/job.repository.js';
import { createCircuitBreaker } from '../src/providers/circuit-breaker.js';
import type { ModelResolver, ResolvedModel } from '../src/providers/model-providers.js';
import type { WorkflowRepository } from '../src/workflows/workflow.repository.js';
import type { SpanRepository } from '../src/traces/span.repository.js';
import type { ReconciliationRepository } from '../src/reconciliation/reconciliation.repository.js';
import { createRunEngine } from '../src/runs/run-engine.service.js';
import { TERMINAL_STATUSES, ZERO_USAGE, type RunRow, type RunStatus } from '../src/runs/run.model.js';
import type { RunRepository } from '../src/runs/run.repository.js';
import type { RunUpdate } from '../src/runs/run-update.js';
import { strictFake } from '@hangar/testing';

export const CALLER: Caller = { tenantId: 't1', actor: 'test', userId: 'u1', role: 'Admin' };

/** A model that answers with these stream parts (or throws from doStream). */
export type ScriptedModel = Array<LanguageModelV2StreamPart[] | Error>;

export const textAnswer = (text: string, usage = { inputTokens: 3, outputTokens: 2, totalTokens: 5 }): LanguageModelV2StreamPart[] => [
  { type: 'stream-start', warnings: [] },
  { type: 'text-start', id: 't' },
  ...text.split(' ').map((word, index) => ({ type: 'text-delta' as const, id: 't', delta: index ? ` ${word}` : word })),
  { type: 'text-end', id: 't' },
  { type: 'finish', finishReason: 'stop', usage },
];

export const toolCallAnswer = (toolName: string, input: unknown): LanguageModelV2StreamPart[] => [
  { type: 'stream-start', warnings: [] },
  { type: 'tool-call', toolCallId: 'call-1', toolName, input: JSON.stringify(input) },
  { type: 'finish', finishReason: 'tool-calls', usage: { inputTokens: 3, outputTokens: 1, totalTokens: 4 } },
];

/** A scripted model: each call takes the next answer of its script; calls past the script fail the test. */
export function scriptedModel(name: string, script: ScriptedModel) {
  let calls = 0;
  const model = new MockLanguageModelV2({
    provider: 'fake',
    modelId: name,
    doStream: async ({ abortSignal }) => {
      const answer = script[calls++];
      if (answer === undefined) throw new Error(`model ${name} was called ${calls} times; the test scripted ${script.length}`);
      if (answer instanceof Error) throw answer;
      return {
        stream: simulateReadableStream({ chunks: answer, chunkDelayInMs: 1, initialDelayInMs: 0 }),
        request: {},
        response: {},
      } as never;
    },
  });
  return { model, calls: () => calls };
}

/** The stores the run engine writes, in memory; a test replaces a method to make it fail. */
export function createMemoryStores() {
  const runs = new Map<string, RunRow & { tenantId: string }>();
  const events: RunEventRow[] = [];
  const approvals: ApprovalRow[] = [];
  const inputs = new Map<string, unknown>();
  const update = (runId: string, change: Partial<RunRow>) => {
    const run = runs.get(runId);
    if (!run) throw new Error(`no run ${runId}`);
    const next = { ...run, ...change };
    runs.set(runId, next);
    return next;
  };
  const ended = (runId: string) => ['Completed', 'Failed', 'Canceled'].includes(runs.get(runId)?.status ?? '');
  const runRepository: Partial<RunRepository> = {
    async insert(tenantId, run, status: RunStatus = 'Running', record = {}) {
      const row: RunRow & { tenantId: string } = {
        ...run,
        tenantId,
        status,
        startedAt: new Date().toISOString(),
        completedAt: null,
        durationMs: null,
        usage: ZERO_USAGE,
        cost: null,
        modelProvider: record.model?.provider ?? null,
        model: record.model?.model ?? null,
        errorType: null,
        errorMessage: null,
      };
      runs.set(run.id, row);
      if (record.input !== undefined) inputs.set(run.id, record.input);
      return row;
    },
    async get(tenantId, runId) {
      const run = runs.get(runId);
      return run?.tenantId === tenantId ? run : undefined;
    },
    markRunning: async (runId) => (ended(runId) ? undefined : update(runId, { status: 'Running' })),
    setStatus: async (runId, status) => void update(runId, { status }),
    setModel: async (runId, provider, model) => void update(runId, { modelProvider: provider, model }),
    heartbeatRun: async () => {},
    recordInput: async (runId, input) => void (inputs.has(runId) || inputs.set(runId, input)),
    async finish(runId, outcome) {
      if (ended(runId)) return undefined;
      return update(runId, {
        status: outcome.status,
        usage: outcome.usage,
        cost: outcome.cost,
        errorType: outcome.errorType,
        errorMessage: outcome.errorMessage,
        completedAt: new Date().toISOString(),
      });
    },
  };
  // One statement in the real repository: here the (replaceable) finish and appendEvents, the row's ending undone when the event fails.
  runRepository.finishWithEvent = async (_tenantId, runId, outcome, terminal) => {
    const before = runs.get(runId)!;
    const run = await runRepository.finish!(runId, outcome);
    if (!run) return undefined;
    const target = {
      runId,
      rootRunId: run.rootRunId,
      tenantId: before.tenantId,
      agentName: run.agentName,
      traceparent: terminal.traceparent,
    };
    try {
      const seq = (await eventRepository.lastSeq!(runId)) + 1;
      const [event] = await eventRepository.appendEvents!(target, [{ seq, type: terminal.type, data: terminal.data }]);
      return { run, target, event };
    } catch (error) {
      runs.set(runId, before);
      throw error;
    }
  };
  const eventRepository: Partial<EventRepository> = {
    async appendEvents(target, batch) {
      const stored = batch.map((event) => ({ ...event, runId: target.runId, at: new Date().toISOString() }));
      for (const event of stored) {
        if (events.some((other) => other.runId === event.runId && other.seq === event.seq)) throw new Error(`duplicate seq ${event.seq}`);
      }
      events.push(...stored);
      return stored;
    },
    lastSeq: async (runId) => Math.max(0, ...events.filter((event) => event.runId === runId).map((event) => event.seq)),
    events: async (_tenantId, runId, afterSeq) =>
      events.filter((event) => event.runId === runId && event.seq > afterSeq).sort((a, b) => a.seq - b.seq),
    async followedRuns(runIds) {
      const standing = new Map<string, { lastSeq: number; ended: boolean }>();
      for (const runId of runIds) {
        const run = runs.get(runId);
        const lastSeq = Math.max(0, ...events.filter((event) => event.runId === runId).map((event) => event.seq));
        if (run) standing.set(runId, { lastSeq, ended: TERMINAL_STATUSES.has(run.status) });
      }
      return standing;
    },
  };
  const approvalRepository: Partial<ApprovalRepository> = {
    async requestApprovals(runId, calls, expiresInMs) {
      const requested = calls.map((call) => ({
        ...call,
        runId,
        status: 'Pending' as const,
        decidedBy: null,
        comment: null,
        createdAt: new Date().toISOString(),
        expiresAt: new Date(Date.now() + expiresInMs).toISOString(),
        decidedAt: null,
      }));
      approvals.push(...requested);
      update(runId, { status: 'AwaitingApproval' });
      return requested;
    },
    approvals: async (runId, ids) => approvals.filter((approval) => approval.runId === runId && (!ids || ids.includes(approval.id))),
    async decideApproval(runId, approvalId, decision) {
      const approval = approvals.find(
        (candidate) => candidate.id === approvalId && candidate.runId === runId && candidate.status === 'Pending',
      );
      if (!approval) return undefined;
      Object.assign(approval, {
        status: decision.approved ? 'Approved' : 'Denied',
        decidedBy: decision.decidedBy,
        comment: decision.comment,
        decidedAt: new Date().toISOString(),
      });
      return approval;
    },
  };
  const continuations: Partial<ReconciliationRepository> = { saveContinuation: async () => {}, dropContinuation: async () => {} };
  return { runs, events, approvals, inputs, runRepository, eventRepository, approvalRepository, continuations };
}

export interface HarnessOptions {
  agent?: Partial<AgentDefinitionInput>;
  /** Other agents the loader knows (callable children). */
  agents?: Array<Partial<AgentDefinitionInput> & { name: string }>;
  /** `provider/model` → script. */
  models?: Record<string, ScriptedModel>;
  config?: Record<string, unknown>;
  sessions?: Partial<SessionGateway>;
  /** The registry's tool catalog; by default, empty. */
  toolCatalog?: ToolCatalog;
  /** Governance's quota admission; by default every run is admitted. */
  admitRun?: QuotaAdmission;
  /** The tenant's state and own provider bindings; by default enabled, with none. */
  tenantSettings?: TenantSettingsSource;
  /** The skill service; by default it knows no skill. */
  skills?: Partial<SkillGateway>;
  /** The real model resolver (real providers over HTTP) in place of the scripted `models`. */
  modelResolver?: (config: HangarConfig) => ModelResolver;
}

/** A run engine on in-memory stores, scripted models and strict fakes of the other services. */
export function createHarness(options: HarnessOptions = {}) {
  const config = loadConfig({ env: {}, overrides: { Providers: { fake: { Kind: 'Demo' } }, ...options.config } });
  const logger = createLogger({ name: 'engine-test', level: 'silent' });
  const stores = createMemoryStores();
  const definitions = new Map(
    [{ name: 'assistant', ...options.agent }, ...(options.agents ?? [])].map((input) => [
      input.name!,
      normalizeDefinition(AgentDefinitionInputSchema.parse({ model: { provider: 'fake', model: 'primary' }, ...input })),
    ]),
  );
  const models = new Map(Object.entries(options.models ?? {}).map(([key, script]) => [key, scriptedModel(key, script)]));
  const agents = strictFake<AgentLoader>('agents', {
    async load(_caller, name) {
      const definition = definitions.get(name);
      if (!definition) throw Object.assign(new Error(`agent ${name} not found`), { status: 404 });
      return { definition, version: 1 };
    },
  });
  const pubsub = createInProcessPubSub();
  const engine = createRunEngine({
    config,
    logger,
    repositories: {
      runs: strictFake<RunRepository>('runs', stores.runRepository),
      events: strictFake<EventRepository>('events', stores.eventRepository),
      approvals: strictFake<ApprovalRepository>('approvals', stores.approvalRepository),
      scores: strictFake<ScoreRepository>('scores', {}),
      jobs: strictFake<JobRepository>('jobs', {}),
      reconciliation: strictFake<ReconciliationRepository>('reconciliation', stores.continuations),
      spans: strictFake<SpanRepository>('spans', {}),
      workflows: strictFake<WorkflowRepository>('workflows', {}),
    },
    pubsub,
    eventsStored: () => {},
    agents,
    sessions: strictFake<SessionGateway>('sessions', options.sessions ?? {}),
    skills: strictFake<SkillGateway>('skills', options.skills ?? { forRun: async () => [] }),
    attachments: strictFake('attachments', {}),
    audit: async () => {},
    admitRun: options.admitRun ?? (async () => undefined),
    tenantSettings: options.tenantSettings ?? (async () => ({ enabled: true, providers: {} })),
    toolCatalog: options.toolCatalog ?? (async () => new Map()),
    mcpTools: strictFake<McpTools>('mcpTools', {}),
    knowledgeTools: strictFake<KnowledgeTools>('knowledgeTools', {}),
    models:
      options.modelResolver?.(config) ??
      ({
        resolve(provider: string, model: string): ResolvedModel | undefined {
          const scripted = models.get(`${provider}/${model}`);
          return (
            scripted && { provider, model, languageModel: scripted.model, settings: config.Providers.fake, circuit: `${provider}/${model}` }
          );
        },
      } as never),
    breaker: createCircuitBreaker({
      enabled: config.CircuitBreaker.Enabled,
      failureThreshold: config.CircuitBreaker.FailureThreshold,
      breakDurationMs: config.CircuitBreaker.BreakDuration,
    }),
    meter: createNoopMeter(),
  });

  /** Starts a run and collects every update until it ends. */
  async function run(message = 'hello', request: { sessionId?: string } = {}, signal = new AbortController().signal) {
    const updates: RunUpdate[] = [];
    for await (const update of engine.start(
      CALLER,
      {
        agentName: 'assistant',
        messages: [{ role: 'user', content: message }],
        parameters: [],
        isStreaming: true,
        attachments: [],
        ...request,
      },
      signal,
    ))
      updates.push(update);
    const last = updates.at(-1)!;
    if (last.type !== 'finished' && last.type !== 'failed') throw new Error(`the run's last update was ${last.type}`);
    return { updates, run: last.run, text: updates.flatMap((update) => (update.type === 'text-delta' ? [update.text] : [])).join('') };
  }

  const eventTypes = (runId: string) => stores.events.filter((event) => event.runId === runId).map((event) => event.type);

  /** Every event of the run through the event tail, which must end by itself. */
  async function tail(runId: string) {
    const seen: string[] = [];
    for await (const event of engine.events(CALLER, runId, 0, AbortSignal.timeout(5000))) seen.push(event.type);
    return seen;
  }

  return { engine, stores, config, pubsub, models, run, eventTypes, tail };
}
