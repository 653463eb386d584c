import type { Response } from 'express';

const HEARTBEAT_MS = 15_000;

/** Opens a `text/event-stream` response; frames are written as they come, with a comment heartbeat. */
export function openEventStream(response: Response, headers: Record<string, string> = {}) {
  response.status(200).set({
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache, no-transform',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
    ...headers,
  });
  response.flushHeaders();
  const heartbeat = setInterval(() => response.write(': keep-alive\n\n'), HEARTBEAT_MS);
  response.once('close', () => clearInterval(heartbeat));
  return {
    send(event: string, data: unknown, id?: number | string) {
      response.write(`${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    },
    /** A frame without an event name (OpenAI's and the AI SDK's framing); a string is written as it is (`[DONE]`). */
    data(data: unknown) {
      response.write(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
    },
    end() {
      clearInterval(heartbeat);
      response.end();
    },
  };
}
