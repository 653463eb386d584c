/**
 * How long {@link eventually} waits unless told: on the split shape what a test waits for crosses
 * processes, nine of them on two cores (a workflow's two super steps took over 5 s in a loaded CI
 * run, 2026-12-02), as vitest.config.ts gives expect.poll 10 s there.
 */
const EVENTUALLY_MS = process.env.HANGAR_TEST_TOPOLOGY === 'split' ? 15_000 : 5_000;

/** Polls `probe` until it returns something other than undefined, or fails naming what never happened. */
export async function eventually<T>(
  probe: () => T | undefined | Promise<T | undefined>,
  what: string,
  timeoutMs = EVENTUALLY_MS,
): Promise<T> {
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
