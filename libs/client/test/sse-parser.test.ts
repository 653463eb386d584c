import { describe, expect, it } from 'vitest';
import { parseSse, type SseFrame } from '../src/sse-parser.js';

const encoder = new TextEncoder();

/** The frames parsed from `pieces`, each sent as its own chunk. */
async function framesOf(pieces: Array<string | Uint8Array>): Promise<SseFrame[]> {
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const piece of pieces) controller.enqueue(typeof piece === 'string' ? encoder.encode(piece) : piece);
      controller.close();
    },
  });
  const frames: SseFrame[] = [];
  for await (const frame of parseSse(stream)) frames.push(frame);
  return frames;
}

/** Every way to cut `text` in two, and one byte per chunk. */
function cuts(text: string): Array<Uint8Array[]> {
  const bytes = encoder.encode(text);
  const halves = Array.from({ length: bytes.length + 1 }, (_, at) => [bytes.slice(0, at), bytes.slice(at)]);
  return [...halves, Array.from(bytes, (byte) => Uint8Array.of(byte))];
}

const GATEWAY_STREAM =
  'id: 1\nevent: run.started\ndata: {"seq":1,"type":"run.started"}\n\n' +
  ': keep-alive\n\n' +
  'id: 2\nevent: message.delta\ndata: {"seq":2,"text":"héllo ✓"}\n\n';

describe('parseSse', () => {
  it('reads the gateway’s frames with ids, skipping heartbeat comments, however the bytes are cut', async () => {
    const expected = [
      { event: 'run.started', data: '{"seq":1,"type":"run.started"}', id: '1' },
      { event: 'message.delta', data: '{"seq":2,"text":"héllo ✓"}', id: '2' },
    ];
    for (const chunks of cuts(GATEWAY_STREAM)) expect(await framesOf(chunks)).toEqual(expected);
  });

  it('joins multi-line data with newlines and defaults the event name to message', async () => {
    expect(await framesOf(['data: first\ndata:second\ndata\n\n'])).toEqual([{ event: 'message', data: 'first\nsecond\n' }]);
  });

  it('accepts CRLF and CR line ends, also with a CRLF split across chunks', async () => {
    const text = 'event: a\r\ndata: 1\r\n\r\nevent: b\rdata: 2\r\r';
    for (const chunks of cuts(text)) {
      expect(await framesOf(chunks)).toEqual([
        { event: 'a', data: '1' },
        { event: 'b', data: '2' },
      ]);
    }
  });

  it('keeps only the first space after the colon, and reads retry', async () => {
    expect(await framesOf(['retry: 1500\ndata:  two spaces\n\n'])).toEqual([{ event: 'message', data: ' two spaces', retry: 1500 }]);
  });

  it('dispatches no frame without data, and drops a frame the stream cut off', async () => {
    expect(await framesOf(['event: empty\n\n', 'id: 7\n\n', 'data: whole\n\n', 'event: cut\ndata: half'])).toEqual([
      { event: 'message', data: 'whole' },
    ]);
  });

  it('ignores an id holding NUL and fields it does not know, and a byte-order mark at the start', async () => {
    expect(await framesOf(['\uFEFFid: a\0b\nfoo: bar\ndata: x\n\n'])).toEqual([{ event: 'message', data: 'x' }]);
  });
});
