/**
 * `Voice:OutputFormat` is written in the ElevenLabs-style API's own notation,
 * `<codec>_<sample rate>[_<bitrate>]` (`mp3_44100_128`, `pcm_16000`, `opus_48000_64`,
 * `ulaw_8000`). One reading of it serves the start check, the speech adapters and the answer's
 * media type.
 */
export interface SpeechFormat {
  codec: 'mp3' | 'pcm' | 'wav' | 'opus' | 'ulaw' | 'alaw';
  sampleRate: number;
  /** The `Content-Type` of the audio: raw PCM is 16-bit little-endian mono, named with its rate. */
  mediaType: string;
  /** OpenAI's `response_format` for the same audio, when OpenAI's speech API can produce it. */
  openAIFormat: 'mp3' | 'opus' | 'wav' | 'pcm' | undefined;
  /** What a file of this audio is named with (headerless samples: `raw`). */
  extension: 'mp3' | 'ogg' | 'wav' | 'raw';
}

const NOTATION = /^(mp3|pcm|wav|opus|ulaw|alaw)_(\d{4,6})(?:_(\d{2,3}))?$/;

// OpenAI's `pcm` is 24 kHz; its other formats choose their own rate, which the notation's rate only labels.
const OPENAI_PCM_RATE = 24_000;

/**
 * What a voice conversation asks the provider for, to send `Voice:Conversation:OutputMediaType`:
 * `Voice:OutputFormat` when it is of that type, else a common format of it; undefined for a media
 * type no format gives.
 */
export function conversationFormat(voice: { OutputFormat: string; Conversation: { OutputMediaType: string } }): string | undefined {
  const wanted = voice.Conversation.OutputMediaType;
  if (speechFormat(voice.OutputFormat)?.mediaType === wanted) return voice.OutputFormat;
  return CONVERSATION_FORMATS[wanted];
}

const CONVERSATION_FORMATS: Record<string, string> = {
  'audio/mpeg': 'mp3_44100_128',
  'audio/ogg': 'opus_48000_64',
  'audio/wav': 'wav_24000',
  'audio/basic': 'ulaw_8000',
};

/** The format `Voice:OutputFormat` names, or undefined when it is not in the notation. */
export function speechFormat(outputFormat: string): SpeechFormat | undefined {
  const match = NOTATION.exec(outputFormat);
  if (!match) return undefined;
  const codec = match[1] as SpeechFormat['codec'];
  const sampleRate = Number(match[2]);
  const mediaTypes: Record<SpeechFormat['codec'], string> = {
    mp3: 'audio/mpeg',
    wav: 'audio/wav',
    opus: 'audio/ogg',
    pcm: `audio/pcm;rate=${sampleRate}`,
    ulaw: 'audio/basic',
    alaw: 'audio/x-alaw-basic',
  };
  const openAIFormat =
    codec === 'mp3' || codec === 'opus' || codec === 'wav' ? codec : codec === 'pcm' && sampleRate === OPENAI_PCM_RATE ? 'pcm' : undefined;
  const extension = codec === 'mp3' || codec === 'wav' ? codec : codec === 'opus' ? 'ogg' : 'raw';
  return { codec, sampleRate, mediaType: mediaTypes[codec], openAIFormat, extension };
}
