import { describe, expect, it } from 'vitest';
import { coalescedTextDeltas } from '../src/runs/coalesced-deltas.js';

/** How a run reads a model's stream: deltas that queued up while it was busy come joined. */

type Part = { type: string; id?: string; text?: string };
const delta = (text: string, id = 't'): Part => ({ type: 'text-delta', id, text });

/** A model stream the test feeds part by part; `end` and `fail` finish it; `state` counts reads and tells of a cancel. */
function controlledSource() {
  const queue: Array<Part | 'end' | Error> = [];
  let waiting: (() => void) | undefined;
  const state = { canceled: false, reads: 0 };
  const push = (item: Part | 'end' | Error) => {
    queue.push(item);
    waiting?.();
  };
  const source = new ReadableStream<Part>(
    {
      async pull(controller) {
        state.reads += 1;
        while (!queue.length) await new Promise<void>((resolve) => (waiting = resolve));
        const item = queue.shift()!;
        if (item instanceof Error) controller.error(item);
        else if (item === 'end') controller.close();
        else controller.enqueue(item);
      },
      cancel() {
        state.canceled = true;
      },
    },
    // Nothing is read before it is asked for: `reads` counts what the reader asked.
    { highWaterMark: 0 },
  );
  return {
    source,
    state,
    send: (...parts: Part[]) => parts.forEach(push),
    end: () => push('end'),
    fail: (error: Error) => push(error),
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));
/** Long enough for the reader to read whatever it may (it gives the event loop a turn now and then). */
const settle = async () => {
  for (let turn = 0; turn < 10; turn++) await tick();
};

describe('coalesced text deltas', () => {
  it('hands on a delta that finds the reader waiting at once and alone', async () => {
    const model = controlledSource();
    const parts = coalescedTextDeltas(model.source);
    const first = parts.next();
    model.send(delta('Hel'));
    expect(await first).toEqual({ done: false, value: delta('Hel') });
    const second = parts.next();
    model.send(delta('lo'));
    expect(await second).toEqual({ done: false, value: delta('lo') });
    model.end();
    expect(await parts.next()).toEqual({ done: true, value: undefined });
  });

  it('joins the deltas of one text that queued up, and keeps every other part alone and in order', async () => {
    const model = controlledSource();
    model.send(
      { type: 'text-start', id: 'a' },
      delta('one ', 'a'),
      delta('two ', 'a'),
      delta('three', 'a'),
      { type: 'tool-call' },
      delta('x', 'a'),
      delta('y', 'b'),
      delta('z', 'b'),
      { type: 'finish' },
    );
    model.end();
    const parts = coalescedTextDeltas(model.source);
    // The first part finds the reader waiting; while it is busy with it, the rest are read ahead.
    const seen: Part[] = [(await parts.next()).value!];
    await tick();
    for await (const part of parts) seen.push(part);
    expect(seen).toEqual([
      { type: 'text-start', id: 'a' },
      delta('one two three', 'a'),
      { type: 'tool-call' },
      delta('x', 'a'),
      delta('yz', 'b'),
      { type: 'finish' },
    ]);
  });

  it('reads no further ahead than it may', async () => {
    const model = controlledSource();
    model.send(...Array.from({ length: 10 }, (_, index) => delta(String(index))));
    const parts = coalescedTextDeltas(model.source, 4);
    const first = await parts.next();
    await settle();
    // The first read was handed on at once; then four are held and nothing more is asked for.
    expect(first.value).toEqual(delta('0'));
    expect(model.state.reads).toBe(5);
    expect((await parts.next()).value).toEqual(delta('1234'));
    await settle();
    expect(model.state.reads).toBe(9);
    await parts.return(undefined);
  });

  it('gives the event loop turns while it reads a stream that is all buffered already', async () => {
    const model = controlledSource();
    model.send(...Array.from({ length: 100 }, (_, index) => delta(String(index))));
    model.end();
    const parts = coalescedTextDeltas(model.source);
    await parts.next();
    let readWhenTheLoopTurned = -1;
    setImmediate(() => (readWhenTheLoopTurned = model.state.reads));
    await settle();
    expect(readWhenTheLoopTurned).toBeGreaterThan(0);
    expect(readWhenTheLoopTurned).toBeLessThan(20);
    await parts.return(undefined);
  });

  it('throws the source’s failure after the parts read before it', async () => {
    const model = controlledSource();
    model.send(delta('a'), delta('b'));
    model.fail(new Error('upstream reset'));
    const seen: Part[] = [];
    await expect(
      (async () => {
        for await (const part of coalescedTextDeltas(model.source)) seen.push(part);
      })(),
    ).rejects.toThrow('upstream reset');
    expect(seen.map((part) => part.text).join('')).toBe('ab');
  });

  it('cancels the source at once when the reader stops first, a read still pending', async () => {
    const model = controlledSource();
    model.send(delta('a'));
    const parts = coalescedTextDeltas(model.source);
    await parts.next();
    await settle();
    await parts.return(undefined);
    await settle();
    expect(model.state.canceled).toBe(true);
  });

  it('reads at least one part ahead whatever it is told', async () => {
    const model = controlledSource();
    model.send(delta('a'), delta('b'));
    model.end();
    const seen: Part[] = [];
    for await (const part of coalescedTextDeltas(model.source, 0)) seen.push(part);
    expect(seen.map((part) => part.text).join('')).toBe('ab');
  });
});
