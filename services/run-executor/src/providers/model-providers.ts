import { createAnthropic } from '@ai-sdk/anthropic';
import { createAzure } from '@ai-sdk/azure';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModelV2, LanguageModelV2StreamPart } from '@ai-sdk/provider';
import type { HangarConfig, ProviderConfig } from '@hangar/platform';
import type { ConcurrencyLimiter } from './circuit-breaker.js';
import { createDemoModel } from './demo-model.js';

export interface ResolvedModel {
  provider: string;
  model: string;
  languageModel: LanguageModelV2;
  settings: ProviderConfig;
}

/**
 * Builds AI SDK models from `Providers:{name}`; one client per provider, one model object per
 * model. Every model call takes a slot of its provider (`ModelConcurrency`) for as long as the call
 * runs: tools, child runs and approvals between calls hold none.
 */
export function createModelResolver(config: HangarConfig, concurrency: ConcurrencyLimiter) {
  const cache = new Map<string, LanguageModelV2>();

  function build(name: string, settings: ProviderConfig, model: string): LanguageModelV2 {
    const apiKey = settings.ApiKey ?? undefined;
    const baseURL = settings.Endpoint ?? undefined;
    switch (settings.Kind) {
      case 'OpenAI':
        return createOpenAI({ apiKey, baseURL }).chat(model);
      case 'Anthropic':
        return createAnthropic({ apiKey, baseURL })(model);
      case 'AzureOpenAI':
        return createAzure({ apiKey, baseURL: azureV1Base(settings.Endpoint!) })(model || settings.DefaultDeployment || '');
      case 'OpenAICompatible':
        // EnableResponsesSurface: the endpoint serves OpenAI's Responses API instead of chat completions.
        return settings.EnableResponsesSurface
          ? createOpenAI({ name, apiKey, baseURL: settings.Endpoint! }).responses(model)
          : createOpenAICompatible({ name, baseURL: settings.Endpoint!, apiKey, includeUsage: true })(model);
      case 'Demo':
        return createDemoModel(model);
    }
  }

  return {
    /** Undefined when the provider is not configured (the agent names a provider that went away). */
    resolve(provider: string, model: string): ResolvedModel | undefined {
      const settings = config.Providers[provider];
      if (!settings) return undefined;
      const key = `${provider}\u0000${model}`;
      let languageModel = cache.get(key);
      if (!languageModel) {
        languageModel = limitConcurrency(build(provider, settings, model), () => concurrency.acquire(provider));
        cache.set(key, languageModel);
      }
      return { provider, model, languageModel, settings };
    },
  };
}

export type ModelResolver = ReturnType<typeof createModelResolver>;

/**
 * Azure OpenAI's v1 surface (`{resource}/openai/v1/chat/completions`, `api-key` header, no dated
 * api-version): `Endpoint` may be the resource URL, its `/openai` path or the `/openai/v1` base.
 */
export function azureV1Base(endpoint: string): string {
  const base = endpoint.replace(/\/+$/, '');
  if (/\/openai\/v1$/i.test(base)) return base;
  return /\/openai$/i.test(base) ? `${base}/v1` : `${base}/openai/v1`;
}

/** The model with each call inside a slot from `acquire`; a streamed call keeps it until its stream ends. */
function limitConcurrency(model: LanguageModelV2, acquire: () => Promise<() => void>): LanguageModelV2 {
  // Named, not spread: provider models are class instances whose properties are partly getters.
  return {
    specificationVersion: model.specificationVersion,
    provider: model.provider,
    modelId: model.modelId,
    get supportedUrls() {
      return model.supportedUrls;
    },
    async doGenerate(options) {
      const release = await acquire();
      try {
        return await model.doGenerate(options);
      } finally {
        release();
      }
    },
    async doStream(options) {
      const release = await acquire();
      try {
        const result = await model.doStream(options);
        const reader = result.stream.getReader();
        const stream = new ReadableStream<LanguageModelV2StreamPart>({
          async pull(controller) {
            try {
              const { done, value } = await reader.read();
              if (done) {
                release();
                controller.close();
              } else {
                controller.enqueue(value);
              }
            } catch (error) {
              release();
              controller.error(error);
            }
          },
          async cancel(reason) {
            release();
            await reader.cancel(reason);
          },
        });
        return { ...result, stream };
      } catch (error) {
        release();
        throw error;
      }
    },
  };
}
