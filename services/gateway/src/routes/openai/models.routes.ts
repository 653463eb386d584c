import type { registryPb } from '@hangar/contracts';
import type { Caller } from '@hangar/platform';
import { z } from 'zod';
import type { GatewayContext } from '../../gateway.context.js';
import { defineRoute } from '../../http/route.js';
import { epochSeconds, modelNotFound } from './openai-runs.js';
import { ModelListSchema, ModelSchema, OpenAIErrorSchema, openAIErrorResponse } from './openai.schemas.js';

const TAG = 'OpenAI compatible';

/** `GET /v1/models`: the agents the caller may run, as OpenAI models (`id` = agent name). */

const modelJson = (agent: registryPb.AgentDescriptor) => ({
  id: agent.name,
  object: 'model',
  created: epochSeconds(agent.updatedAt),
  owned_by: 'hangar',
});

/** Runnable agents (a factory-built code agent has no model yet) the run-authorization handler lets the caller start. */
async function runnableAgents(context: GatewayContext, caller: Caller) {
  const { agents } = await context.registry.listAgents({}, { caller });
  const runnable = agents.filter((agent) => agent.model !== undefined);
  if (!context.authorizeRun) return runnable;
  const allowed = await Promise.all(
    runnable.map((agent) => context.authorizeRun!({ operation: 'runs.start', ...caller, resourceId: agent.name })),
  );
  return runnable.filter((_, index) => allowed[index]);
}

export const modelRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/models',
    operationId: 'listOpenAIModels',
    summary: 'Every agent the caller may run, as an OpenAI model list',
    description:
      'Lists every agent the caller may run (runnable, and allowed by the run-authorization handler) as an OpenAI model whose id is the agent name.',
    errorBody: OpenAIErrorSchema,
    tag: TAG,
    auth: { role: 'Operator', scope: 'RunsWrite' },
    responses: { 200: { description: 'The model list', schema: ModelListSchema } },
    async handler({ caller }, context) {
      return { status: 200, body: { object: 'list', data: (await runnableAgents(context, caller)).map(modelJson) } };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/models/{model}',
    operationId: 'getOpenAIModel',
    summary: 'One agent the caller may run, as an OpenAI model',
    description: 'One agent the caller may run, as an OpenAI model; an unknown or not runnable agent is 404 model_not_found.',
    errorBody: OpenAIErrorSchema,
    tag: TAG,
    auth: { role: 'Operator', scope: 'RunsWrite' },
    params: z.object({ model: z.string().describe('An agent name') }),
    responses: { 200: { description: 'The model', schema: ModelSchema }, 404: openAIErrorResponse('Unknown agent: model_not_found') },
    async handler({ params, caller }, context) {
      const agent = (await runnableAgents(context, caller)).find((candidate) => candidate.name === params.model);
      if (!agent) throw modelNotFound(params.model);
      return { status: 200, body: modelJson(agent) };
    },
  }),
];
