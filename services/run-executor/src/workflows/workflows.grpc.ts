import type { workflowPb as pb } from '@hangar/contracts';
import type { CallerContext } from '@hangar/platform';
import type { Workflow, WorkflowCheckpoint, WorkflowRequest, WorkflowRunRow } from './workflow.model.js';
import type { WorkflowService } from './workflow.service.js';

const workflowToProto = (workflow: Workflow): pb.Workflow => ({
  name: workflow.name,
  version: workflow.version,
  steps: workflow.definition.steps,
  edges: workflow.definition.edges,
  description: workflow.definition.description,
  createdAt: workflow.createdAt.toISOString(),
  updatedAt: workflow.updatedAt.toISOString(),
});

const runToProto = (run: WorkflowRunRow): pb.WorkflowRun => ({
  id: run.id,
  workflow: run.workflow,
  version: run.version,
  status: run.status,
  input: run.input,
  parameters: run.parameters,
  superStep: run.state.superStep,
  output: run.output ?? undefined,
  outputs: run.state.outputs,
  errorType: run.errorType ?? undefined,
  errorMessage: run.errorMessage ?? undefined,
  createdAt: run.createdAt.toISOString(),
  completedAt: run.completedAt?.toISOString(),
});

const checkpointToProto = (checkpoint: WorkflowCheckpoint): pb.WorkflowCheckpoint => ({
  id: checkpoint.id,
  superStep: checkpoint.superStep,
  createdAt: checkpoint.createdAt.toISOString(),
  state: { superStep: checkpoint.state.superStep, active: checkpoint.state.active, outputs: checkpoint.state.outputs },
});

const requestToProto = (request: WorkflowRequest): pb.WorkflowRequest => ({
  id: request.id,
  stepId: request.stepId,
  superStep: request.superStep,
  prompt: request.prompt,
  status: request.status,
  answer: request.answer ?? undefined,
  answeredBy: request.answeredBy ?? undefined,
  createdAt: request.createdAt.toISOString(),
  answeredAt: request.answeredAt?.toISOString(),
});

/** gRPC ↔ workflow rules; translation only. */
export function workflowGrpc(workflows: WorkflowService): pb.WorkflowServiceImplementation<CallerContext> {
  return {
    async putWorkflow(request, { caller }) {
      const definition = {
        steps: request.steps ?? [],
        edges: request.edges ?? [],
        ...(request.description !== undefined && { description: request.description }),
      };
      const { workflow, created } = await workflows.put(caller, request.name, definition);
      return { workflow: workflowToProto(workflow), created };
    },
    async getWorkflow({ name, version }, { caller }) {
      return { workflow: workflowToProto(await workflows.get(caller, name, version)) };
    },
    async listWorkflows(_request, { caller }) {
      return { workflows: (await workflows.list(caller)).map(workflowToProto) };
    },
    async deleteWorkflow({ name }, { caller }) {
      await workflows.delete(caller, name);
      return {};
    },
    async getWorkflowGraph({ name, version }, { caller }) {
      return { graph: await workflows.graph(caller, name, version) };
    },
    async startWorkflowRun({ name, input, parameters }, { caller }) {
      return { workflowRunId: await workflows.start(caller, name, { input, parameters }) };
    },
    async getWorkflowRun({ id }, { caller }) {
      return { run: runToProto(await workflows.getRun(caller, id)) };
    },
    async listWorkflowCheckpoints({ id }, { caller }) {
      return { checkpoints: (await workflows.checkpoints(caller, id)).map(checkpointToProto) };
    },
    async listWorkflowRequests({ id }, { caller }) {
      return { requests: (await workflows.requests(caller, id)).map(requestToProto) };
    },
    async answerWorkflowRequest({ id, requestId, answer }, { caller }) {
      return { request: requestToProto(await workflows.answer(caller, id, requestId, answer)) };
    },
  };
}
