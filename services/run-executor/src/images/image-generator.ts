import { createHash } from 'node:crypto';
import { azureV1Base, HangarError, solidPng, type ProviderConfig } from '@hangar/platform';

/** One generation's result: the images' bytes, and the output tokens the provider reported (null: none). */
export interface GeneratedImages {
  images: Array<{ bytes: Buffer; mediaType: string }>;
  outputTokens: number | null;
}

export interface ImageRequest {
  prompt: string;
  count: number;
  /** The provider's own size string (e.g. `1024x1024`); absent: the provider's default. */
  size?: string;
}

export type ImageGenerator = (request: ImageRequest, signal: AbortSignal) => Promise<GeneratedImages>;

const OPENAI_ENDPOINT = 'https://api.openai.com/v1';
// OpenAI's GPT image models answer base64 always and refuse `response_format`; the DALL·E ones need it.
const answersBase64Only = (model: string) => model.startsWith('gpt-image');
const DEFAULT_TIMEOUT_MS = 100_000;

/** The Demo provider draws offline: one colour per prompt, so the same prompt gives the same picture. */
function demoGenerator(): ImageGenerator {
  return async ({ prompt, count, size }) => {
    const digest = createHash('sha256').update(prompt).digest();
    const [width, height] = (size ?? '64x64').split('x').map((side) => Math.min(256, Math.max(1, Number(side) || 64)));
    const bytes = solidPng(width, height, [digest[0], digest[1], digest[2]]);
    return { images: Array.from({ length: count }, () => ({ bytes, mediaType: 'image/png' })), outputTokens: null };
  };
}

/**
 * OpenAI's image API (`POST {endpoint}/images/generations`), as OpenAI, Azure OpenAI's v1 surface
 * and compatible servers speak it. Read directly rather than through the AI SDK, whose image
 * results carry no token usage, which `Pricing:Images:*:OutputCostPerMillionTokens` needs.
 */
function openAIGenerator(settings: ProviderConfig, model: string, fetch: typeof globalThis.fetch): ImageGenerator {
  const azure = settings.Kind === 'AzureOpenAI';
  const base = azure ? azureV1Base(settings.Endpoint!) : (settings.Endpoint ?? OPENAI_ENDPOINT).replace(/\/+$/, '');
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (settings.ApiKey) headers[azure ? 'api-key' : 'authorization'] = azure ? settings.ApiKey : `Bearer ${settings.ApiKey}`;
  return async ({ prompt, count, size }, signal) => {
    const body = {
      model: model || settings.DefaultDeployment || undefined,
      prompt,
      n: count,
      ...(size && { size }),
      ...(!answersBase64Only(model) && { response_format: 'b64_json' }),
    };
    const response = await fetch(`${base}/images/generations`, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
      signal: AbortSignal.any([signal, AbortSignal.timeout(settings.Timeout ?? DEFAULT_TIMEOUT_MS)]),
    });
    if (!response.ok) {
      const detail = (await response.text()).slice(0, 500);
      throw new HangarError('unavailable', `the image provider answered ${response.status}: ${detail}`, {}, 'provider_error');
    }
    const answer = (await response.json()) as { data?: Array<{ b64_json?: string }>; usage?: { output_tokens?: number } };
    const images = (answer.data ?? []).flatMap((item) =>
      item.b64_json ? [{ bytes: Buffer.from(item.b64_json, 'base64'), mediaType: 'image/png' }] : [],
    );
    if (!images.length) throw new HangarError('unavailable', 'the image provider answered no image', {}, 'provider_error');
    return { images, outputTokens: typeof answer.usage?.output_tokens === 'number' ? answer.usage.output_tokens : null };
  };
}

/** The generator of `Images:Provider`; its kind was checked at start (Anthropic has no image API). */
export function createImageGenerator(settings: ProviderConfig, model: string, fetch: typeof globalThis.fetch): ImageGenerator {
  return settings.Kind === 'Demo' ? demoGenerator() : openAIGenerator(settings, model, fetch);
}
