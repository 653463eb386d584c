import { voicePb } from '@hangar/contracts';
import { classifyError, createAsyncQueue, type Logger } from '@hangar/platform';
import type { WebSocket } from 'ws';

// Audio the run executor has not taken yet: above the high mark the socket stops reading (TCP pushes back on the client).
const PAUSE_ABOVE_BYTES = 2 * 1024 * 1024;
const RESUME_BELOW_BYTES = 512 * 1024;

/** A refusal of the run executor as a WebSocket close code: 4xxx mirrors its HTTP status. */
function closeCodeOf(error: unknown): number {
  const status = classifyError(error)?.status;
  if (status === 503) return 1013;
  if (status !== undefined && status >= 400 && status < 500) return 4000 + status;
  return 1011;
}

/** A close reason fits in 123 bytes of UTF-8 (RFC 6455). */
function closeReason(text: string): string {
  let reason = text;
  while (Buffer.byteLength(reason) > 123) reason = reason.slice(0, -1);
  return reason;
}

/**
 * One frame of the client's: binary audio, or JSON: `{ "type": "commit" | "end" }`, or a decision
 * on a tool call `{ "type": "approval", "approvalId", "approved", "comment"? }`.
 */
function inputOf(data: Buffer, binary: boolean): voicePb.ConverseRequest | string {
  if (binary) return { part: { $case: 'audio', value: data } };
  let control: { type?: unknown; approvalId?: unknown; approved?: unknown; comment?: unknown } | null;
  try {
    control = JSON.parse(data.toString('utf8')) as typeof control;
  } catch {
    return 'a text frame must be JSON: {"type":"commit"} or {"type":"end"}';
  }
  if (control?.type === 'commit') return { part: { $case: 'signal', value: voicePb.ConversationSignal.CONVERSATION_SIGNAL_COMMIT } };
  if (control?.type === 'end') return { part: { $case: 'signal', value: voicePb.ConversationSignal.CONVERSATION_SIGNAL_END } };
  if (control?.type === 'approval') {
    const { approvalId, approved, comment } = control;
    if (typeof approvalId !== 'string' || typeof approved !== 'boolean' || (comment !== undefined && typeof comment !== 'string'))
      return 'an approval frame is {"type":"approval","approvalId":"…","approved":true|false,"comment"?:"…"}';
    return { part: { $case: 'decision', value: { approvalId, approved, comment } } };
  }
  return 'unknown control: send {"type":"commit"}, {"type":"end"} or {"type":"approval",…}';
}

type TextPart = Exclude<NonNullable<voicePb.ConverseResponse['part']>, { $case: 'audio' | 'closed' }>;

/** A message of the conversation as its JSON text frame; what the wire leaves absent is null. */
function textFrame(part: TextPart): Record<string, unknown> {
  switch (part.$case) {
    case 'turnEnd': {
      const { firstAudioMs, utteranceAttachmentId, replyAttachmentId, ...rest } = part.value;
      return {
        type: 'turn_end',
        ...rest,
        firstAudioMs: firstAudioMs ?? null,
        utteranceAttachmentId: utteranceAttachmentId ?? null,
        replyAttachmentId: replyAttachmentId ?? null,
      };
    }
    case 'error':
      return { type: 'error', ...part.value, turn: part.value.turn ?? null };
    default:
      return { type: part.$case, ...part.value };
  }
}

/**
 * Translates a voice conversation between the WebSocket and the run executor's `Converse` stream:
 * binary frames are audio both ways, every other message is a JSON text frame `{ type, … }`, and
 * the conversation's `closed` (or a refusal) becomes the close code.
 */
export function bridgeConversation(
  socket: WebSocket,
  opening: voicePb.ConversationOpen,
  converse: (inputs: AsyncIterable<voicePb.ConverseRequest>, signal: AbortSignal) => AsyncIterable<voicePb.ConverseResponse>,
  logger: Logger,
): void {
  const abort = new AbortController();
  const queue = createAsyncQueue<voicePb.ConverseRequest>();
  queue.push({ part: { $case: 'open', value: opening } });
  let queuedBytes = 0;
  let paused = false;
  async function* inputs(): AsyncGenerator<voicePb.ConverseRequest> {
    for await (const next of queue.drain()) {
      if (next.part?.$case === 'audio') queuedBytes -= next.part.value.length;
      if (paused && queuedBytes < RESUME_BELOW_BYTES) {
        paused = false;
        socket.resume();
      }
      yield next;
    }
  }
  socket.on('message', (data: Buffer, binary: boolean) => {
    const input = inputOf(data, binary);
    if (typeof input === 'string') {
      socket.send(JSON.stringify({ type: 'error', turn: null, errorType: 'validation_failed', detail: input }));
      return;
    }
    queue.push(input);
    if (input.part?.$case === 'audio') queuedBytes += input.part.value.length;
    if (!paused && queuedBytes > PAUSE_ABOVE_BYTES) {
      paused = true;
      socket.pause();
    }
  });
  socket.on('close', () => {
    queue.end();
    abort.abort();
  });
  socket.on('error', () => socket.terminate());

  (async () => {
    for await (const output of converse(inputs(), abort.signal)) {
      const part = output.part;
      if (!part || socket.readyState !== socket.OPEN) continue;
      if (part.$case === 'audio') socket.send(part.value, { binary: true });
      else if (part.$case === 'closed') socket.close(part.value.code, closeReason(part.value.reason));
      else socket.send(JSON.stringify(textFrame(part)));
    }
    if (socket.readyState === socket.OPEN) socket.close(1011, 'the conversation ended without closing');
  })().catch((error: unknown) => {
    if (abort.signal.aborted) return;
    const code = closeCodeOf(error);
    if (code === 1011) logger.error({ err: error }, 'a voice conversation failed');
    if (socket.readyState === socket.OPEN) socket.close(code, closeReason(classifyError(error)?.message ?? 'the conversation failed'));
  });
}
