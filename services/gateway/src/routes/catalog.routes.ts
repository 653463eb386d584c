import { CatalogModelSchema, CatalogToolSchema } from '../api.schemas.js';
import { defineRoute } from '../http/route.js';

export const catalogRoutes = [
  defineRoute({
    method: 'get',
    path: '/api/models',
    operationId: 'listModels',
    summary: 'The model catalog from Providers:* configuration (informative: unlisted models are accepted)',
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
    summary: 'The tool catalog agents may reference',
    tag: 'Catalog',
    auth: { role: 'Reader', scope: 'AgentsRead' },
    responses: { 200: { description: 'Tools', schema: CatalogToolSchema.array() } },
    async handler({ caller }, { registry }) {
      const { tools } = await registry.listTools({}, { caller });
      return { status: 200, body: tools.map((tool) => ({ ...tool, inputSchema: tool.inputSchema ?? {} })) };
    },
  }),
];
