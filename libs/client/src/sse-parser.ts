/** One dispatched server-sent event. */
export interface SseFrame {
  /** `event:` (`message` when the frame names none). */
  event: string;
  /** Every `data:` line of the frame, joined by `\n`. */
  data: string;
  /** `id:` of this frame, when it has one. */
  id?: string;
  /** `retry:` in milliseconds, when the frame has one. */
  retry?: number;
}

/**
 * The WHATWG event-stream grammar over text that arrives in arbitrary pieces: lines end in CRLF, LF
 * or CR (a CR at the end of a piece may be the first half of a CRLF); a blank line dispatches the
 * frame; `:` lines are comments (heartbeats); a frame without data is not dispatched.
 */
export function createSseDecoder() {
  let pending = '';
  let skipLeadingLf = false;
  let event = '';
  let data: string[] = [];
  let id: string | undefined;
  let retry: number | undefined;

  const reset = () => {
    event = '';
    data = [];
    id = undefined;
    retry = undefined;
  };

  function takeLine(line: string, frames: SseFrame[]) {
    if (line === '') {
      if (data.length)
        frames.push({
          event: event || 'message',
          data: data.join('\n'),
          ...(id !== undefined && { id }),
          ...(retry !== undefined && { retry }),
        });
      reset();
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
    else if (field === 'id' && !value.includes('\0')) id = value;
    else if (field === 'retry' && /^\d+$/.test(value)) retry = Number(value);
  }

  /** The frames completed by this piece of text. */
  function push(text: string): SseFrame[] {
    const frames: SseFrame[] = [];
    let start = 0;
    if (skipLeadingLf && text.startsWith('\n')) start = 1;
    skipLeadingLf = false;
    pending += text.slice(start);
    let lineStart = 0;
    for (let index = 0; index < pending.length; index++) {
      const char = pending[index];
      if (char !== '\n' && char !== '\r') continue;
      takeLine(pending.slice(lineStart, index), frames);
      if (char === '\r') {
        if (index + 1 === pending.length) skipLeadingLf = true;
        else if (pending[index + 1] === '\n') index++;
      }
      lineStart = index + 1;
    }
    pending = pending.slice(lineStart);
    return frames;
  }

  return { push };
}

/**
 * The frames of an event-stream body as they complete. A frame cut off by the end of the stream
 * (or by a dropped connection, which rejects here) is never dispatched.
 */
export async function* parseSse(body: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>): AsyncGenerator<SseFrame> {
  const decoder = new TextDecoder('utf-8', { ignoreBOM: false });
  const sse = createSseDecoder();
  for await (const chunk of body as AsyncIterable<Uint8Array>) {
    yield* sse.push(decoder.decode(chunk, { stream: true }));
  }
  yield* sse.push(decoder.decode());
}
