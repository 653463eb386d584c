import {
  AgentRegistryServiceDefinition,
  EXPERIMENT_CHANGES_CHANNEL,
  experimentCacheKey,
  GovernanceServiceDefinition,
  RunExecutorServiceDefinition,
  runPb,
  runStatusFromProto,
  WebhookServiceDefinition,
} from '@hangar/contracts';
import type { PubSub } from '@hangar/messaging';
import { createChannel, createServiceClient, type ServiceName } from '@hangar/platform';
import type { AgentVersions, CaseRunner, ExperimentPorts, RunRecords } from './ports.js';

/** ListRuns' largest page. */
const RUN_PAGE = 200;

/** The text of a recorded input's last user message. */
function lastUserMessage(input: Record<string, unknown> | undefined): string | undefined {
  const messages = (input?.messages ?? []) as Array<{ role?: unknown; content?: unknown }>;
  const last = [...messages].reverse().find((message) => message.role === 'user');
  return typeof last?.content === 'string' ? last.content : undefined;
}

/** The evaluation service's ports, served by the run executor and the agent registry over gRPC. */
export function createEvaluationClients(addressOf: (name: ServiceName) => string, pubsub: PubSub) {
  const runChannel = createChannel(addressOf('RunExecutor'));
  const registryChannel = createChannel(addressOf('AgentRegistry'));
  const runs = createServiceClient(RunExecutorServiceDefinition, runChannel);
  const registry = createServiceClient(AgentRegistryServiceDefinition, registryChannel);
  const governanceChannel = createChannel(addressOf('Governance'));
  const governance = createServiceClient(GovernanceServiceDefinition, governanceChannel);
  const webhooks = createServiceClient(WebhookServiceDefinition, governanceChannel);

  const runner: CaseRunner = {
    async run(caller, request, signal) {
      const started = performance.now();
      let runId: string | undefined;
      const updates = runs.startRun(
        {
          agentName: request.agentName,
          agentVersion: request.agentVersion,
          messages: [{ role: 'user', content: request.input }],
          parameters: Object.entries(request.parameters).map(([name, value]) => ({ name, value })),
          isStreaming: false,
          attachments: [],
          kind: 'Evaluation',
        },
        { caller, signal },
      );
      const usageOf = (run: runPb.RunRecord | undefined) => ({
        inputTokens: run?.usage?.inputTokens ?? 0,
        outputTokens: run?.usage?.outputTokens ?? 0,
        cost: run?.cost?.total ?? null,
      });
      for await (const { update } of updates) {
        if (update?.$case === 'started') runId = update.value.run?.id;
        if (update?.$case === 'finished') {
          const latencyMs = performance.now() - started;
          return { runId, completed: true, output: update.value.outputText, latencyMs, ...usageOf(update.value.run) };
        }
        if (update?.$case === 'failed') {
          const latencyMs = performance.now() - started;
          const error = `${update.value.errorType}: ${update.value.message}`;
          return { runId: runId ?? update.value.run?.id, completed: false, output: '', error, latencyMs, ...usageOf(update.value.run) };
        }
      }
      throw new Error('the run ended without an outcome');
    },
  };

  const agents: AgentVersions = {
    async pin(caller, name, version) {
      const { agent } = await registry.resolveAgent({ name, version }, { caller });
      return agent?.version ?? null;
    },
  };

  const records: RunRecords = {
    async read(caller, runId) {
      const [{ run }, recorded] = await Promise.all([
        runs.getRun({ runId }, { caller }),
        // A run whose input was not recorded (RunRecording:RecordRunInput off) is judged on its answer alone.
        runs.getRunInput({ runId }, { caller }).catch(() => undefined),
      ]);
      let output: string | undefined;
      // A finished run's events end with its terminal event, so the stream ends by itself.
      for await (const event of runs.streamRunEvents({ runId, afterSeq: 0 }, { caller })) {
        if (event.type === 'message.completed' && typeof event.data?.text === 'string') output = event.data.text;
      }
      return {
        kind: run!.kind,
        status: runStatusFromProto(run!.status) ?? 'Unknown',
        agentVersion: run!.agentVersion ?? null,
        input: lastUserMessage(recorded?.input),
        output,
      };
    },
    async score(caller, runId, score) {
      await runs.saveFeedback(
        { runId, name: score.name, kind: 'Numeric', value: score.value, comment: score.comment, source: 'Evaluator' },
        { caller },
      );
    },
  };

  const experiments: ExperimentPorts = {
    async taggedRuns(caller, experiment, limit) {
      const found: runPb.RunRecord[] = [];
      for (let skip = 0; skip < limit; skip += RUN_PAGE) {
        const { runs: page } = await runs.listRuns(
          { label: `experiment:${experiment}`, includeChildren: false, skip, take: RUN_PAGE },
          { caller },
        );
        found.push(...page);
        if (page.length < RUN_PAGE) break;
      }
      return found.map((run) => ({
        agentVersion: run.agentVersion ?? null,
        status: runStatusFromProto(run.status) ?? 'Unknown',
        cost: run.cost?.total ?? null,
        durationMs: run.durationMs ?? null,
      }));
    },
    async rollback(caller, agentName, version) {
      const { agent } = await registry.rollbackAgent({ name: agentName, version }, { caller });
      return agent!.version!;
    },
    async audit(caller, entry) {
      await governance.recordAudit(entry, { caller });
    },
    async webhook(caller, event) {
      await webhooks.offerWebhookEvent(event, { caller });
    },
    async announce(tenantId, agentName) {
      // A hint: a run executor that misses it trusts its copy for at most its TTL.
      await pubsub.publish(EXPERIMENT_CHANGES_CHANNEL, JSON.stringify({ id: experimentCacheKey(tenantId, agentName) })).catch(() => {});
    },
  };

  return {
    runner,
    agents,
    records,
    experiments,
    close() {
      runChannel.close();
      registryChannel.close();
      governanceChannel.close();
    },
  };
}
