import { allInOneModules } from '@hangar/all-in-one';
import { startHangar, startMockOpenAI, TEST_TOKEN, type HangarUnderTest, type MockOpenAI } from '@hangar/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createHangarClient,
  HangarProblemError,
  type Fetch,
  type HangarClientOptions,
  type RunEvent,
  type RunStreamFrame,
} from '../src/index.js';

/** @hangar/client against a live all-in-one gateway and a mock OpenAI-compatible upstream. */

let mock: MockOpenAI;
let hangar: HangarUnderTest;

const clientOf = (options: Partial<HangarClientOptions> = {}) => createHangarClient({ baseUrl: hangar.url, token: TEST_TOKEN, ...options });

/** A slow answer of many chunks: one message.delta event a word, over about two seconds. */
const CHATTY_TEXT = Array.from({ length: 40 }, (_, index) => `word${index + 1}`).join(' ');

beforeAll(async () => {
  mock = await startMockOpenAI();
  mock.script('chatty', () => ({ text: CHATTY_TEXT, chunkDelayMs: 50 }));
  hangar = await startHangar({
    modules: allInOneModules(),
    overrides: { Providers: { mock: { Kind: 'OpenAICompatible', Endpoint: mock.url } } },
  });
  const client = clientOf();
  await client.agents.create({ name: 'client-echo', instructions: 'Be brief.', model: { provider: 'demo', model: 'echo' } });
  await client.agents.create({ name: 'client-chatty', model: { provider: 'mock', model: 'chatty' } });
});

afterAll(async () => {
  await hangar?.stop();
  await mock?.close();
});

/** Starts a streamed run in the background: its id once the `run` frame came, and all its frames when it ends. */
async function startStreamedRun(agentName: string) {
  const frames: RunStreamFrame[] = [];
  let started!: (runId: string) => void;
  const runId = new Promise<string>((resolve) => (started = resolve));
  const finished = (async () => {
    for await (const frame of clientOf().agents.run(agentName, { message: 'talk' })) {
      frames.push(frame);
      if (frame.event === 'run') started(frame.data.runId);
    }
    return frames;
  })();
  return { runId: await Promise.race([runId, finished.then(() => Promise.reject(new Error('no run frame')))]), finished };
}

/**
 * A fetch that cuts the connections of `/events` it is told to: the n-th one after `dropAfterFrames[n]`
 * frames went through, in the middle of the chunk it is reading (a frame may be cut in two). It
 * records the Last-Event-ID each connection was opened with, and when each drop happened.
 */
function droppingEventsFetch(dropAfterFrames: number[]) {
  const openedAfter: Array<string | null> = [];
  const droppedAt: number[] = [];
  const fetchWithDrops: Fetch = async (request) => {
    if (!new URL(request.url).pathname.endsWith('/events')) return fetch(request);
    openedAfter.push(request.headers.get('last-event-id'));
    const dropAfter = dropAfterFrames[openedAfter.length - 1];
    if (dropAfter === undefined) return fetch(request);
    const cut = new AbortController();
    const response = await fetch(request, { signal: AbortSignal.any([request.signal, cut.signal]) });
    const decoder = new TextDecoder();
    let frames = 0;
    const cutting = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        frames += decoder.decode(chunk, { stream: true }).split('\n\n').length - 1;
        if (frames < dropAfter) return controller.enqueue(chunk);
        controller.enqueue(chunk.slice(0, Math.ceil(chunk.length / 2)));
        droppedAt.push(Date.now());
        cut.abort(new Error('connection dropped'));
      },
    });
    return new Response(response.body!.pipeThrough(cutting), response);
  };
  return { fetch: fetchWithDrops, openedAfter, droppedAt };
}

const expectProblem = async (call: Promise<unknown>, status: number, errorType: string) => {
  const error = await call.then(
    () => undefined,
    (failure: unknown) => failure,
  );
  expect(error).toBeInstanceOf(HangarProblemError);
  expect(error).toMatchObject({ status, errorType });
  return error as HangarProblemError;
};

describe('@hangar/client', () => {
  it('creates an agent, streams a run and reads its record and its events', async () => {
    const client = clientOf();
    const created = await client.agents.create({ name: 'client-made', model: { provider: 'demo', model: 'echo' } });
    expect(created).toMatchObject({ name: 'client-made', version: 1 });
    expect(await client.agents.get('client-made')).toMatchObject({ origin: 'Database', definition: { version: 1 } });

    const frames: RunStreamFrame[] = [];
    for await (const frame of client.agents.run('client-made', { message: 'hello client' })) frames.push(frame);
    expect(frames[0].event).toBe('run');
    const done = frames.at(-1)!;
    if (done.event !== 'done') throw new Error(`the run ended with ${done.event}`);
    expect(done.data.status).toBe('Completed');

    const record = await client.runs.get(done.data.runId);
    expect(record).toMatchObject({ id: done.data.runId, agentName: 'client-made', agentVersion: 1, status: 'Completed' });
    const events: RunEvent[] = [];
    for await (const event of client.runs.events(done.data.runId)) events.push(event);
    expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index + 1));
    expect(events.at(-1)!.type).toBe('run.completed');

    const tail: RunEvent[] = [];
    for await (const event of client.runs.events(done.data.runId, { lastEventId: events.length - 1 })) tail.push(event);
    expect(tail.map((event) => event.seq)).toEqual([events.length]);
  });

  it('resumes the events of a live run after dropped connections, without losing or repeating one', async () => {
    const { runId, finished } = await startStreamedRun('client-chatty');
    const dropping = droppingEventsFetch([3, 12]);
    const events: RunEvent[] = [];
    for await (const event of clientOf({ fetch: dropping.fetch }).runs.events(runId)) events.push(event);

    const seqs = events.map((event) => event.seq);
    expect(seqs).toEqual(seqs.map((_, index) => index + 1));
    // Every word once, in order (a busy run may join deltas that queued up: their number is not fixed), across both drops.
    const deltas = events.filter((event) => event.type === 'message.delta');
    expect(deltas.map((event) => (event.data as { text: string }).text).join('')).toBe(CHATTY_TEXT);
    expect(events.length).toBeGreaterThan(12);
    expect(events.at(-1)!.type).toBe('run.completed');
    // Three connections: the first from the start, each next one after the last event yielded before its drop.
    const [first, ...resumedAfter] = dropping.openedAfter;
    expect(first).toBeNull();
    expect(resumedAfter).toHaveLength(2);
    expect(resumedAfter.map(Number)).toEqual([...resumedAfter.map(Number)].sort((a, b) => a - b));
    expect(Number(resumedAfter[0])).toBeGreaterThanOrEqual(1);
    // Both drops came while the run was still going: what was read after them was live.
    expect(dropping.droppedAt).toHaveLength(2);
    expect(Math.max(...dropping.droppedAt)).toBeLessThan(Date.parse(events.at(-1)!.at));
    expect((await finished).at(-1)!.event).toBe('done');
  });

  it('throws problem answers as HangarProblemError', async () => {
    const client = clientOf();
    const missing = await expectProblem(client.agents.get('no-such-agent'), 404, 'not_found');
    expect(missing.detail).toContain('no-such-agent');
    await expectProblem(client.runs.get('00000000-0000-4000-8000-000000000000'), 404, 'not_found');
    const events = client.runs.events('00000000-0000-4000-8000-000000000000')[Symbol.asyncIterator]();
    await expectProblem(events.next(), 404, 'not_found');

    const invalid = await expectProblem(
      client.agents.create({ name: '-bad name', model: { provider: 'demo', model: 'echo' } }),
      400,
      'validation_failed',
    );
    expect(invalid.errors.map((error) => error.path)).toContain('name');
    await expectProblem(clientOf({ token: 'wrong-token' }).agents.list(), 401, 'unauthorized');
  });

  it('reaches the OpenAI-compatible routes, whose OpenAI error bodies become HangarProblemError too', async () => {
    const client = clientOf();
    expect((await client.openAiCompatible.listModels()).data.map((model) => model.id)).toContain('client-echo');
    const completion = await client.openAiCompatible.createChatCompletion({
      model: 'client-echo',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(completion.choices[0]!.message.content).toContain('hi');
    const missing = await expectProblem(client.openAiCompatible.getModel('no-such-agent'), 404, 'model_not_found');
    expect(missing.detail).toContain('no-such-agent');
  });

  it('sends a keyed POST again after its answer was lost, and gets the first answer back', async () => {
    const answers: Array<{ status: number; replayed: string | null; body: any }> = [];
    let lost = 0;
    const losingFirstAnswers: Fetch = async (request) => {
      const response = await fetch(request);
      if (request.method !== 'POST') return response;
      answers.push({ status: response.status, replayed: response.headers.get('idempotent-replayed'), body: await response.clone().json() });
      // The gateway did the work; the client never hears of it.
      if (answers.length % 2 === 1) {
        lost++;
        throw new TypeError('fetch failed');
      }
      return response;
    };
    const client = clientOf({ fetch: losingFirstAnswers, retry: { baseDelayMs: 10 } });

    const agent = await client.agents.create(
      { name: 'client-retried', model: { provider: 'demo', model: 'echo' } },
      { idempotencyKey: 'create-1' },
    );
    expect(agent).toEqual(answers[0].body);
    expect(answers.slice(0, 2).map(({ status, replayed }) => [status, replayed])).toEqual([
      [201, null],
      [201, 'true'],
    ]);

    const run = await client.agents.runAndWait('client-echo', { message: 'once only' }, { idempotencyKey: 'run-1' });
    expect(run.runId).toBe(answers[2].body.runId);
    expect(answers[3]).toMatchObject({ status: 200, replayed: 'true' });
    expect(lost).toBe(2);
    const runs = await clientOf().runs.list({ query: { agentName: 'client-echo', take: '200' } });
    expect(runs.filter((record) => record.id === run.runId)).toHaveLength(1);
  });

  it('waits while the first request with its key is still executing, and returns the same run', async () => {
    const statuses: number[] = [];
    const recording: Fetch = async (request) => {
      const response = await fetch(request);
      statuses.push(response.status);
      return response;
    };
    const client = clientOf({ fetch: recording, retry: { attempts: 30, baseDelayMs: 100, maxDelayMs: 400 } });
    const first = client.agents.runAndWait('client-chatty', { message: 'slowly' }, { idempotencyKey: 'slow-1' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const second = client.agents.runAndWait('client-chatty', { message: 'slowly' }, { idempotencyKey: 'slow-1' });
    const [a, b] = await Promise.all([first, second]);
    expect(b.runId).toBe(a.runId);
    expect(statuses).toContain(409);
  });
});
