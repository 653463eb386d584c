import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Busboy from 'busboy';
import { spokenAudio } from './voice-fixtures.js';

export interface RecordedSpeechRequest {
  api: 'elevenlabs' | 'openai';
  kind: 'speech' | 'transcription';
  path: string;
  query: Record<string, string>;
  headers: IncomingMessage['headers'];
  /** The JSON body of a speech request. */
  json?: Record<string, unknown>;
  /** The form fields of a transcription request, and its file. */
  fields?: Record<string, string>;
  file?: { name: string; type: string; bytes: Buffer };
}

/** How the next request is answered instead of speaking or transcribing. */
export type MockSpeechReply =
  | { status: number }
  | { hold: Promise<void> }
  | { raw: string }
  /** Speech: the 200 and its headers, then nothing until `until` settles. */
  | { headersThenHold: Promise<void> }
  /** Speech: the first half of the audio, then the rest once `until` settles. */
  | { halfThenHold: Promise<void> };

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

const readAll = async (request: IncomingMessage) => {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

function readForm(request: IncomingMessage): Promise<{ fields: Record<string, string>; file?: RecordedSpeechRequest['file'] }> {
  return new Promise((resolve, reject) => {
    const fields: Record<string, string> = {};
    let file: RecordedSpeechRequest['file'];
    const parser = Busboy({ headers: request.headers });
    parser.on('field', (name, value) => (fields[name] = value));
    parser.on('file', (_name, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => (file = { name: info.filename ?? 'file', type: info.mimeType, bytes: Buffer.concat(chunks) }));
    });
    parser.on('close', () => resolve({ fields, file }));
    parser.on('error', reject);
    request.pipe(parser);
  });
}

/**
 * A real HTTP server speaking both speech APIs Hangar adapts: the ElevenLabs-style one
 * (`/v1/text-to-speech/{voice}/stream`, `/v1/speech-to-text`) and OpenAI's (`/audio/speech`,
 * `/audio/transcriptions`). It speaks for real, with espeak-ng (an MP3 by lame for mp3 formats, a
 * WAV otherwise), and transcribes audio it knows: what it spoke itself, or what a test told it
 * with `knows`; anything else is transcribed as `unknown audio`.
 */
export async function startMockSpeech() {
  const requests: RecordedSpeechRequest[] = [];
  const transcripts = new Map<string, string>();
  const spokenPcm: { pcm: Buffer; text: string }[] = [];
  const replies: MockSpeechReply[] = [];

  async function answer(request: IncomingMessage, response: ServerResponse) {
    // A client that left while a reply was held: what is written after is dropped.
    response.on('error', () => undefined);
    const url = new URL(request.url ?? '/', 'http://mock');
    const path = url.pathname;
    const elevenSpeech = /^\/v1\/text-to-speech\/([^/]+)\/stream$/.exec(path);
    const api = path.startsWith('/v1/') ? 'elevenlabs' : 'openai';
    const kind =
      elevenSpeech || path.endsWith('/audio/speech')
        ? 'speech'
        : path.endsWith('speech-to-text') || path.endsWith('/audio/transcriptions')
          ? 'transcription'
          : undefined;
    if (request.method !== 'POST' || !kind) {
      response.writeHead(404).end();
      return;
    }
    const recorded: RecordedSpeechRequest = { api, kind, path, query: Object.fromEntries(url.searchParams), headers: request.headers };
    if (kind === 'speech') recorded.json = JSON.parse((await readAll(request)).toString('utf8')) as Record<string, unknown>;
    else Object.assign(recorded, await readForm(request));
    requests.push(recorded);
    const reply = replies.shift();
    if (reply && 'hold' in reply) await reply.hold;
    if (reply && 'status' in reply) {
      response
        .writeHead(reply.status, { 'content-type': 'application/json' })
        .end(JSON.stringify({ detail: { message: 'scripted failure' } }));
      return;
    }
    if (reply && 'raw' in reply) {
      response.writeHead(200, { 'content-type': 'application/json' }).end(reply.raw);
      return;
    }
    if (api === 'openai' && kind === 'transcription' && !/\.(flac|mp3|mp4|mpeg|mpga|m4a|ogg|wav|webm)$/.test(recorded.file?.name ?? '')) {
      // As OpenAI does: the format is read from the file name's extension.
      response.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'Invalid file format.' } }));
      return;
    }
    if (kind === 'speech') {
      const text = String(recorded.json?.text ?? recorded.json?.input ?? '');
      const format = String(api === 'elevenlabs' ? recorded.query.output_format : recorded.json?.response_format);
      const mp3 = format.startsWith('mp3');
      const audio = await spokenAudio(text, { format: mp3 ? 'mp3' : 'wav', sampleRate: 22_050 });
      transcripts.set(sha(audio), text);
      response.writeHead(200, { 'content-type': mp3 ? 'audio/mpeg' : 'audio/wav' });
      response.flushHeaders();
      if (reply && 'headersThenHold' in reply) await reply.headersThenHold;
      // In two pieces, as a streaming provider sends it.
      const half = Math.floor(audio.length / 2);
      response.write(audio.subarray(0, half));
      if (reply && 'halfThenHold' in reply) await reply.halfThenHold;
      response.end(audio.subarray(half));
      return;
    }
    const text = (recorded.file && (transcripts.get(sha(recorded.file.bytes)) ?? heardIn(recorded.file.bytes))) ?? 'unknown audio';
    const body = api === 'elevenlabs' ? { language_code: 'en', language_probability: 0.98, text, words: [] } : { text };
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  }

  /** The text of known PCM that holds the middle of a WAV file's samples (an utterance cut from a longer stream). */
  const heardIn = (wav: Buffer): string | undefined => {
    if (wav.toString('latin1', 0, 4) !== 'RIFF' || wav.length < 44 + 2048) return undefined;
    const samples = wav.subarray(44);
    const middle = Math.floor(samples.length / 4) * 2;
    const probe = samples.subarray(middle, middle + 1024);
    return spokenPcm.find((known) => known.pcm.indexOf(probe) >= 0)?.text;
  };

  const server: Server = createServer((request, response) => {
    answer(request, response).catch(() => response.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    /** Every request, in order. */
    requests,
    /** Answers the next request so instead (in order of scripting). */
    script(reply: MockSpeechReply) {
      replies.push(reply);
    },
    /** Transcribes exactly these bytes as `text`. */
    knows(audio: Buffer, text: string) {
      transcripts.set(sha(audio), text);
    },
    /**
     * Transcribes as `text` any 16-bit WAV whose samples come from this PCM (a voice conversation
     * sends each utterance as a WAV of part of what the client streamed).
     */
    hears(pcm: Buffer, text: string) {
      spokenPcm.push({ pcm, text });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export type MockSpeech = Awaited<ReturnType<typeof startMockSpeech>>;
