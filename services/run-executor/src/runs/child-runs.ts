import { HangarError, type Caller, type HangarConfig } from '@hangar/platform';
import type { HumanWait } from '../approvals/approvals.service.js';
import type { Emit } from '../events/event-writer.js';
import type { TreeBudget } from './model-turns.js';
import type { RunRow, StartRunRequest } from './run.model.js';
import type { ExecutionContext } from './run-execution.js';
import type { RunUpdate } from './run-update.js';

/** How a child run ended, as its parent (a tool call, a workflow step) reads it. */
export interface ChildOutcome {
  runId: string;
  status: RunRow['status'];
  output: string;
  errorType?: string;
  error?: string;
}

/** A non-positive graph limit removes it (SPEC Limits). */
export const graphLimit = (value: number | null) => (value === null || value <= 0 ? Infinity : value);

type Execute = (caller: Caller, request: StartRunRequest, context: ExecutionContext) => AsyncGenerator<RunUpdate>;
type Parent = { run: RunRow; budget: TreeBudget };

/** Runs in a parent's tree (callable agents, workflow steps): executed as any run, within the tree's graph limits. */
export function createChildRuns(execute: Execute, settings: Pick<HangarConfig, 'AgentGraph'>) {
  const maxDepth = settings.AgentGraph.MaxDepth;
  const maxTotalRuns = graphLimit(settings.AgentGraph.MaxTotalRuns);

  /** Runs a callable agent as a child of `parent`; what the model gets back is the child's answer. */
  async function runChild(
    caller: Caller,
    agentName: string,
    message: string,
    parent: Parent,
    signal: AbortSignal,
    announce: (update: RunUpdate) => Promise<void>,
    emit: Emit,
    humanWait: HumanWait | undefined,
  ) {
    if (parent.run.depth + 1 > maxDepth)
      throw new HangarError('validation', `agent graph depth limit reached (AgentGraph:MaxDepth ${maxDepth})`, {}, 'agent_graph_limit');
    if (parent.budget.childRuns + 1 > maxTotalRuns)
      throw new HangarError(
        'validation',
        `agent graph run limit reached (AgentGraph:MaxTotalRuns ${maxTotalRuns})`,
        {},
        'agent_graph_limit',
      );
    parent.budget.childRuns += 1;
    const outcome = await askAsChild(caller, agentName, message, parent, signal, {
      humanWait,
      onStarted: async (runId) => {
        await emit('child.started', { runId, agentName });
        await announce({ type: 'child-run', runId, agentName });
      },
    });
    await emit('child.completed', { runId: outcome!.runId, status: outcome!.status });
    return outcome!;
  }

  /** One message to an agent as a child run of `parent`; how it ended (undefined: stopped before its row was written). */
  async function askAsChild(
    caller: Caller,
    agentName: string,
    message: string,
    parent: Parent,
    signal: AbortSignal,
    options: { humanWait?: HumanWait; onStarted?: (runId: string) => Promise<void>; offeredParameters?: Record<string, string> } = {},
  ): Promise<ChildOutcome | undefined> {
    const request: StartRunRequest = {
      agentName,
      messages: [{ role: 'user', content: message }],
      parameters: Object.entries(options.offeredParameters ?? {}).map(([name, value]) => ({ name, value })),
      isStreaming: false,
      attachments: [],
    };
    let outcome: ChildOutcome | undefined;
    const context = { signal, parent, humanWait: options.humanWait, parametersOffered: options.offeredParameters !== undefined };
    for await (const update of execute(caller, request, context)) {
      if (update.type === 'started') await options.onStarted?.(update.run.id);
      if (update.type === 'finished') outcome = { runId: update.run.id, status: update.run.status, output: update.outputText };
      if (update.type === 'failed')
        outcome = { runId: update.run.id, status: update.run.status, output: '', errorType: update.errorType, error: update.message };
    }
    return outcome;
  }

  /**
   * A workflow's agent step: a child run of the workflow's run (so in its tree, within its budget),
   * whose answer is what the step gives. The agent gets those of the workflow run's parameters it
   * declares. A refusal before the run exists (an agent deleted since, a required parameter the
   * workflow run was not given) is thrown.
   */
  async function runStep(
    caller: Caller,
    parent: RunRow,
    budget: TreeBudget,
    step: { agentName: string; message: string; parameters: Record<string, string> },
    signal: AbortSignal,
  ) {
    // No outcome at all: the caller's signal ended it before its row was written.
    return (
      (await askAsChild(caller, step.agentName, step.message, { run: parent, budget }, signal, { offeredParameters: step.parameters })) ?? {
        runId: '',
        status: 'Canceled' as const,
        output: '',
      }
    );
  }

  return { runChild, runStep };
}
