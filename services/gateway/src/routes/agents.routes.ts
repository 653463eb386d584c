import {
  AgentDefinitionInputSchema,
  definitionToProto,
  jsonPath,
  normalizeDefinition,
  originName,
  recordFromProto,
  reportFromProto,
  type AgentDefinitionRecord,
  type registryPb,
} from '@hangar/contracts';
import { validationError } from '@hangar/platform';
import {
  AgentDescriptorSchema,
  AgentDetailSchema,
  AgentNameParams,
  DiffParams,
  DiffSchema,
  EstimateSchema,
  locationHeader,
  problemResponse,
  RollbackRequestSchema,
  StoredDefinitionSchema,
  ValidationReportSchema,
} from '../api.schemas.js';
import { defineRoute } from '../http/route.js';
import { RunRequestSchema, startRunRequest } from './runs/runs.schemas.js';

const TAG = 'Agents';

/** API.md: a stored definition is the request fields plus `version`, `createdAt`, `createdBy`. */
function storedDefinitionJson(record: AgentDefinitionRecord) {
  const { definition, version, createdAt, createdBy } = record;
  return version === undefined ? definition : { ...definition, version, createdAt, createdBy };
}

const recordJson = (message: registryPb.AgentDefinitionRecord | undefined) => storedDefinitionJson(recordFromProto(message));

const descriptorJson = (agent: registryPb.AgentDescriptor) => ({
  name: agent.name,
  description: agent.description ?? null,
  origin: originName(agent.origin),
  model: agent.model ? { provider: agent.model.provider, model: agent.model.model } : null,
  version: agent.version ?? null,
  updatedAt: agent.updatedAt ?? null,
});

const agentPath = (prefix: string, name: string) => `${prefix}/api/agents/${encodeURIComponent(name)}`;

/** The stored conversation an estimated run would continue; a new session has none yet. */
export const agentRoutes = [
  defineRoute({
    method: 'get',
    path: '/api/agents',
    operationId: 'listAgents',
    summary: 'List agents',
    description:
      'Lists code-defined and database agents, merged and ordered by name; on equal names the code-defined agent wins. Each entry is a descriptor (model, version, last update), not the full definition.',
    tag: TAG,
    auth: { role: 'Reader', scope: 'AgentsRead' },
    responses: { 200: { description: 'Agent descriptors', schema: AgentDescriptorSchema.array() } },
    async handler({ caller }, { registry }) {
      const { agents } = await registry.listAgents({}, { caller });
      return { status: 200, body: agents.map(descriptorJson) };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/agents',
    operationId: 'createAgent',
    summary: 'Create an agent',
    description:
      'Stores a new database agent as version 1 and answers 201 with Location naming it. A definition that is not valid is 400 naming the failing paths; a name used by a stored or a code-defined agent is 409.',
    tag: TAG,
    auth: { role: 'Admin', scope: 'AgentsAdmin' },
    body: AgentDefinitionInputSchema,
    responses: {
      201: {
        description: 'The stored definition',
        schema: StoredDefinitionSchema,
        headers: { Location: locationHeader('The new agent, {prefix}/api/agents/{name}') },
      },
      409: problemResponse('The name is used by a stored or a code-defined agent'),
    },
    async handler({ body, caller }, { registry, config }) {
      const { agent } = await registry.createAgent({ definition: definitionToProto(normalizeDefinition(body)) }, { caller });
      const stored = recordJson(agent);
      return { status: 201, body: stored, headers: { Location: agentPath(config.Hangar.Api.Prefix, body.name) } };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/agents/validate',
    operationId: 'validateAgent',
    summary: 'Validate an agent definition',
    description:
      'Compiles a definition without saving it and without contacting a model provider. An invalid definition is not an HTTP error: the report lists each problem with its code (model_not_found, tool_not_found, call_graph_cycle, …) and path.',
    tag: TAG,
    auth: { role: 'Operator', scope: 'AgentsAdmin' },
    rawBody: true,
    responses: {
      200: { description: 'The validation report (an invalid definition is not an HTTP error)', schema: ValidationReportSchema },
    },
    async handler({ body, caller }, { registry }) {
      const json = body as Record<string, unknown>;
      if (!json || typeof json !== 'object' || Array.isArray(json)) {
        throw validationError('the body must be a JSON object', [{ path: 'body', message: 'must be an object' }]);
      }
      const missing = (['name', 'model'] as const).filter((field) => json[field] === undefined || json[field] === null);
      if (missing.length) {
        throw validationError(
          `required fields are missing: ${missing.join(', ')}`,
          missing.map((path) => ({ path, message: 'is required' })),
        );
      }
      const parsed = AgentDefinitionInputSchema.safeParse(json);
      if (!parsed.success) {
        return {
          status: 200,
          body: {
            valid: false,
            messages: parsed.error.issues.map((issue) => ({
              severity: 'Error',
              code: 'invalid_field',
              message: issue.message,
              path: jsonPath(issue.path),
            })),
          },
        };
      }
      const report = await registry.validateAgent({ definition: definitionToProto(normalizeDefinition(parsed.data)) }, { caller });
      return { status: 200, body: reportFromProto(report) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/agents/{name}',
    operationId: 'getAgent',
    summary: 'Get an agent',
    description:
      'Returns an agent’s definition, whether it is editable (database agents are, code-defined ones are not) and its catalog summary of model, tools, skills and sub-agents. An unknown name is 404.',
    tag: TAG,
    auth: { role: 'Reader', scope: 'AgentsRead' },
    params: AgentNameParams,
    responses: { 200: { description: 'Agent detail', schema: AgentDetailSchema }, 404: problemResponse('No such agent') },
    async handler({ params, caller }, { registry }) {
      const detail = await registry.getAgent({ name: params.name }, { caller });
      const catalog = detail.catalog;
      return {
        status: 200,
        body: {
          name: detail.name,
          origin: originName(detail.origin),
          isEditable: detail.isEditable,
          definition: detail.definition ? recordJson(detail.definition) : null,
          factoryInstructions: detail.factoryInstructions ?? null,
          catalog: {
            description: catalog?.description ?? null,
            model: catalog?.model ? { provider: catalog.model.provider, model: catalog.model.model } : null,
            tools: catalog?.tools ?? [],
            skills: catalog?.skills ?? [],
            agents: catalog?.agents ?? [],
          },
        },
      };
    },
  }),
  defineRoute({
    method: 'put',
    path: '/api/agents/{name}',
    operationId: 'updateAgent',
    summary: 'Update an agent',
    description:
      'Saves the definition as a new version of a database agent; earlier versions are kept for rollback and diff. A code-defined agent cannot be changed (409); an unknown name is 404.',
    tag: TAG,
    auth: { role: 'Admin', scope: 'AgentsAdmin' },
    params: AgentNameParams,
    body: AgentDefinitionInputSchema,
    responses: {
      200: { description: 'The new version', schema: StoredDefinitionSchema },
      404: problemResponse('No stored agent of that name'),
      409: problemResponse('The name belongs to a code-defined agent'),
    },
    async handler({ params, body, caller }, { registry }) {
      const { agent } = await registry.updateAgent(
        { name: params.name, definition: definitionToProto(normalizeDefinition(body)) },
        { caller },
      );
      return { status: 200, body: recordJson(agent) };
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/api/agents/{name}',
    operationId: 'deleteAgent',
    summary: 'Delete an agent',
    description:
      'Deletes a database agent with all its versions; its recorded runs are kept. A code-defined agent cannot be deleted (409).',
    tag: TAG,
    auth: { role: 'Admin', scope: 'AgentsAdmin' },
    params: AgentNameParams,
    responses: {
      204: { description: 'Deleted' },
      404: problemResponse('No stored agent of that name'),
      409: problemResponse('The name belongs to a code-defined agent'),
    },
    async handler({ params, caller }, { registry }) {
      await registry.deleteAgent({ name: params.name }, { caller });
      return { status: 204 };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/agents/{name}/versions',
    operationId: 'listAgentVersions',
    summary: 'List agent versions',
    description:
      'Returns every stored version of a database agent, newest first, each a full snapshot of the definition. Code-defined agents have no versions (404).',
    tag: TAG,
    auth: { role: 'Reader', scope: 'AgentsRead' },
    params: AgentNameParams,
    responses: {
      200: { description: 'Versions, newest first', schema: StoredDefinitionSchema.array() },
      404: problemResponse('No stored agent of that name (code agents have no versions)'),
    },
    async handler({ params, caller }, { registry }) {
      const { versions } = await registry.listAgentVersions({ name: params.name }, { caller });
      return { status: 200, body: versions.map(recordJson) };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/agents/{name}/rollback',
    operationId: 'rollbackAgent',
    summary: 'Roll back an agent',
    description:
      'Appends the content of an earlier version as a new version, so history is never rewritten. An unknown agent or version is 404; a code-defined agent is 409.',
    tag: TAG,
    auth: { role: 'Admin', scope: 'AgentsAdmin' },
    params: AgentNameParams,
    body: RollbackRequestSchema,
    responses: {
      200: { description: 'The new version', schema: StoredDefinitionSchema },
      404: problemResponse('No such agent or version'),
      409: problemResponse('The name belongs to a code-defined agent'),
    },
    async handler({ params, body, caller }, { registry }) {
      const { agent } = await registry.rollbackAgent({ name: params.name, version: body.version }, { caller });
      return { status: 200, body: recordJson(agent) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/agents/{name}/versions/{a}/diff/{b}',
    operationId: 'diffAgentVersions',
    summary: 'Compare two agent versions',
    description:
      'Returns two stored versions side by side: `left` is version {a} and `right` is version {b}, exactly as given in the path. The server does no diffing; a missing version is 404.',
    tag: TAG,
    auth: { role: 'Reader', scope: 'AgentsRead' },
    params: DiffParams,
    responses: {
      200: { description: 'Both snapshots', schema: DiffSchema },
      404: problemResponse('No such agent, or a named version is missing'),
    },
    async handler({ params, caller }, { registry }) {
      const { left, right } = await registry.diffAgentVersions(
        { name: params.name, leftVersion: params.a, rightVersion: params.b },
        { caller },
      );
      return { status: 200, body: { left: recordJson(left), right: recordJson(right) } };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/agents/{name}/estimate',
    operationId: 'estimateRun',
    summary: 'Estimate a run’s prompt size',
    description:
      'Runs the numbers of the pre-flight context-window check for a run request with the reference tokenizer, without contacting a provider, whether or not the check is switched on. wouldBeRejected tells whether a run would be refused with context_window_exceeded.',
    tag: TAG,
    auth: { role: 'Reader', scope: 'RunsRead' },
    params: AgentNameParams,
    body: RunRequestSchema,
    responses: { 200: { description: 'Context window estimate', schema: EstimateSchema }, 404: problemResponse('Unknown agent') },
    async handler({ params, body, caller }, { runs }) {
      // The run executor builds the prompt exactly as a run's pre-flight check does.
      const estimate = await runs.estimateRunPrompt({ run: startRunRequest(params.name, body, false) }, { caller });
      return {
        status: 200,
        body: {
          ...estimate,
          contextWindowTokens: estimate.contextWindowTokens ?? null,
          allowedPromptTokens: estimate.allowedPromptTokens ?? null,
        },
      };
    },
  }),
];
