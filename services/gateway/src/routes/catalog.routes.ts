import { CatalogModelSchema, CatalogToolSchema } from '../api.schemas.js';
import { defineRoute } from '../http/route.js';

export const catalogRoutes = [
  defineRoute({
    method: 'get',
    path: '/api/models',
    operationId: 'listModels',
    summary: 'List models',
    description:
      'Returns the model catalog built from the Providers:* configuration. It is informative: a model that is not listed is still accepted in an agent definition.',
    tag: 'Catalog',
    auth: { role: 'Reader', scope: 'AgentsRead' },
    responses: { 200: { description: 'Configured models', schema: CatalogModelSchema.array() } },
    async handler({ caller }, { registry }) {
      const { models } = await registry.listModels({}, { caller });
      return {
        status: 200,
        body: models.map((model) => ({
          ...model,
          contextWindowTokens: model.contextWindowTokens ?? null,
          maxOutputTokens: model.maxOutputTokens ?? null,
        })),
      };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/tools',
    operationId: 'listTools',
    summary: 'List tools',
    description: 'Returns the tools agents may reference in their definitions, with each tool’s input schema and source.',
    tag: 'Catalog',
    auth: { role: 'Reader', scope: 'AgentsRead' },
    responses: { 200: { description: 'Tools', schema: CatalogToolSchema.array() } },
    async handler({ caller }, { registry }) {
      const { tools } = await registry.listTools({}, { caller });
      return { status: 200, body: tools.map((tool) => ({ ...tool, inputSchema: tool.inputSchema ?? {} })) };
    },
  }),
];
