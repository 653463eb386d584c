import { AgentRegistryServiceDefinition, RunExecutorServiceDefinition, runPb } from '@hangar/contracts';
import { createChannel, createServiceClient, type ServiceName } from '@hangar/platform';
import type { AgentVersions, CaseRunner } from './ports.js';

/** The evaluation service's ports, served by the run executor and the agent registry over gRPC. */
export function createEvaluationClients(addressOf: (name: ServiceName) => string) {
  const runChannel = createChannel(addressOf('RunExecutor'));
  const registryChannel = createChannel(addressOf('AgentRegistry'));
  const runs = createServiceClient(RunExecutorServiceDefinition, runChannel);
  const registry = createServiceClient(AgentRegistryServiceDefinition, registryChannel);

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

  return {
    runner,
    agents,
    close() {
      runChannel.close();
      registryChannel.close();
    },
  };
}
