import { voicePb as pb } from '@hangar/contracts';
import { splitStreamedUpload, validationError, type CallerContext } from '@hangar/platform';
import type { ConversationInput, ConversationOutput } from './conversations/conversation.model.js';
import type { ConversationService } from './conversations/conversation.service.js';
import type { VoiceService } from './voice.service.js';

// Well below grpc's 4 MiB message limit, whatever size of piece the provider sends.
const MAX_CHUNK_BYTES = 256 * 1024;

/** gRPC ↔ speech; translation only. */
export function voiceGrpc(voice: VoiceService, conversations: ConversationService): pb.VoiceServiceImplementation<CallerContext> {
  return {
    async *converse(requests, { caller, signal }) {
      const iterator = requests[Symbol.asyncIterator]();
      const first = await iterator.next();
      if (first.done || first.value.part?.$case !== 'open')
        throw validationError('a conversation starts with its opening', [{ path: 'open', message: 'is required first' }]);
      const opening = first.value.part.value;
      async function* inputs(): AsyncGenerator<ConversationInput> {
        for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
          const part = next.value.part;
          if (part?.$case === 'audio') yield { type: 'audio', pcm: part.value };
          else if (part?.$case === 'signal' && part.value === pb.ConversationSignal.CONVERSATION_SIGNAL_COMMIT) yield { type: 'commit' };
          else if (part?.$case === 'signal' && part.value === pb.ConversationSignal.CONVERSATION_SIGNAL_END) yield { type: 'end' };
          else if (part?.$case === 'decision') yield { type: 'decision', ...part.value };
        }
      }
      const outputs = await conversations.converse(
        caller,
        { agentName: opening.agentName, sessionId: opening.sessionId },
        inputs(),
        signal,
      );
      for await (const output of outputs) yield conversationOutput(output);
    },
    async *synthesize({ text, voiceId }, { caller, signal }) {
      const speech = await voice.synthesize(caller, { text, voiceId }, signal);
      try {
        yield {
          part: {
            $case: 'header',
            value: {
              mediaType: speech.mediaType,
              provider: speech.provider,
              model: speech.model,
              voiceId: speech.voiceId,
              characters: speech.characters,
              cost: speech.charge.cost ?? undefined,
              currency: speech.charge.currency,
            },
          },
        };
        for await (const piece of speech.audio)
          for (let offset = 0; offset < piece.length; offset += MAX_CHUNK_BYTES)
            yield { part: { $case: 'chunk', value: piece.subarray(offset, offset + MAX_CHUNK_BYTES) } };
      } finally {
        // Ends the provider's stream and frees its slot, however far the caller read.
        await speech.close();
      }
    },
    async transcribe(requests, { caller, signal }) {
      const { header, chunks } = await splitStreamedUpload(requests);
      const transcribed = await voice.transcribe(caller, { audio: chunks, language: header.language }, signal);
      return {
        text: transcribed.text,
        language: transcribed.language ?? undefined,
        durationSeconds: transcribed.durationSeconds ?? undefined,
        provider: transcribed.provider,
        model: transcribed.model,
        cost: transcribed.charge.cost ?? undefined,
        currency: transcribed.charge.currency,
      };
    },
  };
}

function conversationOutput(output: ConversationOutput): pb.ConverseResponse {
  switch (output.type) {
    case 'ready':
      return { part: { $case: 'ready', value: output } };
    case 'transcript':
      return { part: { $case: 'transcript', value: output } };
    case 'run':
      return { part: { $case: 'run', value: output } };
    case 'reply':
      return { part: { $case: 'reply', value: output } };
    case 'audio':
      return { part: { $case: 'audio', value: output.chunk } };
    case 'turn_end':
      return {
        part: {
          $case: 'turnEnd',
          value: {
            turn: output.turn,
            runId: output.runId,
            firstAudioMs: output.firstAudioMs ?? undefined,
            utteranceAttachmentId: output.utteranceAttachmentId ?? undefined,
            replyAttachmentId: output.replyAttachmentId ?? undefined,
          },
        },
      };
    case 'error':
      return { part: { $case: 'error', value: { turn: output.turn ?? undefined, errorType: output.errorType, detail: output.detail } } };
    case 'closed':
      return { part: { $case: 'closed', value: output } };
    case 'approval':
      return { part: { $case: 'approval', value: output } };
  }
}
