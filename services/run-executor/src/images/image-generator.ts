import { createHash } from 'node:crypto';
import { azureV1Base, classifyError, HangarError, solidPng, type ProviderConfig } from '@hangar/platform';

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

const OPENAI_ENDPOINT = 'https://api.openai.com/v1';
// OpenAI's GPT image models answer base64 always and refuse `response_format`; the DALL·E ones need it.
const answersBase64Only = (model: string) => model.startsWith('gpt-image');
// SPEC: a provider with no Timeout is given 100 seconds; 0 sets none.
const DEFAULT_TIMEOUT_MS = 100_000;
// Client errors of the provider that are the request's fault (a refused prompt, a size the model lacks), not the provider's.
const REFUSALS = new Set([400, 404, 413, 422]);

const providerError = (message: string) => new HangarError('unavailable', message, {}, 'provider_error');

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

/** The response body, refused once it passes `maxBytes` (a misbehaving server cannot fill the process's memory). */
async function cappedText(response: Response, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.body ?? []) {
    size += (chunk as Uint8Array).length;
    if (size > maxBytes) throw providerError(`the image provider answered more than ${maxBytes} bytes`);
    chunks.push(Buffer.from(chunk as Uint8Array));
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * OpenAI's image API (`POST {endpoint}/images/generations`), as OpenAI, Azure OpenAI's v1 surface
 * and compatible servers speak it. Read directly rather than through the AI SDK, whose image
 * results carry no token usage, which `Pricing:Images:*:OutputCostPerMillionTokens` needs. Every
 * failure of the provider is a 503 `provider_error`; a request it refuses, a 400.
 */
function openAIGenerator(settings: ProviderConfig, model: string, fetch: typeof globalThis.fetch, maxImageBytes: number): ImageGenerator {
  const azure = settings.Kind === 'AzureOpenAI';
  const base = azure ? azureV1Base(settings.Endpoint!) : (settings.Endpoint ?? OPENAI_ENDPOINT).replace(/\/+$/, '');
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (settings.ApiKey) headers[azure ? 'api-key' : 'authorization'] = azure ? settings.ApiKey : `Bearer ${settings.ApiKey}`;
  const timeoutMs = settings.Timeout ?? DEFAULT_TIMEOUT_MS;
  return async ({ prompt, count, size }, signal) => {
    const body = {
      model: model || settings.DefaultDeployment || undefined,
      prompt,
      n: count,
      ...(size && { size }),
      ...(!answersBase64Only(model) && { response_format: 'b64_json' }),
    };
    // Base64 is 4/3 of the bytes; a little room for the JSON around them.
    const maxAnswerBytes = Math.ceil((count * maxImageBytes * 4) / 3) + 64 * 1024;
    let text: string;
    let status: number;
    try {
      const response = await fetch(`${base}/images/generations`, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
        signal: timeoutMs > 0 ? AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]) : signal,
      });
      status = response.status;
      text = await cappedText(response, maxAnswerBytes);
    } catch (error) {
      if (signal.aborted || error instanceof HangarError) throw error;
      const timedOut = (error as Error).name === 'TimeoutError';
      throw providerError(
        timedOut
          ? `the image provider gave no answer within ${timeoutMs} ms`
          : `the image provider could not be reached: ${classifyError(error)?.message ?? (error as Error).message}`,
      );
    }
    if (status < 200 || status > 299) {
      const detail = text.slice(0, 500);
      if (REFUSALS.has(status))
        throw new HangarError('validation', `the image provider refused the request (${status}): ${detail}`, {}, 'provider_refused');
      throw providerError(`the image provider answered ${status}: ${detail}`);
    }
    let answer: { data?: unknown; usage?: { output_tokens?: unknown } };
    try {
      answer = JSON.parse(text) as typeof answer;
    } catch {
      throw providerError('the image provider answered something other than JSON');
    }
    const items = Array.isArray(answer.data) ? answer.data : [];
    const images = items
      .map((item) => (item as { b64_json?: unknown })?.b64_json)
      .filter((encoded): encoded is string => typeof encoded === 'string')
      .slice(0, count)
      .map((encoded) => Buffer.from(encoded, 'base64'));
    if (!images.length) throw providerError('the image provider answered no image');
    const outputTokens = answer.usage?.output_tokens;
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
