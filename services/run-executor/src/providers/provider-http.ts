import { azureV1Base, classifyError, HangarError, type ProviderConfig } from '@hangar/platform';

/** A provider's failure of any kind: the provider is at fault, so the request may succeed later (503). */
export const providerError = (message: string) => new HangarError('unavailable', message, {}, 'provider_error');

// Client errors of the provider that are the request's fault (a refused prompt, a size the model lacks), not the provider's.
const REFUSALS = new Set([400, 404, 413, 422]);
// Enough of a refusal's body to say why, and no more.
const MAX_ERROR_BODY_BYTES = 64 * 1024;

const OPENAI_ENDPOINT = 'https://api.openai.com/v1';

/**
 * Where a provider's OpenAI-style API answers and how it is authorised: Azure OpenAI's v1 surface
 * with `api-key`, OpenAI or a compatible server with a bearer token (none without a key).
 */
export function openAIApi(provider: ProviderConfig): { base: string; headers: Record<string, string> } {
  const azure = provider.Kind === 'AzureOpenAI';
  const base = azure ? azureV1Base(provider.Endpoint!) : (provider.Endpoint ?? OPENAI_ENDPOINT).replace(/\/+$/, '');
  if (!provider.ApiKey) return { base, headers: {} };
  return { base, headers: azure ? { 'api-key': provider.ApiKey } : { authorization: `Bearer ${provider.ApiKey}` } };
}

export interface ProviderCall {
  /** Names the provider in messages: `the speech provider`. */
  what: string;
  /** 0: none. Covers the answer's body too. */
  timeoutMs: number;
  /** The caller's: its abort passes as it is, never as the provider's failure. */
  signal: AbortSignal;
}

/**
 * One HTTP call to an operator-configured provider API read directly (images, speech): the answer
 * must start and end within `timeoutMs`; every failure of the provider — unreachable, too slow, an
 * error status, a body that is too large — is a 503 `provider_error`, and a request it refuses
 * (400, 404, 413, 422) a 400 `provider_refused`.
 */
export function providerRequest(fetch: typeof globalThis.fetch, call: ProviderCall) {
  const signal = call.timeoutMs > 0 ? AbortSignal.any([call.signal, AbortSignal.timeout(call.timeoutMs)]) : call.signal;
  const failure = (error: unknown): unknown => {
    if (call.signal.aborted || error instanceof HangarError) return error;
    if ((error as Error)?.name === 'TimeoutError' || signal.aborted)
      return providerError(`${call.what} gave no complete answer within ${call.timeoutMs} ms`);
    return providerError(`${call.what} could not be reached: ${classifyError(error)?.message ?? (error as Error).message}`);
  };

  /** The answer's body as it arrives, refused once it passes `maxBytes` (a misbehaving server cannot fill the process's memory). */
  async function* stream(response: Response, maxBytes: number): AsyncGenerator<Buffer> {
    let size = 0;
    try {
      for await (const chunk of response.body ?? []) {
        size += (chunk as Uint8Array).length;
        if (size > maxBytes) throw providerError(`${call.what} answered more than ${maxBytes} bytes`);
        yield Buffer.from(chunk as Uint8Array);
      }
    } catch (error) {
      throw failure(error);
    }
  }

  async function bytes(response: Response, maxBytes: number): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of stream(response, maxBytes)) chunks.push(chunk);
    return Buffer.concat(chunks);
  }

  return {
    /** Sends the request; a status other than 2xx is thrown as the provider's failure or refusal. */
    async send(url: string, init: Omit<RequestInit, 'signal'>): Promise<Response> {
      let response: Response;
      try {
        response = await fetch(url, { ...init, signal });
      } catch (error) {
        throw failure(error);
      }
      if (response.ok) return response;
      const detail = (await bytes(response, MAX_ERROR_BODY_BYTES).catch(() => Buffer.alloc(0))).toString('utf8').slice(0, 500);
      if (REFUSALS.has(response.status))
        throw new HangarError('validation', `${call.what} refused the request (${response.status}): ${detail}`, {}, 'provider_refused');
      throw providerError(`${call.what} answered ${response.status}: ${detail}`);
    },
    stream,
    bytes,
    /** The body parsed as JSON; anything else is the provider's failure. */
    async json(response: Response, maxBytes: number): Promise<unknown> {
      const text = (await bytes(response, maxBytes)).toString('utf8');
      try {
        return JSON.parse(text) as unknown;
      } catch {
        throw providerError(`${call.what} answered something other than JSON`);
      }
    },
  };
}
