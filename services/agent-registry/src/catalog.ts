import { IMAGE_TOOL_NAME } from '@hangar/contracts';
import type { HangarConfig } from '@hangar/platform';

export interface CatalogModel {
  provider: string;
  providerKind: string;
  model: string;
  isDefault: boolean;
  contextWindowTokens: number | null;
  maxOutputTokens: number | null;
}

export interface CatalogTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  source: 'builtin' | 'mcp';
}

/** Tools every agent may name; the run engine executes them. */
export const BUILT_IN_TOOLS: CatalogTool[] = [
  {
    name: 'clock',
    description: 'Returns the current date and time as ISO 8601, in UTC or in the given IANA time zone.',
    inputSchema: {
      type: 'object',
      properties: { timeZone: { type: 'string', description: 'IANA time zone, e.g. Europe/Berlin; default UTC' } },
      additionalProperties: false,
    },
    source: 'builtin',
  },
];

/** `generate_image`, while Images:Enabled: the run executor draws, stores and prices the images. */
export const imageTool = (maxImages: number): CatalogTool => ({
  name: IMAGE_TOOL_NAME,
  description: 'Draws images for a prompt; they are stored as attachments and their ids returned.',
  inputSchema: {
    type: 'object',
    properties: {
      prompt: { type: 'string', description: 'What to draw' },
      size: { type: 'string', description: "The image model's size, e.g. 1024x1024" },
      n: { type: 'integer', minimum: 1, maximum: maxImages, description: 'How many images; default 1' },
    },
    required: ['prompt'],
    additionalProperties: false,
  },
  source: 'builtin',
});

/**
 * The model catalog comes from `Providers:*`. It is informative: a provider must be configured
 * for an agent to name it, but an unlisted model of a configured provider is accepted.
 */
export function createCatalog(config: HangarConfig) {
  const providers = config.Providers;
  const models: CatalogModel[] = Object.entries(providers).flatMap(([provider, settings]) => {
    const names = new Set(Object.keys(settings.Models));
    if (settings.DefaultModel) names.add(settings.DefaultModel);
    return [...names].sort().map((model) => ({
      provider,
      providerKind: settings.Kind,
      model,
      isDefault: model === settings.DefaultModel,
      contextWindowTokens: settings.Models[model]?.ContextWindowTokens ?? null,
      maxOutputTokens: settings.Models[model]?.MaxOutputTokens ?? settings.DefaultMaxOutputTokens ?? null,
    }));
  });
  // Image generation adds its tool (SPEC: "enabling adds an image-generation tool").
  const builtIn = config.Images.Enabled ? [...BUILT_IN_TOOLS, imageTool(config.Images.MaxImagesPerRequest)] : BUILT_IN_TOOLS;
  const tools = new Map(builtIn.map((tool) => [tool.name, tool]));

  return {
    models: () => models,
    tools: () => [...tools.values()],
    hasProvider: (provider: string) => Object.hasOwn(providers, provider),
    /** Listed models of a provider; empty means the provider lists none (anything goes). */
    listedModels: (provider: string) => Object.keys(providers[provider]?.Models ?? {}),
    hasTool: (name: string) => tools.has(name),
    /** `Providers:{provider}:Models:{model}:ContextWindowTokens`, null when the model is not in the catalog. */
    contextWindow: (provider: string, model: string) => providers[provider]?.Models[model]?.ContextWindowTokens ?? null,
  };
}

export type Catalog = ReturnType<typeof createCatalog>;
