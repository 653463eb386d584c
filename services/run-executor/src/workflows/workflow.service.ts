import { randomUUID } from 'node:crypto';
import { jsonDepth, MAX_VALUE_DEPTH } from '@hangar/contracts';
import {
  auditOrLog,
  conflict,
  HangarError,
  isUuid,
  notFound,
  RECORD_NAME,
  RECORD_NAME_RULE,
  validationError,
  type Caller,
  type Logger,
} from '@hangar/platform';
import type { AgentLoader, AuditWriter } from '../clients/ports.js';
import { channels, type TypedPubSub } from '../events/channels.js';
import type { Admission } from '../runs/admission.js';
import { checkedDefinition, graphView, initialState } from './workflow-graph.js';
import type { WorkflowDefinition, WorkflowRunRow } from './workflow.model.js';
import type { WorkflowRepository } from './workflow.repository.js';

/** What `POST /api/workflows/{name}/run` and an answer may carry. */
const MAX_INPUT_BYTES = 256 * 1024;
const MAX_ANSWER_BYTES = 64 * 1024;
const MAX_PARAMETERS = 50;
const MAX_PARAMETER_CHARS = 4096;

const byteLength = (value: unknown) => Buffer.byteLength(JSON.stringify(value ?? null));

/** A free-form JSON value a caller gives (a run's input, an answer): present, not too large, not too deep. */
function checkValue(value: unknown, field: string, maxBytes: number) {
  if (value === undefined || value === null) throw validationError(`${field} is required`, [{ path: field, message: 'required' }]);
  if (byteLength(value) > maxBytes)
    throw validationError(`${field} is larger than ${maxBytes} bytes`, [{ path: field, message: 'too large' }]);
  if (jsonDepth(value, MAX_VALUE_DEPTH) > MAX_VALUE_DEPTH)
    throw validationError(`${field} is nested deeper than ${MAX_VALUE_DEPTH} levels`, [{ path: field, message: 'too deep' }]);
}

/**
 * Workflows' rules for the API (API.md "Workflows"): versioned definitions checked against the
 * registry's agents, runs queued for the worker, checkpoints and human-input requests read back,
 * answers that make a paused run ready again on any instance.
 */
export function createWorkflowService(deps: {
  repository: WorkflowRepository;
  agents: Pick<AgentLoader, 'load'>;
  admit: Admission;
  audit: AuditWriter;
  pubsub: TypedPubSub;
  logger: Logger;
  /** `Workflows:Enabled`. */
  enabled: boolean;
}) {
  const { repository } = deps;
  const audit = auditOrLog(deps.audit, deps.logger);

  const requireEnabled = () => {
    if (!deps.enabled) throw notFound('workflows are switched off on this deployment (Workflows:Enabled false)');
  };

  async function requireWorkflow(caller: Caller, name: string, version?: number) {
    requireEnabled();
    const workflow = await repository.get(caller.tenantId, name, version);
    if (!workflow) throw notFound(version === undefined ? `workflow ${name} not found` : `workflow ${name} has no version ${version}`);
    return workflow;
  }

  async function requireRun(caller: Caller, runId: string): Promise<WorkflowRunRow> {
    requireEnabled();
    const run = isUuid(runId) ? await repository.getRun(caller.tenantId, runId) : undefined;
    if (!run) throw notFound(`workflow run ${runId} not found`);
    return run;
  }

  /** Every agent step names an agent the registry knows (for this tenant). */
  async function checkAgents(caller: Caller, definition: WorkflowDefinition) {
    const problems: Array<{ path: string; message: string }> = [];
    await Promise.all(
      definition.steps.map(async (step, index) => {
        if (step.kind !== 'agent') return;
        try {
          await deps.agents.load(caller, step.agent);
        } catch (error) {
          if (!(error instanceof HangarError) || error.status !== 404) throw error;
          problems.push({ path: `steps.${index}.agent`, message: `no agent named "${step.agent}"` });
        }
      }),
    );
    if (problems.length) throw validationError('the workflow names agents that do not exist', problems);
  }

  const wakeWorkers = (runId: string) =>
    deps.pubsub
      .publish(channels.workflowsReady(), { runId })
      .catch((error) => deps.logger.warn({ err: error }, 'workflow wake-up not sent; a worker finds the run at its next poll'));

  return {
    async put(caller: Caller, name: string, raw: unknown) {
      requireEnabled();
      if (!RECORD_NAME.test(name))
        throw validationError(`workflow name ${RECORD_NAME_RULE}`, [{ path: 'name', message: RECORD_NAME_RULE }]);
      const definition = checkedDefinition(raw);
      await checkAgents(caller, definition);
      const stored = await repository.putVersion(caller.tenantId, name, definition);
      if (!stored) throw conflict(`workflow ${name} was saved by another request at the same time; try again`);
      await audit(caller, {
        action: stored.created ? 'workflow.created' : 'workflow.updated',
        resourceType: 'workflow',
        resourceId: name,
        details: { version: stored.workflow.version },
      });
      return stored;
    },
    get: requireWorkflow,
    async list(caller: Caller) {
      requireEnabled();
      return repository.list(caller.tenantId);
    },
    async delete(caller: Caller, name: string) {
      requireEnabled();
      if (!(await repository.delete(caller.tenantId, name))) throw notFound(`workflow ${name} not found`);
      await audit(caller, { action: 'workflow.deleted', resourceType: 'workflow', resourceId: name, details: {} });
    },
    async graph(caller: Caller, name: string, version?: number) {
      const workflow = await requireWorkflow(caller, name, version);
      return graphView(workflow.name, workflow.version, workflow.definition);
    },

    /** Queues a run of the current version: its runs row (kind Workflow, Queued) and its state, for any instance's worker. */
    async start(caller: Caller, name: string, request: { input: unknown; parameters: Record<string, string> }) {
      const workflow = await requireWorkflow(caller, name);
      checkValue(request.input, 'input', MAX_INPUT_BYTES);
      const parameters = Object.entries(request.parameters);
      if (parameters.length > MAX_PARAMETERS || parameters.some(([name, value]) => name.length > 64 || value.length > MAX_PARAMETER_CHARS))
        throw validationError(`at most ${MAX_PARAMETERS} parameters, names up to 64 and values up to ${MAX_PARAMETER_CHARS} characters`, [
          { path: 'parameters', message: 'too many or too long' },
        ]);
      // Admitted like a root run of each agent it will run (its steps are children: part of this admission).
      const agents = [...new Set(workflow.definition.steps.flatMap((step) => (step.kind === 'agent' ? [step.agent] : [])))];
      for (const agent of agents) await deps.admit(caller, agent);
      const runId = randomUUID();
      await repository.createRun(
        caller.tenantId,
        {
          id: runId,
          agentName: workflow.name,
          agentVersion: workflow.version,
          sessionId: null,
          kind: 'Workflow',
          isStreaming: false,
          rootRunId: runId,
          parentRunId: null,
          depth: 0,
          userId: caller.userId ?? null,
          labels: { ...caller.labels, workflow: workflow.name },
        },
        workflow,
        { input: request.input, parameters: request.parameters, caller, state: initialState(workflow.definition) },
      );
      await wakeWorkers(runId);
      return runId;
    },

    getRun: requireRun,
    async checkpoints(caller: Caller, runId: string) {
      await requireRun(caller, runId);
      return repository.checkpoints(caller.tenantId, runId);
    },
    async requests(caller: Caller, runId: string) {
      await requireRun(caller, runId);
      return repository.requests(caller.tenantId, runId);
    },

    /** Answers a pending question; the run's last one makes it ready for whichever instance leases it next. */
    async answer(caller: Caller, runId: string, requestId: string, answer: unknown) {
      await requireRun(caller, runId);
      checkValue(answer, 'answer', MAX_ANSWER_BYTES);
      const request = (await repository.requests(caller.tenantId, runId)).find((candidate) => candidate.id === requestId);
      if (!request) throw notFound(`request ${requestId} not found`);
      const answered = await repository.answer(caller.tenantId, runId, requestId, answer, caller.actor);
      if (!answered) throw conflict(`request ${requestId} was answered already`);
      await audit(caller, {
        action: 'workflow.request.answered',
        resourceType: 'workflow-run',
        resourceId: runId,
        details: { requestId, stepId: request.stepId },
      });
      if (answered.ready) await wakeWorkers(runId);
      return (await repository.requests(caller.tenantId, runId)).find((candidate) => candidate.id === requestId)!;
    },
  };
}

export type WorkflowService = ReturnType<typeof createWorkflowService>;
