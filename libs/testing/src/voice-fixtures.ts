import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const SCRIPT = fileURLToPath(new URL('../../../deploy/local/voice-tools.sh', import.meta.url));
let installed: Promise<unknown> | undefined;
const made = new Map<string, Promise<Buffer>>();

/** espeak-ng, lame and sox, installed by deploy/local/voice-tools.sh when missing. */
const voiceTools = () => (installed ??= run('bash', [SCRIPT], { timeout: 600_000 }));

/** What `make` writes with the voice tools in a directory of its own, which goes afterwards. */
async function madeWithTools(make: (dir: string) => Promise<Buffer>): Promise<Buffer> {
  await voiceTools();
  const dir = await mkdtemp(join(tmpdir(), 'hangar-voice-'));
  try {
    return await make(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const speak = (text: string, format: 'wav' | 'mp3' | 'pcm', sampleRate: number) =>
  madeWithTools(async (dir) => {
    const spoken = join(dir, 'spoken.wav');
    const resampled = join(dir, 'resampled.wav');
    await run('espeak-ng', ['-w', spoken, '--', text]);
    await run('sox', [spoken, '-r', String(sampleRate), '-c', '1', '-b', '16', resampled]);
    if (format === 'wav') return await readFile(resampled);
    if (format === 'pcm') {
      const raw = join(dir, 'spoken.raw');
      await run('sox', [resampled, '-t', 'raw', '-e', 'signed-integer', '-b', '16', '-L', raw]);
      return await readFile(raw);
    }
    const mp3 = join(dir, 'spoken.mp3');
    await run('lame', ['--quiet', '-b', '64', resampled, mp3]);
    return await readFile(mp3);
  });

/**
 * `text` spoken by this machine's espeak-ng: a mono 16-bit WAV at `sampleRate` (default 16 kHz,
 * the voice conversation's input rate), the same samples raw (`pcm`, little-endian, what a voice
 * conversation takes), or an MP3 encoded by lame. Made once per text and format.
 */
export function spokenAudio(text: string, options: { format?: 'wav' | 'mp3' | 'pcm'; sampleRate?: number } = {}): Promise<Buffer> {
  const format = options.format ?? 'wav';
  const sampleRate = options.sampleRate ?? 16_000;
  const key = `${format}:${sampleRate}:${text}`;
  let audio = made.get(key);
  if (!audio) {
    audio = speak(text, format, sampleRate);
    made.set(key, audio);
    audio.catch(() => made.delete(key));
  }
  return audio;
}

/** `seconds` of quiet as a mono 16-bit WAV at `sampleRate` (default 16 kHz), made by sox. */
export function silentWav(seconds: number, sampleRate = 16_000): Promise<Buffer> {
  return madeWithTools(async (dir) => {
    const file = join(dir, 'quiet.wav');
    await run('sox', ['-n', '-r', String(sampleRate), '-c', '1', '-b', '16', file, 'trim', '0', String(seconds)]);
    return readFile(file);
  });
}
