import { createHash } from 'node:crypto';
import { solidPng, type ProviderConfig } from '@hangar/platform';
import { openAIApi, providerError, providerRequest } from '../providers/provider-http.js';

/** One generation's result: the images' bytes, and the output tokens the provider reported (null: none). */
export interface GeneratedImages {
  images: Buffer[];
  outputTokens: number | null;
}

export interface ImageRequest {
  prompt: string;
  count: number;
  /** The provider's own size string (e.g. `1024x1024`); absent: the provider's default. */
  size?: string;
}

export type ImageGenerator = (request: ImageRequest, signal: AbortSignal) => Promise<GeneratedImages>;

// OpenAI's GPT image models answer base64 always and refuse `response_format`; the DALL·E ones need it.
const answersBase64Only = (model: string) => model.startsWith('gpt-image');
// SPEC: a provider with no Timeout is given 100 seconds; 0 sets none.
const DEFAULT_TIMEOUT_MS = 100_000;

/** The Demo provider draws offline: one colour per prompt, so the same prompt gives the same picture. */
function demoGenerator(): ImageGenerator {
  return async ({ prompt, count, size }) => {
    const digest = createHash('sha256').update(prompt).digest();
    const sides = /^(\d+)x(\d+)$/.exec(size ?? '');
    const [width, height] = sides ? [Number(sides[1]), Number(sides[2])].map((side) => Math.min(256, Math.max(1, side))) : [64, 64];
    const bytes = solidPng(width, height, [digest[0], digest[1], digest[2]]);
    return { images: Array.from({ length: count }, () => bytes), outputTokens: null };
  };
}

/**
 * OpenAI's image API (`POST {endpoint}/images/generations`), as OpenAI, Azure OpenAI's v1 surface
 * and compatible servers speak it. Read directly rather than through the AI SDK, whose image
 * results carry no token usage, which `Pricing:Images:*:OutputCostPerMillionTokens` needs. Every
 * failure of the provider is a 503 `provider_error`; a request it refuses, a 400.
 */
function openAIGenerator(settings: ProviderConfig, model: string, fetch: typeof globalThis.fetch, maxImageBytes: number): ImageGenerator {
  const api = openAIApi(settings);
  const { base } = api;
  const headers = { ...api.headers, 'content-type': 'application/json' };
  const timeoutMs = settings.Timeout ?? DEFAULT_TIMEOUT_MS;
  return async ({ prompt, count, size }, signal) => {
    const body = {
      model: model || settings.DefaultDeployment || undefined,
      prompt,
      n: count,
      ...(size && { size }),
      ...(!answersBase64Only(model) && { response_format: 'b64_json' }),
    };
    const provider = providerRequest(fetch, { what: 'the image provider', timeoutMs, signal });
    const response = await provider.send(`${base}/images/generations`, { method: 'POST', headers, body: JSON.stringify(body) });
    // Base64 is 4/3 of the bytes; a little room for the JSON around them.
    const answer = (await provider.json(response, Math.ceil((count * maxImageBytes * 4) / 3) + 64 * 1024)) as {
      data?: unknown;
      usage?: { output_tokens?: unknown };
    } | null;
    const items = Array.isArray(answer?.data) ? answer.data : [];
    const images = items
      .map((item) => (item as { b64_json?: unknown })?.b64_json)
      .filter((encoded): encoded is string => typeof encoded === 'string')
      .slice(0, count)
      .map((encoded) => Buffer.from(encoded, 'base64'));
    if (!images.length) throw providerError('the image provider answered no image');
    const outputTokens = answer?.usage?.output_tokens;
    return { images, outputTokens: typeof outputTokens === 'number' && outputTokens >= 0 ? outputTokens : null };
  };
}

/** The generator of `Images:Provider`; its kind was checked at start (Anthropic has no image API). */
export function createImageGenerator(
  settings: ProviderConfig,
  model: string,
  fetch: typeof globalThis.fetch,
  maxImageBytes: number,
): ImageGenerator {
  return settings.Kind === 'Demo' ? demoGenerator() : openAIGenerator(settings, model, fetch, maxImageBytes);
}
