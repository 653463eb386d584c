/**
 * Cuts a stream of 16-bit little-endian mono PCM into utterances by energy: speech starts when a
 * 20 ms frame is louder than the threshold, and the utterance ends after `silenceMs` of quieter
 * frames (or when the client commits it). Audio before any speech is dropped, so a client may
 * stream its microphone continuously. An utterance that grows past `maxBytes` or `maxDurationMs`
 * is refused whole: the caller closes the conversation rather than cut a sentence in two.
 */
export interface UtteranceLimits {
  sampleRate: number;
  maxBytes: number;
  maxDurationMs: number;
  /** Quiet after speech that ends an utterance. */
  silenceMs?: number;
  /** Root mean square amplitude (of 32768) above which a frame is speech. */
  speechLevel?: number;
}

export type UtteranceEvent = { type: 'utterance'; pcm: Buffer } | { type: 'too-large'; limit: 'bytes' | 'duration' };

const FRAME_MS = 20;
// A room's hum sits far below this; a voice at conversational distance far above.
const DEFAULT_SPEECH_LEVEL = 500;
const DEFAULT_SILENCE_MS = 700;

export function createUtteranceDetector(limits: UtteranceLimits) {
  const frameBytes = Math.max(2, Math.round((limits.sampleRate * FRAME_MS) / 1000) * 2);
  const silenceFrames = Math.ceil((limits.silenceMs ?? DEFAULT_SILENCE_MS) / FRAME_MS);
  const speechLevel = limits.speechLevel ?? DEFAULT_SPEECH_LEVEL;
  const maxBytes = Math.min(limits.maxBytes, Math.floor((limits.maxDurationMs / 1000) * limits.sampleRate) * 2);
  const durationIsTighter = maxBytes < limits.maxBytes;
  let pending: Buffer = Buffer.alloc(0);
  let frames: Buffer[] = [];
  let size = 0;
  let speaking = false;
  let quietFrames = 0;

  const loudness = (frame: Buffer) => {
    let sum = 0;
    const samples = frame.length >> 1;
    for (let offset = 0; offset + 1 < frame.length; offset += 2) {
      const sample = frame.readInt16LE(offset);
      sum += sample * sample;
    }
    return Math.sqrt(sum / Math.max(1, samples));
  };

  const take = (): Buffer | undefined => {
    const pcm = frames.length ? Buffer.concat(frames) : undefined;
    frames = [];
    size = 0;
    speaking = false;
    quietFrames = 0;
    return pcm;
  };

  return {
    /** Feeds audio; returns the utterances it completed, or a refusal. */
    push(audio: Buffer): UtteranceEvent[] {
      const events: UtteranceEvent[] = [];
      pending = pending.length ? Buffer.concat([pending, audio]) : audio;
      let offset = 0;
      for (; offset + frameBytes <= pending.length; offset += frameBytes) {
        const frame = pending.subarray(offset, offset + frameBytes);
        const loud = loudness(frame) >= speechLevel;
        if (!speaking && !loud) continue;
        speaking = true;
        frames.push(Buffer.from(frame));
        size += frame.length;
        if (size > maxBytes) {
          take();
          pending = Buffer.alloc(0);
          return [...events, { type: 'too-large', limit: durationIsTighter ? 'duration' : 'bytes' }];
        }
        quietFrames = loud ? 0 : quietFrames + 1;
        if (quietFrames >= silenceFrames) {
          // The trailing quiet is not part of what was said.
          frames.splice(frames.length - quietFrames, quietFrames);
          const pcm = take();
          if (pcm) events.push({ type: 'utterance', pcm });
        }
      }
      pending = Buffer.from(pending.subarray(offset));
      return events;
    },
    /** The client says the utterance is over: what was said so far, if anything. */
    commit(): Buffer | undefined {
      if (pending.length && speaking) frames.push(pending);
      pending = Buffer.alloc(0);
      return take();
    },
  };
}

/** A WAV file of 16-bit mono PCM, the container every speech-to-text API takes. */
export function wavFile(pcm: Buffer, sampleRate: number): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + pcm.length, 4);
  header.write('WAVEfmt ', 8, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(pcm.length, 40);
  return Buffer.concat([header, pcm]);
}
