import { speechFormat, type HangarConfig, type ProviderConfig } from '@hangar/platform';
import { openAIApi, providerError, providerRequest } from '../providers/provider-http.js';

export interface SynthesisRequest {
  text: string;
  voiceId: string;
  modelId: string;
  /** In the notation of `Voice:OutputFormat` (checked at start for the provider). */
  outputFormat: string;
}

/** Speech as it streams from the provider, which has accepted the request (its status was 2xx). */
export interface SpokenAudio {
  mediaType: string;
  audio: AsyncGenerator<Buffer>;
}

export interface TranscriptionRequest {
  audio: Buffer;
  fileName: string;
  mediaType: string;
  modelId: string;
  /** ISO 639-1; absent: the provider detects it. */
  language?: string;
}

export interface Transcript {
  text: string;
  /** The language the provider heard, when it says. */
  language: string | null;
  /** The audio's length as the provider reports it, when it does. */
  durationSeconds: number | null;
}

/** One speech API: text to speech and speech to text. */
export interface SpeechProvider {
  /** The provider segment of `Pricing:Voice:{provider}:{model}`. */
  name: string;
  synthesize(request: SynthesisRequest, signal: AbortSignal): Promise<SpokenAudio>;
  transcribe(request: TranscriptionRequest, signal: AbortSignal): Promise<Transcript>;
}

type VoiceSettings = Pick<HangarConfig, 'Voice'>;
type Fetch = typeof globalThis.fetch;

// SPEC: Voice:Timeout null uses 100 seconds.
const DEFAULT_TIMEOUT_MS = 100_000;
// Five minutes of speech at 128 kbit/s is about 5 MB; far more is a misbehaving server, not speech.
const MAX_SPEECH_BYTES = 64 * 1024 * 1024;
const MAX_TRANSCRIPT_BYTES = 4 * 1024 * 1024;
const ELEVENLABS_ENDPOINT = 'https://api.elevenlabs.io';
/** The name prices of the ElevenLabs-style API are written under. */
export const ELEVENLABS_PRICING_NAME = 'ElevenLabs';

const audioFile = (request: TranscriptionRequest) =>
  new Blob([new Uint8Array(request.audio.buffer, request.audio.byteOffset, request.audio.byteLength)], { type: request.mediaType });

const text = (value: unknown) => (typeof value === 'string' ? value : undefined);

/**
 * The ElevenLabs-style API the `Voice:*` keys describe: `POST /v1/text-to-speech/{voice}/stream`
 * with `output_format` = `Voice:OutputFormat` and `POST /v1/speech-to-text` (multipart), the key in
 * `xi-api-key`.
 */
function elevenLabsSpeech(settings: VoiceSettings, fetch: Fetch): SpeechProvider {
  const { Voice } = settings;
  const base = (Voice.Endpoint ?? ELEVENLABS_ENDPOINT).replace(/\/+$/, '');
  const headers: Record<string, string> = Voice.ApiKey ? { 'xi-api-key': Voice.ApiKey } : {};
  const timeoutMs = Voice.Timeout ?? DEFAULT_TIMEOUT_MS;
  return {
    name: ELEVENLABS_PRICING_NAME,
    async synthesize({ text: spoken, voiceId, modelId, outputFormat }, signal) {
      const http = providerRequest(fetch, { what: 'the speech provider', timeoutMs, signal });
      const mediaType = speechFormat(outputFormat)!.mediaType;
      const url = `${base}/v1/text-to-speech/${encodeURIComponent(voiceId)}/stream?output_format=${encodeURIComponent(outputFormat)}`;
      const response = await http.send(url, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', accept: mediaType },
        body: JSON.stringify({ text: spoken, model_id: modelId }),
      });
      return { mediaType, audio: http.stream(response, MAX_SPEECH_BYTES) };
    },
    async transcribe(request, signal) {
      const http = providerRequest(fetch, { what: 'the speech provider', timeoutMs, signal });
      const form = new FormData();
      form.set('model_id', request.modelId);
      if (request.language) form.set('language_code', request.language);
      form.set('file', audioFile(request), request.fileName);
      const response = await http.send(`${base}/v1/speech-to-text`, { method: 'POST', headers, body: form });
      const answer = (await http.json(response, MAX_TRANSCRIPT_BYTES)) as {
        text?: unknown;
        language_code?: unknown;
        words?: { end?: unknown }[];
      } | null;
      const transcript = text(answer?.text);
      if (transcript === undefined) throw providerError('the speech provider answered no transcript');
      // The end of its last word: a length it heard, at least (its answer has no duration of its own).
      const lastEnd = (Array.isArray(answer?.words) ? answer.words : []).reduce<number | null>(
        (latest, word) => (typeof word?.end === 'number' && word.end > (latest ?? -1) ? word.end : latest),
        null,
      );
      return { text: transcript, language: text(answer?.language_code) ?? null, durationSeconds: lastEnd };
    },
  };
}

/**
 * OpenAI's speech API (`/audio/speech`, `/audio/transcriptions`) of the provider `Voice:Provider`
 * names, with its key and endpoint: OpenAI, Azure OpenAI's v1 surface and compatible servers.
 */
function openAISpeech(name: string, provider: ProviderConfig, settings: VoiceSettings, fetch: Fetch): SpeechProvider {
  const { Voice } = settings;
  const { base, headers } = openAIApi(provider);
  const timeoutMs = Voice.Timeout ?? DEFAULT_TIMEOUT_MS;
  return {
    name,
    async synthesize({ text: spoken, voiceId, modelId, outputFormat }, signal) {
      const http = providerRequest(fetch, { what: 'the speech provider', timeoutMs, signal });
      // Checked at start: OpenAI can produce the configured formats.
      const format = speechFormat(outputFormat)!;
      const response = await http.send(`${base}/audio/speech`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ model: modelId, input: spoken, voice: voiceId, response_format: format.openAIFormat }),
      });
      return { mediaType: format.mediaType, audio: http.stream(response, MAX_SPEECH_BYTES) };
    },
    async transcribe(request, signal) {
      const http = providerRequest(fetch, { what: 'the speech provider', timeoutMs, signal });
      const form = new FormData();
      form.set('model', request.modelId);
      form.set('response_format', 'json');
      if (request.language) form.set('language', request.language);
      form.set('file', audioFile(request), request.fileName);
      const response = await http.send(`${base}/audio/transcriptions`, { method: 'POST', headers, body: form });
      const answer = (await http.json(response, MAX_TRANSCRIPT_BYTES)) as {
        text?: unknown;
        language?: unknown;
        usage?: { seconds?: unknown };
      } | null;
      const transcript = text(answer?.text);
      if (transcript === undefined) throw providerError('the speech provider answered no transcript');
      const seconds = answer?.usage?.seconds;
      return {
        text: transcript,
        language: text(answer?.language) ?? null,
        durationSeconds: typeof seconds === 'number' && seconds >= 0 ? seconds : null,
      };
    },
  };
}

/**
 * The speech API of this deployment, or undefined when none is configured: `Voice:Provider`'s
 * OpenAI speech API when it names one, else the ElevenLabs-style API once `Voice:ApiKey` or
 * `Voice:Endpoint` is set.
 */
export function createSpeechProvider(settings: Pick<HangarConfig, 'Voice' | 'Providers'>, fetch: Fetch): SpeechProvider | undefined {
  const { Voice, Providers } = settings;
  if (Voice.Provider) return openAISpeech(Voice.Provider, Providers[Voice.Provider], settings, fetch);
  if (Voice.ApiKey || Voice.Endpoint) return elevenLabsSpeech(settings, fetch);
  return undefined;
}
