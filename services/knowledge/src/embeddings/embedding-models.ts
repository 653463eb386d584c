import { createAzure } from '@ai-sdk/azure';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { EmbeddingModelV2 } from '@ai-sdk/provider';
import { azureV1Base, HangarError, type HangarConfig } from '@hangar/platform';
import { embedMany } from 'ai';
import { createDemoEmbeddingModel } from './demo-embeddings.js';

/** Models that take a `dimensions` parameter (OpenAI's text-embedding-3 family, under any provider). */
const SIZED_MODEL = /text-embedding-3/i;
const EMBED_BATCH_TEXTS = 256;
/** ~25k tokens: far below OpenAI's 300k tokens per request, and a request a slow provider finishes. */
const EMBED_BATCH_CHARACTERS = 100_000;
const EMBED_PARALLEL = 2;

/** Turns texts into vectors of `Knowledge:Dimensions` numbers, in order. */
export type EmbedTexts = (provider: string, model: string, texts: string[], signal?: AbortSignal) => Promise<number[][]>;

/**
 * Embedding models of the operator's providers (`Providers:{name}`), one object per provider and
 * model: OpenAI, Azure OpenAI and OpenAI-compatible endpoints through the AI SDK (asked for
 * `Knowledge:Dimensions` numbers when the model takes a size), and the offline Demo
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
          embeddingModel = createAzure({ apiKey, baseURL: azureV1Base(settings.Endpoint!), fetch }).textEmbeddingModel(model);
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

  /** Models that answered in another size when not told one: they are told `dimensions` from then on. */
  const sizedModels = new Set<string>();

  /** One request: `texts` (a batch) to vectors, within the provider's Timeout and MaxRetries. */
  async function request(provider: string, model: string, texts: string[], sized: boolean, signal: AbortSignal): Promise<number[][]> {
    const settings = config.Providers[provider];
    const deadline = settings?.Timeout ? AbortSignal.timeout(settings.Timeout) : undefined;
    try {
      const { embeddings } = await embedMany({
        model: modelOf(provider, model),
        values: texts,
        abortSignal: deadline ? AbortSignal.any([signal, deadline]) : signal,
        maxRetries: settings?.MaxRetries ?? 2,
        providerOptions: sized ? { openai: { dimensions }, [provider]: { dimensions } } : undefined,
      });
      return embeddings;
    } catch (error) {
      if (error instanceof HangarError) throw error;
      if (deadline?.aborted) {
        throw new HangarError('unavailable', `the embedding model ${provider}/${model} took longer than Providers:${provider}:Timeout`);
      }
      throw new HangarError('unavailable', `the embedding model ${provider}/${model} failed: ${(error as Error).message}`);
    }
  }

  /**
   * One batch, checked: a vector per text, each of Knowledge:Dimensions numbers. OpenAI's
   * text-embedding-3 family is told the size; other models (ada-002 and most self-hosted ones refuse
   * the parameter) are asked plainly, and told the size only once they answered in another one (an
   * Azure deployment of text-embedding-3 is named by its deployment, not its model).
   */
  async function embedBatch(provider: string, model: string, texts: string[], signal: AbortSignal): Promise<number[][]> {
    const key = `${provider}\u0000${model}`;
    const sized = SIZED_MODEL.test(model) || sizedModels.has(key);
    let vectors = await request(provider, model, texts, sized, signal);
    if (!sized && vectors[0] && vectors[0].length !== dimensions) {
      sizedModels.add(key);
      vectors = await request(provider, model, texts, true, signal);
    }
    if (vectors.length !== texts.length) {
      throw new HangarError(
        'unavailable',
        `the embedding model ${provider}/${model} answered ${vectors.length} vectors for ${texts.length} texts`,
      );
    }
    const wrong = vectors.find((vector) => !Array.isArray(vector) || vector.length !== dimensions);
    if (wrong) {
      throw new HangarError(
        'unavailable',
        `the embedding model ${provider}/${model} returned ${wrong?.length} numbers, Knowledge:Dimensions is ${dimensions}`,
      );
    }
    return vectors;
  }

  /**
   * Embeds in batches of at most EMBED_BATCH_TEXTS texts and EMBED_BATCH_CHARACTERS characters (a
   * provider caps the tokens of one request, not only its inputs), EMBED_PARALLEL at a time; the
   * first failure stops the other requests.
   */
  const embed: EmbedTexts = async (provider, model, texts, signal) => {
    const batches: Array<{ start: number; texts: string[] }> = [];
    for (let start = 0; start < texts.length;) {
      let end = start;
      let characters = 0;
      while (
        end < texts.length &&
        end - start < EMBED_BATCH_TEXTS &&
        (end === start || characters + texts[end].length <= EMBED_BATCH_CHARACTERS)
      ) {
        characters += texts[end].length;
        end++;
      }
      batches.push({ start, texts: texts.slice(start, end) });
      start = end;
    }
    const failed = new AbortController();
    const stop = signal ? AbortSignal.any([signal, failed.signal]) : failed.signal;
    const embeddings = new Array<number[]>(texts.length);
    let next = 0;
    const worker = async () => {
      for (let batch = batches[next++]; batch && !stop.aborted; batch = batches[next++]) {
        const vectors = await embedBatch(provider, model, batch.texts, stop);
        vectors.forEach((vector, index) => (embeddings[batch.start + index] = vector));
      }
    };
    let firstFailure: unknown;
    await Promise.all(
      Array.from({ length: Math.min(EMBED_PARALLEL, batches.length) }, () =>
        worker().catch((error: unknown) => {
          // The first failure is the answer; the requests it stops fail after it.
          firstFailure ??= error;
          failed.abort();
        }),
      ),
    );
    if (firstFailure) throw firstFailure;
    if (signal?.aborted) throw signal.reason;
    return embeddings;
  };

  return { refusal, embed };
}

export type EmbeddingModels = ReturnType<typeof createEmbeddingModels>;
