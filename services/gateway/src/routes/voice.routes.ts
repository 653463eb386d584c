import type { voicePb } from '@hangar/contracts';
import { HangarError } from '@hangar/platform';
import { z } from 'zod';
import { FILE_PART_BODY, problemResponse } from '../api.schemas.js';
import { receiveFilePart } from '../http/multipart.js';
import { writePiece } from '../http/streamed-body.js';
import { defineRoute } from '../http/route.js';

const TranscriptionSchema = z
  .object({
    text: z.string(),
    language: z.string().nullable().describe('The language the provider heard, when it says'),
    durationSeconds: z
      .number()
      .nullable()
      .describe('The audio’s length, what is priced; null when neither the file nor the provider tells it'),
    provider: z.string(),
    model: z.string(),
    cost: z.number().nullable().describe('Per Pricing:Voice PerMinute; null when no price applies'),
    currency: z.string(),
  })
  .meta({ id: 'Transcription' });

/** API.md "Images and voice": speech in and out, live only while a speech provider is configured. */
export const voiceRoutes = [
  defineRoute({
    method: 'post',
    path: '/api/voice/speech',
    operationId: 'synthesizeSpeech',
    summary: 'Speak text',
    description:
      'Turns `text` (at most Voice:MaxCharactersPerRequest characters) into speech in Voice:OutputFormat with `voiceId` (default Voice:DefaultVoiceId) and streams the audio as the provider sends it; X-Hangar-Characters and X-Hangar-Cost say what it is priced at (Pricing:Voice). 404 while no speech provider is configured; 429 while Voice:MaxConcurrentRequests requests are with the provider or a Cost quota rule for every agent of the tenant is used up (what it costs counts toward them); 503 when it fails.',
    tag: 'Voice',
    auth: { role: 'Operator', scope: 'RunsWrite' },
    body: z
      .strictObject({
        text: z.string().min(1).max(1_000_000).describe('At most Voice:MaxCharactersPerRequest characters'),
        voiceId: z.string().max(128).optional().describe('The provider’s voice; absent: Voice:DefaultVoiceId'),
      })
      .meta({ id: 'SpeechRequest' }),
    responses: {
      200: {
        description: 'The audio, as Voice:OutputFormat names it (audio/mpeg for mp3_*)',
        contentType: 'audio/mpeg',
        schema: z.string(),
        headers: {
          'X-Hangar-Characters': { description: 'Characters sent to the provider (what is priced)', schema: z.number().int() },
          'X-Hangar-Cost': { description: 'Per Pricing:Voice PerMillionCharacters; absent when no price applies', schema: z.number() },
          'X-Hangar-Currency': { description: 'Pricing:Currency' },
        },
      },
      400: problemResponse('No text, more than Voice:MaxCharactersPerRequest characters, no voice, or a request the provider refused'),
      404: problemResponse('No speech provider or no Voice:SynthesisModelId is configured'),
      429: problemResponse(
        'Voice:MaxConcurrentRequests requests are with the provider (retry shortly), a Cost quota rule for every agent of the tenant is used up (`quota`, `limit`, `used`, `resetsAt`, Retry-After), or over the rate limit (rate_limited)',
      ),
      503: problemResponse('The speech provider failed'),
    },
    async handler({ body, caller, response, signal }, { voice }) {
      const parts = voice.synthesize({ text: body.text, voiceId: body.voiceId }, { caller, signal })[Symbol.asyncIterator]();
      const first = await parts.next();
      if (first.done || first.value.part?.$case !== 'header') throw new HangarError('unavailable', 'the voice service sent no header');
      const header: voicePb.SpeechHeader = first.value.part.value;
      // The answer commits with its first byte of audio: a provider that fails or stalls before it is still a 503 problem.
      let next = await parts.next();
      response.status(200).set({
        'Content-Type': header.mediaType,
        'X-Hangar-Characters': String(header.characters),
        'X-Hangar-Currency': header.currency,
        ...(header.cost !== undefined && { 'X-Hangar-Cost': String(header.cost) }),
        'Cache-Control': 'no-store',
      });
      try {
        for (; !next.done; next = await parts.next()) {
          if (next.value.part?.$case === 'chunk' && !(await writePiece(response, next.value.part.value))) break;
        }
        response.end();
      } catch (error) {
        // Audio is out: the only honest signal left is a cut connection.
        response.destroy(error as Error);
      } finally {
        await parts.return?.(undefined);
      }
      return { status: 200, sent: true };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/voice/transcriptions',
    operationId: 'transcribeSpeech',
    summary: 'Transcribe speech',
    description:
      'Turns an audio file sent as multipart/form-data (part `file`, at most Attachments:MaxBytes, its type decided by its signature) into text with Voice:TranscriptionModelId, priced per minute of audio (Pricing:Voice). 404 while no speech provider is configured; 415 for a file that is no audio; 429 while Voice:MaxConcurrentRequests requests are with the provider or a Cost quota rule for every agent of the tenant is used up (what it costs counts toward them); 503 when it fails.',
    tag: 'Voice',
    auth: { role: 'Operator', scope: 'RunsWrite' },
    query: z.object({
      language: z
        .string()
        .regex(/^[a-z]{2,3}$/, 'must be an ISO 639-1 code such as en')
        .optional()
        .describe('ISO 639-1; absent: the provider detects it'),
    }),
    documentedBody: FILE_PART_BODY,
    responses: {
      200: { description: 'The transcript', schema: TranscriptionSchema },
      400: problemResponse('No `file` part, an empty file, a bad language, or a request the provider refused'),
      404: problemResponse('No speech provider or no Voice:TranscriptionModelId is configured'),
      413: problemResponse('Larger than Attachments:MaxBytes'),
      415: problemResponse('Not multipart/form-data, or a file whose signature is no audio'),
      429: problemResponse(
        'Voice:MaxConcurrentRequests requests are with the provider (retry shortly), a Cost quota rule for every agent of the tenant is used up (`quota`, `limit`, `used`, `resetsAt`, Retry-After), or over the rate limit (rate_limited)',
      ),
      503: problemResponse('The speech provider failed'),
    },
    async handler({ query, caller, request, signal }, { voice }) {
      if (!request.is('multipart/form-data'))
        throw new HangarError('unsupportedMediaType', 'send the audio with Content-Type multipart/form-data in a `file` part');
      const transcribed = await receiveFilePart(request, async (_fileName, bytes, uploadSignal) => {
        async function* parts(): AsyncIterable<voicePb.TranscribeRequest> {
          yield { part: { $case: 'header', value: { language: query.language } } };
          for await (const chunk of bytes) yield { part: { $case: 'chunk', value: chunk as Buffer } };
        }
        // The client may leave after its upload is complete: the provider call stops with it.
        return voice.transcribe(parts(), { caller, signal: AbortSignal.any([signal, uploadSignal]) });
      });
      return {
        status: 200,
        body: {
          text: transcribed.text,
          language: transcribed.language ?? null,
          durationSeconds: transcribed.durationSeconds ?? null,
          provider: transcribed.provider,
          model: transcribed.model,
          cost: transcribed.cost ?? null,
          currency: transcribed.currency,
        },
      };
    },
  }),
];
