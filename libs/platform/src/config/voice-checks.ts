import { conversationFormat, speechFormat } from '../providers/speech-format.js';

interface VoiceSettings {
  Provider: string | null;
  OutputFormat: string;
  MaxCharactersPerRequest: number;
  MaxConcurrentRequests: number;
  Conversation: {
    OutputMediaType: string;
    InputSampleRate: number;
    MaxConcurrentConnectionsPerTenant: number;
    MaxSpokenCharactersPerTurn: number;
  };
}

/** Kinds of provider whose API has OpenAI's speech routes (`/audio/speech`, `/audio/transcriptions`). */
const SPEAKING_KINDS = ['OpenAI', 'AzureOpenAI', 'OpenAICompatible'];

/**
 * What the start refuses in `Voice:*` (API.md "Images and voice"): a format outside the
 * ElevenLabs-style notation, limits below 1, and a `Voice:Provider` that names no provider, a kind
 * without OpenAI's speech API, or one that cannot produce `Voice:OutputFormat`.
 */
export function voiceIssues(voice: VoiceSettings, providers: Record<string, { Kind: string }>): { path: string[]; message: string }[] {
  const issues: { path: string[]; message: string }[] = [];
  const format = speechFormat(voice.OutputFormat);
  if (!format)
    issues.push({ path: ['Voice', 'OutputFormat'], message: 'must be <codec>_<sample rate>[_<bitrate>], e.g. mp3_44100_128 or pcm_16000' });
  if (voice.MaxCharactersPerRequest < 1) issues.push({ path: ['Voice', 'MaxCharactersPerRequest'], message: 'must be at least 1' });
  if (voice.MaxConcurrentRequests < 1) issues.push({ path: ['Voice', 'MaxConcurrentRequests'], message: 'must be at least 1' });
  const talk = voice.Conversation;
  const spoken = format && conversationFormat(voice);
  if (format && !spoken)
    issues.push({
      path: ['Voice', 'Conversation', 'OutputMediaType'],
      message: 'must be audio/mpeg, audio/ogg, audio/wav, audio/basic or the media type of Voice:OutputFormat',
    });
  if (talk.InputSampleRate < 8000 || talk.InputSampleRate > 48000)
    issues.push({ path: ['Voice', 'Conversation', 'InputSampleRate'], message: 'must be 8000–48000 Hz' });
  for (const key of ['MaxConcurrentConnectionsPerTenant', 'MaxSpokenCharactersPerTurn'] as const)
    if (talk[key] < 1) issues.push({ path: ['Voice', 'Conversation', key], message: 'must be at least 1' });
  if (voice.Provider === null) return issues;
  const provider = providers[voice.Provider];
  if (!provider) issues.push({ path: ['Voice', 'Provider'], message: 'names no provider of Providers' });
  else if (!SPEAKING_KINDS.includes(provider.Kind))
    issues.push({
      path: ['Voice', 'Provider'],
      message: `names a provider of Kind ${provider.Kind}, which has no speech API (${SPEAKING_KINDS.join(', ')} speak)`,
    });
  else if (format && !format.openAIFormat)
    issues.push({
      path: ['Voice', 'OutputFormat'],
      message: 'is a format OpenAI’s speech API cannot produce (mp3_*, opus_*, wav_* or pcm_24000)',
    });
  else if (spoken && !speechFormat(spoken)?.openAIFormat)
    issues.push({
      path: ['Voice', 'Conversation', 'OutputMediaType'],
      message: 'is a media type OpenAI’s speech API cannot produce (audio/mpeg, audio/ogg, audio/wav)',
    });
  return issues;
}
