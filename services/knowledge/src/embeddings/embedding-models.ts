import { createAzure } from '@ai-sdk/azure';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { EmbeddingModelV2 } from '@ai-sdk/provider';
import { azureV1Base, HangarError, type HangarConfig } from '@hangar/platform';
import { embedMany } from 'ai';
import { createDemoEmbeddingModel } from './demo-embeddings.js';

/** Turns texts into vectors of `Knowledge:Dimensions` numbers, in order. */
export type EmbedTexts = (provider: string, model: string, texts: string[], signal?: AbortSignal) => Promise<number[][]>;

/**
 * Embedding models of the operator's providers (`Providers:{name}`), one object per provider and
 * model: OpenAI, Azure OpenAI and OpenAI-compatible endpoints through the AI SDK (asked for
 * `Knowledge:Dimensions` numbers, which text-embedding-3 models honour), and the offline Demo
 * provider's deterministic vectors. Anthropic makes no embeddings.
 */
export function createEmbeddingModels(config: Pick<HangarConfig, 'Providers' | 'Knowledge'>, fetch: typeof globalThis.fetch) {
  const dimensions = config.Knowledge.Dimensions;
  const cache = new Map<string, EmbeddingModelV2<string>>();

  /** Why `provider` cannot embed, or undefined when it can. */
  function refusal(provider: string): string | undefined {
    const settings = config.Providers[provider];
    if (!settings) return `no provider ${provider} is configured (Providers:${provider})`;
    if (settings.Kind === 'Anthropic') return `provider ${provider} is of kind Anthropic, which makes no embeddings`;
    return undefined;
  }

  function modelOf(provider: string, model: string): EmbeddingModelV2<string> {
    const reason = refusal(provider);
    if (reason) throw new HangarError('unavailable', `embeddings cannot be made: ${reason}`);
    const key = `${provider}\u0000${model}`;
    let embeddingModel = cache.get(key);
    if (!embeddingModel) {
      const settings = config.Providers[provider];
      const apiKey = settings.ApiKey ?? undefined;
      switch (settings.Kind) {
        case 'OpenAI':
          embeddingModel = createOpenAI({ apiKey, baseURL: settings.Endpoint ?? undefined, fetch }).textEmbeddingModel(model);
          break;
        case 'AzureOpenAI':
          embeddingModel = createAzure({ apiKey, baseURL: azureV1Base(settings.Endpoint!), fetch }).textEmbeddingModel(
            model || settings.DefaultDeployment || '',
          );
          break;
        case 'OpenAICompatible':
          embeddingModel = createOpenAICompatible({ name: provider, baseURL: settings.Endpoint!, apiKey, fetch }).textEmbeddingModel(model);
          break;
        default:
          embeddingModel = createDemoEmbeddingModel(model, dimensions);
      }
      cache.set(key, embeddingModel);
    }
    return embeddingModel;
  }

  const embed: EmbedTexts = async (provider, model, texts, signal) => {
    const settings = config.Providers[provider];
    let embeddings: number[][];
    try {
      ({ embeddings } = await embedMany({
        model: modelOf(provider, model),
        values: texts,
        abortSignal: signal,
        maxRetries: settings?.MaxRetries ?? 2,
        // OpenAI's and compatible endpoints' name for the output size; a model without it ignores it.
        providerOptions: { openai: { dimensions }, [provider]: { dimensions } },
      }));
    } catch (error) {
      if (error instanceof HangarError) throw error;
      throw new HangarError('unavailable', `the embedding model ${provider}/${model} failed: ${(error as Error).message}`);
    }
    const wrong = embeddings.find((embedding) => embedding.length !== dimensions);
    if (wrong) {
      throw new HangarError(
        'unavailable',
        `the embedding model ${provider}/${model} returned ${wrong.length} numbers, Knowledge:Dimensions is ${dimensions}`,
      );
    }
    return embeddings;
  };

  return { refusal, embed };
}

export type EmbeddingModels = ReturnType<typeof createEmbeddingModels>;
