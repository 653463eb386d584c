import { jsonDepth, MAX_VALUE_DEPTH, type workflowPb } from '@hangar/contracts';
import { z } from 'zod';
import { locationHeader, problemResponse } from '../api.schemas.js';
import { defineRoute } from '../http/route.js';

const TAG = 'Workflows';

const WorkflowStepSchema = z
  .strictObject({
    id: z.string().describe('Unique in the workflow: a letter, then letters, digits, _ or - (up to 64)'),
    kind: z
      .enum(['agent', 'input', 'transform'])
      .describe('agent: a run of `agent`; input: a pause for a human answer; transform: `template` filled in'),
    agent: z.string().optional().describe('agent steps: the agent run (a child run of the workflow run)'),
    inputFrom: z
      .string()
      .optional()
      .describe('The step whose output this step is given ($input: the run’s input); default: the outputs that fired it'),
    prompt: z.string().optional().describe('agent steps: written before the input; input steps: the question asked'),
    template: z.string().optional().describe('transform steps: text with {{input}}, {{parameters.<name>}} and {{<stepId>}} filled in'),
  })
  .meta({ id: 'WorkflowStep' });

const WorkflowEdgeSchema = z
  .strictObject({
    from: z.string(),
    to: z.string(),
    when: z
      .strictObject({ contains: z.string().optional(), equals: z.string().optional(), not: z.boolean().optional() })
      .optional()
      .describe('Fires only when the source’s output (as text) contains or equals the value (`not` inverts); absent: always'),
  })
  .meta({ id: 'WorkflowEdge' });

const WorkflowRequestBodySchema = z
  .strictObject({
    steps: z.array(WorkflowStepSchema).min(1).max(100),
    edges: z.array(WorkflowEdgeSchema).max(500),
    description: z.string().max(2000).nullable().optional().describe('null or absent: none (GET answers null for none)'),
  })
  .meta({ id: 'WorkflowRequest' });

const WorkflowSchema = z
  .object({
    name: z.string(),
    version: z.number().int(),
    steps: z.array(WorkflowStepSchema),
    edges: z.array(WorkflowEdgeSchema),
    description: z.string().nullable(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime().describe('When this version was stored'),
  })
  .meta({ id: 'Workflow' });

const WorkflowGraphSchema = z
  .object({
    name: z.string(),
    version: z.number().int(),
    nodes: z.array(z.object({ id: z.string(), kind: z.enum(['agent', 'input', 'transform']), agent: z.string().optional() })),
    edges: z.array(WorkflowEdgeSchema),
    entries: z.array(z.string()).describe('The steps the first super step runs (no edge into them)'),
  })
  .meta({ id: 'WorkflowGraph' });

const WorkflowRunSchema = z
  .object({
    id: z
      .uuid()
      .describe('Also the id of its run (kind Workflow) in /api/runs: its tree holds the agent steps’ runs, its events the steps'),
    workflow: z.string(),
    version: z.number().int(),
    status: z
      .enum(['Queued', 'Running', 'AwaitingApproval', 'Completed', 'Failed', 'Canceled'])
      .describe('AwaitingApproval: paused for a human answer'),
    input: z.unknown(),
    parameters: z.record(z.string(), z.string()),
    superStep: z.number().int(),
    outputs: z.record(z.string(), z.unknown()).describe('Each step’s latest output, by step id'),
    output: z.unknown().describe('Once completed: the last super step’s output (by step id when it ran several)'),
    errorType: z.string().nullable(),
    errorMessage: z.string().nullable(),
    createdAt: z.iso.datetime(),
    completedAt: z.iso.datetime().nullable(),
  })
  .meta({ id: 'WorkflowRun' });

const CheckpointSchema = z
  .object({
    id: z.uuid(),
    superStep: z.number().int(),
    createdAt: z.iso.datetime(),
    state: z.object({ superStep: z.number().int(), active: z.array(z.string()), outputs: z.record(z.string(), z.unknown()) }),
  })
  .meta({ id: 'WorkflowCheckpoint' });

const RequestSchema = z
  .object({
    id: z.uuid(),
    stepId: z.string(),
    superStep: z.number().int(),
    prompt: z.string(),
    status: z.enum(['Pending', 'Answered']),
    answer: z.unknown(),
    answeredBy: z.string().nullable(),
    createdAt: z.iso.datetime(),
    answeredAt: z.iso.datetime().nullable(),
  })
  .meta({ id: 'WorkflowInputRequest' });

/** Free-form JSON handed on to the run executor: no deeper than a gRPC Value can carry. */
const FreeJson = (description: string) =>
  z
    .unknown()
    .refine((value) => jsonDepth(value, MAX_VALUE_DEPTH) <= MAX_VALUE_DEPTH, {
      message: `must not nest deeper than ${MAX_VALUE_DEPTH} levels`,
    })
    .describe(description);

const NameParams = z.object({ name: z.string() });
const RunParams = z.object({ id: z.string() });
const VersionQuery = z.object({ version: z.coerce.number().int().positive().optional() });

const workflowJson = (workflow: workflowPb.Workflow) => ({
  name: workflow.name,
  version: workflow.version,
  steps: workflow.steps ?? [],
  edges: workflow.edges ?? [],
  description: workflow.description ?? null,
  createdAt: workflow.createdAt!,
  updatedAt: workflow.updatedAt!,
});

const runJson = (run: workflowPb.WorkflowRun) => ({
  id: run.id,
  workflow: run.workflow,
  version: run.version,
  status: run.status,
  input: run.input ?? null,
  parameters: run.parameters,
  superStep: run.superStep,
  outputs: run.outputs ?? {},
  output: run.output ?? null,
  errorType: run.errorType ?? null,
  errorMessage: run.errorMessage ?? null,
  createdAt: run.createdAt!,
  completedAt: run.completedAt ?? null,
});

const requestJson = (request: workflowPb.WorkflowRequest) => ({
  id: request.id,
  stepId: request.stepId,
  superStep: request.superStep,
  prompt: request.prompt,
  status: request.status,
  answer: request.answer ?? null,
  answeredBy: request.answeredBy ?? null,
  createdAt: request.createdAt!,
  answeredAt: request.answeredAt ?? null,
});

/** API.md "Workflows": versioned graphs of steps, run in super steps by the run executor. */
export const workflowRoutes = [
  defineRoute({
    method: 'get',
    path: '/api/workflows',
    operationId: 'listWorkflows',
    summary: 'List workflows',
    description: 'Returns each workflow’s current version, by name.',
    tag: TAG,
    auth: { role: 'Reader', scope: 'WorkflowsRead' },
    responses: { 200: { description: 'Workflows', schema: WorkflowSchema.array() } },
    async handler({ caller }, { workflows }) {
      return { status: 200, body: (await workflows.listWorkflows({}, { caller })).workflows.map(workflowJson) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/workflows/{name}',
    operationId: 'getWorkflow',
    summary: 'Get a workflow',
    description: 'Returns the current version, or `?version=`. An unknown name or version is 404.',
    tag: TAG,
    auth: { role: 'Reader', scope: 'WorkflowsRead' },
    params: NameParams,
    query: VersionQuery,
    responses: { 200: { description: 'The workflow', schema: WorkflowSchema }, 404: problemResponse('No such workflow or version') },
    async handler({ params, query, caller }, { workflows }) {
      const { workflow } = await workflows.getWorkflow({ name: params.name, version: query.version }, { caller });
      return { status: 200, body: workflowJson(workflow!) };
    },
  }),
  defineRoute({
    method: 'put',
    path: '/api/workflows/{name}',
    operationId: 'putWorkflow',
    summary: 'Create a workflow or store its next version',
    description:
      'Stores the graph as version 1 (201) or as the next version (200). Refused with 400, storing nothing: an unknown agent, an edge or inputFrom naming no step, a repeated step id, no entry step, a step no entry reaches, a cycle with no edge out of it or no condition to leave it by.',
    tag: TAG,
    auth: { role: 'Admin', scope: 'WorkflowsAdmin' },
    params: NameParams,
    body: WorkflowRequestBodySchema,
    responses: {
      200: { description: 'Stored as the next version', schema: WorkflowSchema },
      201: { description: 'Created', schema: WorkflowSchema },
      400: problemResponse('An invalid name or graph, or an unknown agent'),
    },
    async handler({ params, body, caller }, { workflows }) {
      const { workflow, created } = await workflows.putWorkflow(
        { name: params.name, ...body, description: body.description ?? undefined },
        { caller },
      );
      return { status: created ? 201 : 200, body: workflowJson(workflow!) };
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/api/workflows/{name}',
    operationId: 'deleteWorkflow',
    summary: 'Delete a workflow',
    description: 'Deletes every version; runs already started go on with the graph they took. An unknown name is 404.',
    tag: TAG,
    auth: { role: 'Admin', scope: 'WorkflowsAdmin' },
    params: NameParams,
    responses: { 204: { description: 'Deleted' }, 404: problemResponse('No such workflow') },
    async handler({ params, caller }, { workflows }) {
      await workflows.deleteWorkflow({ name: params.name }, { caller });
      return { status: 204 };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/workflows/{name}/graph',
    operationId: 'getWorkflowGraph',
    summary: 'Get a workflow’s graph',
    description: 'The current version (or `?version=`) as nodes and edges, with the entry steps.',
    tag: TAG,
    auth: { role: 'Reader', scope: 'WorkflowsRead' },
    params: NameParams,
    query: VersionQuery,
    responses: { 200: { description: 'The graph', schema: WorkflowGraphSchema }, 404: problemResponse('No such workflow or version') },
    async handler({ params, query, caller }, { workflows }) {
      const { graph } = await workflows.getWorkflowGraph({ name: params.name, version: query.version }, { caller });
      return { status: 200, body: WorkflowGraphSchema.parse(graph) };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/workflows/{name}/run',
    operationId: 'runWorkflow',
    summary: 'Run a workflow',
    description:
      'Queues a run of the current version (a run of kind Workflow, admitted by quota for each agent it names); any run executor executes it in super steps, a checkpoint after each. 202 names it in Location.',
    tag: TAG,
    auth: { role: 'Operator', scope: 'RunsWrite' },
    params: NameParams,
    body: z
      .strictObject({
        input: FreeJson('What the entry steps are given: text or any JSON value (up to 256 KiB, 20 levels deep)'),
        parameters: z
          .record(z.string().max(64), z.string().max(4096))
          .optional()
          .describe(
            'Read by transform templates as {{parameters.<name>}}, and given to each agent step whose agent declares them (up to 50)',
          ),
      })
      .meta({ id: 'WorkflowRunRequest' }),
    responses: {
      202: {
        description: 'Queued; follow it at Location',
        schema: z.object({ workflowRunId: z.uuid() }),
        headers: { Location: locationHeader('The workflow run, {prefix}/api/workflow-runs/{workflowRunId}') },
      },
      400: problemResponse('No input, or an input too large'),
      404: problemResponse('No such workflow'),
      429: problemResponse('A quota rule is used up'),
    },
    async handler({ params, body, caller }, { workflows, config }) {
      const { workflowRunId } = await workflows.startWorkflowRun(
        { name: params.name, input: body.input, parameters: body.parameters ?? {} },
        { caller },
      );
      return {
        status: 202,
        body: { workflowRunId },
        headers: { Location: `${config.Hangar.Api.Prefix}/api/workflow-runs/${workflowRunId}` },
      };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/workflow-runs/{id}',
    operationId: 'getWorkflowRun',
    summary: 'Get a workflow run',
    description:
      'Its status (a RunStatus), super step, each step’s output and, once completed, its output. Cancel it at /api/runs/{id}/cancel.',
    tag: TAG,
    auth: { role: 'Reader', scope: 'WorkflowsRead' },
    params: RunParams,
    responses: { 200: { description: 'The workflow run', schema: WorkflowRunSchema }, 404: problemResponse('No such workflow run') },
    async handler({ params, caller }, { workflows }) {
      return { status: 200, body: runJson((await workflows.getWorkflowRun({ id: params.id }, { caller })).run!) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/workflow-runs/{id}/checkpoints',
    operationId: 'listWorkflowCheckpoints',
    summary: 'List a workflow run’s checkpoints',
    description:
      'One per finished super step (Workflows:EnableCheckpointing), oldest first: the steps the next one runs and every output so far.',
    tag: TAG,
    auth: { role: 'Reader', scope: 'WorkflowsRead' },
    params: RunParams,
    responses: { 200: { description: 'Checkpoints', schema: CheckpointSchema.array() }, 404: problemResponse('No such workflow run') },
    async handler({ params, caller }, { workflows }) {
      const { checkpoints } = await workflows.listWorkflowCheckpoints({ id: params.id }, { caller });
      return {
        status: 200,
        body: checkpoints.map((checkpoint) => ({
          id: checkpoint.id,
          superStep: checkpoint.superStep,
          createdAt: checkpoint.createdAt!,
          state: CheckpointSchema.shape.state.parse(checkpoint.state),
        })),
      };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/workflow-runs/{id}/requests',
    operationId: 'listWorkflowRequests',
    summary: 'List a workflow run’s human-input requests',
    description: 'Every question its input steps asked, pending or answered, oldest first.',
    tag: TAG,
    auth: { role: 'Reader', scope: 'WorkflowsRead' },
    params: RunParams,
    responses: { 200: { description: 'Requests', schema: RequestSchema.array() }, 404: problemResponse('No such workflow run') },
    async handler({ params, caller }, { workflows }) {
      return { status: 200, body: (await workflows.listWorkflowRequests({ id: params.id }, { caller })).requests.map(requestJson) };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/workflow-runs/{id}/requests/{requestId}',
    operationId: 'answerWorkflowRequest',
    summary: 'Answer a human-input request',
    description:
      'The answer becomes the input step’s output; once every question of the super step is answered the run goes on, on whichever instance leases it. An answered request is 409.',
    tag: TAG,
    auth: { role: 'Operator', scope: 'RunsWrite' },
    params: z.object({ id: z.string(), requestId: z.string() }),
    body: z.strictObject({ answer: FreeJson('Text or any JSON value (up to 64 KiB, 20 levels deep)') }).meta({ id: 'WorkflowAnswer' }),
    responses: {
      200: { description: 'Answered', schema: RequestSchema },
      400: problemResponse('No answer, or one too large'),
      404: problemResponse('No such workflow run or request'),
      409: problemResponse('Answered already'),
    },
    async handler({ params, body, caller }, { workflows }) {
      const { request } = await workflows.answerWorkflowRequest(
        { id: params.id, requestId: params.requestId, answer: body.answer },
        { caller },
      );
      return { status: 200, body: requestJson(request!) };
    },
  }),
];
