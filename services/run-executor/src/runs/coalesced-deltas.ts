/** How many parts of a model's stream are read ahead of the run at most. */
export const READ_AHEAD_PARTS = 512;
/**
 * How many parts are read in one go before the event loop gets its turn: a model's stream that is
 * all buffered already is read in microtasks only, which would hold off the I/O that carries the
 * run's frames out (and every other request) until the read-ahead is full.
 */
const PARTS_PER_TURN = 8;

type Part = { type: string };
type TextDelta = Part & { type: 'text-delta'; id: string; text: string };

const isTextDelta = (part: Part | undefined): part is TextDelta => part?.type === 'text-delta';

/**
 * A model's stream parts, read ahead of the run: text deltas of one text that arrived while the
 * run was still busy with earlier parts are handed on as one (their texts joined). A run pays per
 * part it records and forwards (an event, a pub/sub message, a gRPC message, an SSE frame), so a
 * model that streams faster than that is carried in fewer, larger deltas instead of falling behind;
 * a part that finds the run waiting goes on alone and at once. Every other part goes on alone, in
 * order. A failure of the source is thrown after the parts read before it; a run that stops reading
 * first cancels the source at once (a model call still streaming is closed).
 */
export async function* coalescedTextDeltas<P extends Part>(source: ReadableStream<P>, readAhead = READ_AHEAD_PARTS): AsyncGenerator<P> {
  const reader = source.getReader();
  const limit = Math.max(1, readAhead);
  let ahead: P[] = [];
  let ended: { error?: unknown } | undefined;
  let stopped = false;
  let partsArrived: (() => void) | undefined;
  let roomMade: (() => void) | undefined;

  void (async () => {
    try {
      for (let readThisTurn = 0; ;) {
        if (ahead.length >= limit) await new Promise<void>((resolve) => (roomMade = resolve));
        else if (readThisTurn >= PARTS_PER_TURN) {
          await new Promise((resolve) => setImmediate(resolve));
          readThisTurn = 0;
        }
        if (stopped) break;
        if (ahead.length >= limit) continue;
        const step = await reader.read();
        if (step.done) break;
        ahead.push(step.value);
        readThisTurn += 1;
        partsArrived?.();
      }
      ended = {};
    } catch (error) {
      ended = { error };
    }
    partsArrived?.();
  })();

  try {
    for (;;) {
      if (!ahead.length) {
        if (ended) {
          if ('error' in ended) throw ended.error;
          return;
        }
        await new Promise<void>((resolve) => (partsArrived = resolve));
        partsArrived = undefined;
        continue;
      }
      const taken = ahead;
      ahead = [];
      roomMade?.();
      roomMade = undefined;
      for (let index = 0; index < taken.length;) {
        const part = taken[index++];
        if (!isTextDelta(part)) {
          yield part;
          continue;
        }
        let text = part.text;
        for (let next = taken[index]; isTextDelta(next) && next.id === part.id; next = taken[++index]) text += next.text;
        yield text === part.text ? part : { ...part, text };
      }
    }
  } finally {
    stopped = true;
    roomMade?.();
    // Settles a read still pending (as done) and closes the source; after its end it changes nothing.
    if (!ended) reader.cancel().catch(() => undefined);
  }
}
