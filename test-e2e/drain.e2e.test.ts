import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  eventually,
  parseSseFrames,
  spawnAllInOne,
  startMockOpenAI,
  TEST_TOKEN,
  type AllInOneProcess,
  type MockOpenAI,
} from '@hangar/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Drain (Drain:Enabled) in a real all-in-one process: on SIGTERM it reports not ready and takes no
 * new run at once, lets its runs finish within Drain:Timeout, then exits 0. What was left at the
 * timeout is read back from the same data directory by the next process.
 */

let mock: MockOpenAI;
const spawned: AllInOneProcess[] = [];
const headers = { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' };
const words = (count: number) => Array.from({ length: count }, (_, index) => `word${index}`).join(' ');

async function spawnDraining(dataDir: string, timeout: string) {
  const hangar = await spawnAllInOne({
    dataDir,
    env: {
      HANGAR__Providers__mock__Kind: 'OpenAICompatible',
      HANGAR__Providers__mock__Endpoint: mock.url,
      HANGAR__Drain__Enabled: 'true',
      HANGAR__Drain__Timeout: timeout,
      HANGAR__Scheduling__PollInterval: '200ms',
    },
  });
  spawned.push(hangar);
  return hangar;
}

const post = (hangar: AllInOneProcess, path: string, body: unknown, extra: Record<string, string> = {}) =>
  fetch(`${hangar.url}${path}`, { method: 'POST', headers: { ...headers, ...extra }, body: JSON.stringify(body) });

async function createAgent(hangar: AllInOneProcess, name: string, model: string) {
  const created = await post(hangar, '/api/agents', { name, model: { provider: 'mock', model } });
  expect(created.status, await created.text()).toBe(201);
}

/** Starts a streamed run; resolves once its first text delta arrived, with the run id and the rest of the stream. */
async function streamUntilFirstDelta(hangar: AllInOneProcess, agent: string) {
  const response = await post(hangar, `/api/agents/${agent}/run`, { message: 'talk slowly' });
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (!text.includes('text-delta')) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the stream ended before a delta:\n${text}`);
    text += decoder.decode(value, { stream: true });
  }
  const rest = (async () => {
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += decoder.decode(chunk.value, { stream: true });
    return parseSseFrames(text);
  })();
  const runId = parseSseFrames(text).find((frame) => frame.event === 'run')!.data.runId as string;
  return { runId, frames: rest };
}

const runOf = async (hangar: AllInOneProcess, runId: string) =>
  (await fetch(`${hangar.url}/api/runs/${runId}`, { headers })).json() as Promise<Record<string, any>>;

beforeAll(async () => {
  mock = await startMockOpenAI();
});

afterAll(async () => {
  await Promise.all(spawned.map((hangar) => hangar.kill()));
  await mock?.close();
});

describe('drain on SIGTERM', () => {
  it('a SIGTERM during a streamed run with Drain on lets it complete', async () => {
    mock.script('slow-stream', [{ text: words(12), chunkDelayMs: 250, usage: { prompt: 5, completion: 12 } }]);
    const dataDir = mkdtempSync(join(tmpdir(), 'hangar-drain-'));
    const hangar = await spawnDraining(dataDir, '30s');
    await createAgent(hangar, 'slow-talker', 'slow-stream');
    expect((await fetch(`${hangar.url}/readyz`)).status).toBe(200);

    const { runId, frames } = await streamUntilFirstDelta(hangar, 'slow-talker');
    hangar.child.kill('SIGTERM');

    // Not ready at once, and a new run is refused (never accepted and then dropped).
    const readiness = await eventually(async () => {
      const response = await fetch(`${hangar.url}/readyz`);
      return response.status === 503 ? await response.json() : undefined;
    }, '/readyz to answer 503');
    expect(readiness).toMatchObject({ status: 'draining' });
    const refused = await post(hangar, '/api/agents/slow-talker/run', { message: 'one more' });
    expect(refused.status).toBe(503);
    expect(await refused.json()).toMatchObject({ status: 503, errorType: 'draining' });

    const received = await frames;
    expect(received.at(-1)).toMatchObject({ event: 'done', data: { status: 'Completed' } });
    const text = received
      .filter((frame) => frame.data?.type === 'text-delta')
      .map((frame) => frame.data.text)
      .join('');
    expect(text).toBe(words(12));
    expect(await hangar.exited).toBe(0);

    const next = await spawnDraining(dataDir, '30s');
    expect(await runOf(next, runId)).toMatchObject({ status: 'Completed' });
    await next.stop();
  }, 90_000);

  it('at Drain:Timeout fails the streamed run still going (draining) and hands its queued job to the next instance', async () => {
    mock.script('endless-stream', [{ text: words(60), chunkDelayMs: 250 }]);
    mock.script('queued-slow', [{ text: words(60), chunkDelayMs: 250 }, { text: 'finished by the next instance' }]);
    const dataDir = mkdtempSync(join(tmpdir(), 'hangar-drain-'));
    const hangar = await spawnDraining(dataDir, '1500ms');
    await createAgent(hangar, 'endless-talker', 'endless-stream');
    await createAgent(hangar, 'queued-talker', 'queued-slow');
    const accepted = await post(hangar, '/api/agents/queued-talker/run', { message: 'in the background' }, { prefer: 'respond-async' });
    expect(accepted.status).toBe(202);
    const queuedRunId = ((await accepted.json()) as { runId: string }).runId;
    await eventually(async () => ((await runOf(hangar, queuedRunId)).status === 'Running' ? true : undefined), 'the queued run to run');

    const { runId, frames } = await streamUntilFirstDelta(hangar, 'endless-talker');
    const signalled = performance.now();
    hangar.child.kill('SIGTERM');
    const received = await frames;
    expect(received.at(-1)).toMatchObject({ event: 'error', data: { errorType: 'draining' } });
    expect(await hangar.exited).toBe(0);
    expect(performance.now() - signalled).toBeLessThan(10_000);

    const next = await spawnDraining(dataDir, '30s');
    expect(await runOf(next, runId)).toMatchObject({ status: 'Failed', errorType: 'draining' });
    const finished = await eventually(
      async () => {
        const run = await runOf(next, queuedRunId);
        return run.status === 'Completed' ? run : undefined;
      },
      'the handed-back queued run to complete on the next instance',
      20_000,
    );
    expect(finished.errorType ?? null).toBeNull();
    expect(mock.callsTo('queued-slow')).toBe(2);
    await next.stop();
  }, 90_000);
});
