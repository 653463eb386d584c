import { describe, expect, it } from 'vitest';
import { speakable } from '../src/voice/conversations/conversation.model.js';
import { createUtteranceDetector, wavFile } from '../src/voice/conversations/utterance-detector.js';

const RATE = 16_000;
/** `ms` of a 440 Hz tone at `amplitude` (or silence at 0), 16-bit little-endian mono. */
function tone(ms: number, amplitude = 8000): Buffer {
  const samples = Math.round((RATE * ms) / 1000);
  const pcm = Buffer.alloc(samples * 2);
  for (let index = 0; index < samples; index++)
    pcm.writeInt16LE(Math.round(amplitude * Math.sin((2 * Math.PI * 440 * index) / RATE)), index * 2);
  return pcm;
}
const silence = (ms: number) => tone(ms, 0);
const detector = (overrides: Partial<Parameters<typeof createUtteranceDetector>[0]> = {}) =>
  createUtteranceDetector({ sampleRate: RATE, maxBytes: 8_388_608, maxDurationMs: 60_000, silenceMs: 300, ...overrides });

describe('utterance detection', () => {
  it('drops the quiet before speech and ends the utterance after the configured quiet, without it', () => {
    const cut = detector();
    expect(cut.push(silence(500))).toEqual([]);
    expect(cut.push(tone(400))).toEqual([]);
    const events = cut.push(silence(400));
    expect(events).toHaveLength(1);
    expect(events[0].type).toBe('utterance');
    // 400 ms of speech, the 300 ms of quiet that ended it left out; 100 ms of quiet after that are pending.
    expect((events[0] as { pcm: Buffer }).pcm.length).toBe(tone(400).length);
  });

  it('finds utterances across pieces of any size, and two in one piece', () => {
    const cut = detector();
    // Whole 20 ms frames, so that each utterance is exactly its tone.
    const audio = Buffer.concat([tone(200), silence(360), tone(300), silence(360)]);
    const events = [];
    for (let offset = 0; offset < audio.length; offset += 333) events.push(...cut.push(audio.subarray(offset, offset + 333)));
    expect(events.map((event) => event.type)).toEqual(['utterance', 'utterance']);
    const both = detector().push(audio);
    expect(both.map((event) => (event as { pcm: Buffer }).pcm.length)).toEqual([tone(200).length, tone(300).length]);
  });

  it('keeps a short pause inside an utterance', () => {
    const cut = detector();
    expect(cut.push(Buffer.concat([tone(200), silence(200), tone(200)]))).toEqual([]);
    expect(cut.push(silence(300))[0]).toMatchObject({ type: 'utterance' });
  });

  it('commits what was said when the client says so, and nothing when nothing was', () => {
    const cut = detector();
    cut.push(silence(100));
    expect(cut.commit()).toBeUndefined();
    cut.push(tone(250));
    expect(cut.commit()?.length).toBe(tone(250).length);
    expect(cut.commit()).toBeUndefined();
  });

  it('refuses an utterance past its byte or duration limit, naming which', () => {
    expect(detector({ maxBytes: 8000 }).push(tone(500))).toEqual([{ type: 'too-large', limit: 'bytes' }]);
    expect(detector({ maxDurationMs: 250 }).push(tone(500))).toEqual([{ type: 'too-large', limit: 'duration' }]);
    // Quiet never counts: a client may stream its microphone for as long as it likes.
    expect(detector({ maxBytes: 8000 }).push(silence(2000))).toEqual([]);
  });

  it('wraps PCM in a WAV header a reader accepts', () => {
    const wav = wavFile(tone(100), RATE);
    expect(wav.toString('latin1', 0, 4)).toBe('RIFF');
    expect(wav.readUInt32LE(24)).toBe(RATE);
    expect(wav.readUInt32LE(40)).toBe(tone(100).length);
    expect(wav.length).toBe(44 + tone(100).length);
  });
});

describe('what a turn speaks', () => {
  it('keeps whole sentences within Voice:Conversation:MaxSpokenCharactersPerTurn, else whole words', () => {
    expect(speakable('  Short answer.  ', 50)).toBe('Short answer.');
    expect(speakable('First sentence. Second sentence is long.', 30)).toBe('First sentence.');
    expect(speakable('one two three four five', 12)).toBe('one two');
    expect(speakable('abcdefghij', 4)).toBe('abcd');
    // Characters are code points: an emoji is one.
    expect(speakable('👍👍👍', 2)).toBe('👍👍');
  });
});
