/** Polls `probe` until it returns something other than undefined, or fails naming what never happened. */
export async function eventually<T>(probe: () => T | undefined | Promise<T | undefined>, what: string, timeoutMs = 5000): Promise<T> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 20))) {
    const found = await probe();
    if (found !== undefined) return found;
  }
  throw new Error(`timed out waiting for ${what}`);
}

export interface SseFrame {
  event: string;
  id?: string;
  data: any;
}

/** The frames of a text/event-stream body (comments and keep-alives left out; data parsed as JSON). */
export function parseSseFrames(text: string): SseFrame[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() && !block.startsWith(':'))
    .map((block) => {
      const frame: SseFrame = { event: 'message', data: undefined };
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) frame.event = line.slice(7);
        if (line.startsWith('id: ')) frame.id = line.slice(4);
        if (line.startsWith('data: ')) frame.data = JSON.parse(line.slice(6));
      }
      return frame;
    });
}
