import { createInProcessPubSub } from '@hangar/messaging';
import { createLogger } from '@hangar/platform';
import { describe, expect, it } from 'vitest';
import { typedPubSub } from '../src/events/channels.js';
import type { NewRunEvent, RunEventTarget } from '../src/events/event.model.js';
import { createEventWriter } from '../src/events/event-writer.js';
import { createRecorder } from '../src/recording.js';

const RUN = '00000000-0000-4000-8000-0000000000bb';
const target: RunEventTarget = { runId: RUN, rootRunId: RUN, tenantId: 't1', agentName: 'a' };

/** A writer over a store that records each statement (one batch of events per call). */
function setUp(batchWindowMs: number) {
  const logger = createLogger({ name: 'writer-test', level: 'silent' });
  const statements: string[][] = [];
  const writer = createEventWriter(
    {
      events: {
        appendEvents: async (_target, events: NewRunEvent[]) => {
          statements.push(events.map((event) => `${event.seq}:${event.type}`));
          return events.map((event) => ({ ...event, runId: RUN, at: new Date().toISOString() }));
        },
        lastSeq: async () => 0,
      },
      pubsub: typedPubSub(createInProcessPubSub(), logger),
      record: createRecorder(logger),
      eventsStored: () => {},
      enabled: true,
      batchWindowMs,
    },
    target,
  );
  return { writer, statements };
}

describe('the event writer’s batch window (Hangar:Runs:EventBatchWindow)', () => {
  it('stores batchable events that arrive within the window in one statement, in order', async () => {
    const { writer, statements } = setUp(30);
    const stored = [writer.emit('run.started', {}, { batch: true })];
    await new Promise((resolve) => setTimeout(resolve, 5));
    for (let delta = 0; delta < 3; delta++) stored.push(writer.emit('message.delta', { text: 'w' }, { batch: true }));
    await Promise.all(stored);
    expect(statements).toEqual([['1:run.started', '2:message.delta', '3:message.delta', '4:message.delta']]);
  });

  it('writes at once when an event that is not batchable arrives, with the batched ones before it', async () => {
    const { writer, statements } = setUp(60_000);
    void writer.emit('message.delta', { text: 'a' }, { batch: true });
    await writer.emit('tool.invoking', { toolName: 'clock' });
    expect(statements).toEqual([['1:message.delta', '2:tool.invoking']]);
  });

  it('drains without waiting out the window (a run’s end)', async () => {
    const { writer, statements } = setUp(60_000);
    void writer.emit('message.delta', { text: 'a' }, { batch: true });
    void writer.emit('message.completed', { text: 'a' }, { batch: true });
    await writer.drained();
    expect(statements).toEqual([['1:message.delta', '2:message.completed']]);
  });

  it('writes each event at once with a window of 0, batching only what arrives during a write', async () => {
    const { writer, statements } = setUp(0);
    const first = writer.emit('message.delta', { text: 'a' }, { batch: true });
    const rest = [
      writer.emit('message.delta', { text: 'b' }, { batch: true }),
      writer.emit('message.delta', { text: 'c' }, { batch: true }),
    ];
    await Promise.all([first, ...rest]);
    expect(statements).toEqual([['1:message.delta'], ['2:message.delta', '3:message.delta']]);
  });
});
