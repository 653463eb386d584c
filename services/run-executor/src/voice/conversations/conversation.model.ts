/** What a voice conversation takes and gives, whatever carries it (the gateway's WebSocket). */
export type ConversationInput =
  | { type: 'audio'; pcm: Buffer }
  | { type: 'commit' }
  | { type: 'end' }
  | { type: 'decision'; approvalId: string; approved: boolean; comment?: string };

export type ConversationOutput =
  | { type: 'ready'; conversationId: string; sessionId: string; inputSampleRate: number; outputMediaType: string }
  | { type: 'transcript'; turn: number; text: string }
  | { type: 'run'; turn: number; runId: string }
  | { type: 'reply'; turn: number; runId: string; text: string }
  | { type: 'audio'; chunk: Buffer }
  | {
      type: 'turn_end';
      turn: number;
      runId: string;
      firstAudioMs: number | null;
      utteranceAttachmentId: string | null;
      replyAttachmentId: string | null;
    }
  | { type: 'approval'; turn: number; runId: string; approvalId: string; toolName: string; arguments: string }
  | { type: 'error'; turn: number | null; errorType: string; detail: string }
  | { type: 'closed'; code: number; reason: string };

/** WebSocket close codes of a conversation (4xxx: the HTTP status they mirror). */
export const CLOSE_CODES = {
  normal: 1000,
  goingAway: 1001,
  internalError: 1011,
  idle: 4408,
  durationReached: 4410,
  utteranceTooLarge: 4413,
} as const;

/** The start of `text` a turn speaks: whole sentences up to `max` characters, else whole words, else cut. */
export function speakable(text: string, max: number): string {
  const characters = [...text.trim()];
  if (characters.length <= max) return characters.join('');
  const head = characters.slice(0, max).join('');
  const sentence = Math.max(head.lastIndexOf('. '), head.lastIndexOf('! '), head.lastIndexOf('? '), head.lastIndexOf('\n'));
  if (sentence > 0) return head.slice(0, sentence + 1).trim();
  const word = head.lastIndexOf(' ');
  return (word > 0 ? head.slice(0, word) : head).trim();
}
