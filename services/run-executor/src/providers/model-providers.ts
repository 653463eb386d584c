import { createAnthropic } from '@ai-sdk/anthropic';
import { createAzure } from '@ai-sdk/azure';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModelV2, LanguageModelV2StreamPart } from '@ai-sdk/provider';
import { azureV1Base, namedSecret, type HangarConfig, type ProviderConfig } from '@hangar/platform';
import type { TenantProvider } from '../clients/ports.js';
import type { ConcurrencyLimiter } from './circuit-breaker.js';
import { createDemoModel } from './demo-model.js';
import { joiningTextChunks } from './joined-text-chunks.js';

export interface ResolvedModel {
  provider: string;
  model: string;
  languageModel: LanguageModelV2;
  settings: ProviderConfig;
  /** Whose circuit a failure counts against: the global provider's, or the tenant's own. */
  circuit: string;
}

/** The run's tenant and its own provider bindings, which replace the global ones of the same name. */
export interface TenantBindings {
  tenantId: string;
  providers: Record<string, TenantProvider>;
}

/**
 * Builds AI SDK models from `Providers:{name}`, or from a tenant's own binding of that name (its
 * kind, endpoint and the API key its configuration key NAME holds; the global provider's other
 * settings, if any, still apply); one model object per model and binding. Every model call takes a
 * slot of its provider (`ModelConcurrency`; a tenant's own provider has slots of its own) for as
 * long as the call runs: tools, child runs and approvals between calls hold none.
 *
 * A tenant's binding sends every request through `fetches.tenant`, the egress-guarded fetch (a private
 * target is refused on every connection unless `Egress:AllowPrivateNetworkTargets`). The global
 * providers are the operator's configuration, which may rightly name a model on a private network:
 * `fetches.operator` (createDirectFetch) guards nothing.
 */
export function createModelResolver(
  config: HangarConfig,
  concurrency: ConcurrencyLimiter,
  fetches: { tenant: typeof globalThis.fetch; operator: typeof globalThis.fetch },
) {
  const cache = new Map<string, LanguageModelV2>();

  function build(name: string, settings: ProviderConfig, model: string, fetch: typeof globalThis.fetch): LanguageModelV2 {
    const apiKey = settings.ApiKey ?? undefined;
    const baseURL = settings.Endpoint ?? undefined;
    // Chat-completions streams reach the AI SDK with the text chunks of each read joined.
    const chatFetch = joiningTextChunks(fetch);
    switch (settings.Kind) {
      case 'OpenAI':
        return createOpenAI({ apiKey, baseURL, fetch: chatFetch }).chat(model);
      case 'Anthropic':
        return createAnthropic({ apiKey, baseURL, fetch })(model);
      case 'AzureOpenAI':
        return createAzure({ apiKey, baseURL: azureV1Base(settings.Endpoint!), fetch: chatFetch })(
          model || settings.DefaultDeployment || '',
        );
      case 'OpenAICompatible':
        // EnableResponsesSurface: the endpoint serves OpenAI's Responses API instead of chat completions.
        return settings.EnableResponsesSurface
          ? createOpenAI({ name, apiKey, baseURL: settings.Endpoint!, fetch }).responses(model)
          : createOpenAICompatible({ name, baseURL: settings.Endpoint!, apiKey, includeUsage: true, fetch: chatFetch })(model);
      case 'Demo':
        return createDemoModel(model);
    }
  }

  function cached(key: string, slots: string, make: () => LanguageModelV2): LanguageModelV2 {
    let languageModel = cache.get(key);
    if (!languageModel) {
      languageModel = limitConcurrency(make(), () => concurrency.acquire(slots));
      cache.set(key, languageModel);
    }
    return languageModel;
  }

  return {
    /** Undefined when the provider is not configured (the agent names a provider that went away, or a key that is not set). */
    resolve(provider: string, model: string, tenant?: TenantBindings): ResolvedModel | undefined {
      const own = tenant?.providers[provider];
      if (own) {
        const apiKey = providerKey(config, own.apiKeyKey);
        if (apiKey === undefined) return undefined;
        const settings: ProviderConfig = {
          ...(config.Providers[provider] ?? BARE_PROVIDER),
          Kind: own.kind as ProviderConfig['Kind'],
          Endpoint: own.endpoint,
          ApiKey: apiKey,
        };
        // The tenant's own upstream: its own concurrency slots and circuit, never the global provider's.
        const slots = `${tenant!.tenantId}:${provider}`;
        const key = `${slots}\u0000${own.kind}\u0000${own.endpoint}\u0000${own.apiKeyKey}\u0000${model}`;
        return {
          provider,
          model,
          settings,
          circuit: `${slots}/${model}`,
          languageModel: cached(key, slots, () => build(provider, settings, model, fetches.tenant)),
        };
      }
      const settings = config.Providers[provider];
      if (!settings) return undefined;
      const languageModel = cached(`${provider}\u0000${model}`, provider, () => build(provider, settings, model, fetches.operator));
      return { provider, model, languageModel, settings, circuit: `${provider}/${model}` };
    },
  };
}

export type ModelResolver = ReturnType<typeof createModelResolver>;

/** A provider with nothing but its identity: what a tenant's binding starts from when no global provider has its name. */
const BARE_PROVIDER: ProviderConfig = {
  Kind: 'OpenAICompatible',
  ApiKey: null,
  Endpoint: null,
  DefaultModel: null,
  DefaultDeployment: null,
  DefaultMaxOutputTokens: null,
  MaxRetries: null,
  EnableResponsesSurface: false,
  Timeout: null,
  Models: {},
};

/**
 * The value of the configuration key a tenant's binding names (`Hangar:ProviderKeys:<name>`);
 * undefined when it is not set, or no longer under `TenantProviders:AllowedConfigurationPrefix`
 * (a prefix narrowed after the binding was stored cuts it off).
 */
export function providerKey(config: HangarConfig, name: string): string | undefined {
  return namedSecret(config.Hangar.ProviderKeys, 'Hangar:ProviderKeys:', config.TenantProviders.AllowedConfigurationPrefix, name);
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
