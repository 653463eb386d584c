import { HangarError, notFound, validationError, type AuditWriter, type Caller, type HangarConfig } from '@hangar/platform';
import type { SharedSlots } from '@hangar/messaging';
import { readAudioFile } from './audio-file.js';
import type { SpeechProvider } from './speech-provider.js';
import { synthesisCharge, transcriptionCharge, type SpeechCharge } from './speech-pricing.js';
import type { SpendQuota } from '../spend/spend-quota.js';

const VOICE_ID = /^[A-Za-z0-9_.-]{1,128}$/;
const LANGUAGE = /^[a-z]{2,3}$/;

export interface Speech {
  mediaType: string;
  /** The audio as the provider sends it; its slot is given back once it ends. */
  audio: AsyncGenerator<Buffer>;
  /** Ends the provider's stream and gives the slot back, whether or not `audio` was read (idempotent). */
  close(): Promise<void>;
  provider: string;
  model: string;
  voiceId: string;
  /** What is priced: the characters sent (Unicode code points). */
  characters: number;
  charge: SpeechCharge;
}

export interface TranscribedSpeech {
  text: string;
  language: string | null;
  durationSeconds: number | null;
  provider: string;
  model: string;
  charge: SpeechCharge;
}

/**
 * Speech in and out (API.md "Images and voice"): text to speech and speech to text with the speech
 * provider of this deployment, at most `Voice:MaxConcurrentRequests` calls in flight across the
 * run executors sharing its Redis (one more is refused with 429, never queued behind a slow
 * provider), each priced per `Pricing:Voice` and recorded in the audit trail.
 */
export function createVoiceService(deps: {
  /** Undefined while no speech provider is configured: every request is 404, as if the routes were not there. */
  provider: SpeechProvider | undefined;
  /** Never throws (auditOrLog). */
  audit: AuditWriter;
  /** Speech and transcriptions are spend outside any run: admitted and counted by the tenant's quotas. */
  spend: Pick<SpendQuota, 'admit' | 'count'>;
  settings: Pick<HangarConfig, 'Voice' | 'Pricing' | 'Attachments'>;
  /** `Voice:MaxConcurrentRequests` slots, shared by the run executors on one Redis. */
  slots: SharedSlots;
}) {
  const { Voice, Pricing, Attachments } = deps.settings;

  /**
   * A slot of `Voice:MaxConcurrentRequests`, given back by the release it returns (which may be
   * called more than once) or by the caller's abort, whichever comes first.
   */
  async function takeSlot(signal: AbortSignal): Promise<() => void> {
    if (signal.aborted) throw new HangarError('validation', 'the caller went away');
    const taken = await deps.slots.take();
    if (!taken)
      throw new HangarError(
        'tooManyRequests',
        `${Voice.MaxConcurrentRequests} speech requests are with the provider already (Voice:MaxConcurrentRequests); retry shortly`,
        {},
        'rate_limited',
      );
    // Gone while the slot was being taken: nobody would read the answer.
    if (signal.aborted) {
      taken();
      throw new HangarError('validation', 'the caller went away');
    }
    const release = () => {
      taken();
      signal.removeEventListener('abort', release);
    };
    signal.addEventListener('abort', release, { once: true });
    return release;
  }

  function speechProvider(): SpeechProvider {
    if (!deps.provider)
      throw notFound('speech is not configured on this deployment (set Voice:Provider, or Voice:ApiKey or Voice:Endpoint)');
    return deps.provider;
  }

  return {
    /** Speech in `outputFormat` (default `Voice:OutputFormat`, the notation of which it shares). */
    async synthesize(
      caller: Caller,
      request: { text: string; voiceId?: string; outputFormat?: string },
      signal: AbortSignal,
    ): Promise<Speech> {
      const provider = speechProvider();
      const model = Voice.SynthesisModelId;
      if (!model) throw notFound('speech synthesis is not configured on this deployment (Voice:SynthesisModelId)');
      const voiceId = request.voiceId ?? Voice.DefaultVoiceId;
      const characters = [...request.text].length;
      const problems = [
        ...(request.text.trim() && characters <= Voice.MaxCharactersPerRequest
          ? []
          : [{ path: 'text', message: `must be 1–${Voice.MaxCharactersPerRequest} characters (Voice:MaxCharactersPerRequest)` }]),
        ...(voiceId === null
          ? [{ path: 'voiceId', message: 'is required: this deployment has no Voice:DefaultVoiceId' }]
          : VOICE_ID.test(voiceId)
            ? []
            : [{ path: 'voiceId', message: 'must be 1–128 letters, digits, _, . or -' }]),
      ];
      if (problems.length) throw validationError('the speech request is not valid', problems);
      await deps.spend.admit(caller);
      const release = await takeSlot(signal);
      let spoken: Awaited<ReturnType<SpeechProvider['synthesize']>>;
      try {
        spoken = await provider.synthesize(
          { text: request.text, voiceId: voiceId!, modelId: model, outputFormat: request.outputFormat ?? Voice.OutputFormat },
          signal,
        );
      } catch (error) {
        release();
        throw error;
      }
      const charge = synthesisCharge(Pricing.Voice, Pricing.Currency, { provider: provider.name, model }, characters);
      // Accepted is paid for: recorded before the first byte goes out.
      await deps.audit(caller, {
        action: 'voice.synthesized',
        resourceType: 'voice',
        resourceId: model,
        details: { provider: provider.name, voiceId, characters, ...charge },
      });
      await deps.spend.count(caller, charge.cost);
      async function* audio(): AsyncGenerator<Buffer> {
        try {
          yield* spoken.audio;
        } finally {
          release();
        }
      }
      const close = async () => {
        release();
        await spoken.audio.return(undefined);
      };
      return { mediaType: spoken.mediaType, audio: audio(), close, provider: provider.name, model, voiceId: voiceId!, characters, charge };
    },

    async transcribe(
      caller: Caller,
      request: { audio: AsyncIterable<Uint8Array> | Iterable<Uint8Array>; language?: string },
      signal: AbortSignal,
    ): Promise<TranscribedSpeech> {
      const provider = speechProvider();
      const model = Voice.TranscriptionModelId;
      if (!model) throw notFound('speech recognition is not configured on this deployment (Voice:TranscriptionModelId)');
      if (request.language !== undefined && !LANGUAGE.test(request.language))
        throw validationError('the transcription request is not valid', [
          { path: 'language', message: 'must be an ISO 639-1 code such as en' },
        ]);
      // Taken before the upload is read: the buffered uploads of a process are bounded by the slots too.
      const release = await takeSlot(signal);
      let transcript: Awaited<ReturnType<SpeechProvider['transcribe']>>;
      let file: Awaited<ReturnType<typeof readAudioFile>>;
      try {
        const chunks: Buffer[] = [];
        let size = 0;
        for await (const chunk of request.audio) {
          size += chunk.length;
          if (size > Attachments.MaxBytes)
            throw new HangarError('payloadTooLarge', `the audio is larger than ${Attachments.MaxBytes} bytes (Attachments:MaxBytes)`);
          chunks.push(Buffer.from(chunk));
        }
        const bytes = Buffer.concat(chunks);
        if (!bytes.length) throw validationError('the transcription request is not valid', [{ path: 'file', message: 'is empty' }]);
        file = await readAudioFile(bytes);
        // A file found to be audio, and only then: a request that is not valid is told so whatever the quotas say.
        await deps.spend.admit(caller);
        transcript = await provider.transcribe(
          // Named by what it is: OpenAI's API reads the format from the name's extension.
          { audio: bytes, fileName: `audio.${file.extension}`, mediaType: file.mediaType, modelId: model, language: request.language },
          signal,
        );
      } finally {
        release();
      }
      // The longest length anyone tells: a file's headers are the client's word, and must not price a long file as a short one.
      const known = [file.durationSeconds, transcript.durationSeconds].filter((seconds): seconds is number => seconds !== null);
      const durationSeconds = known.length ? Math.max(...known) : null;
      const charge = transcriptionCharge(Pricing.Voice, Pricing.Currency, { provider: provider.name, model }, durationSeconds);
      await deps.audit(caller, {
        action: 'voice.transcribed',
        resourceType: 'voice',
        resourceId: model,
        details: { provider: provider.name, durationSeconds, ...charge },
      });
      await deps.spend.count(caller, charge.cost);
      return { text: transcript.text, language: transcript.language, durationSeconds, provider: provider.name, model, charge };
    },
  };
}

export type VoiceService = ReturnType<typeof createVoiceService>;
