import { diff, percentile, ratio, send, type Target } from './client.js';

/**
 * Events/s on one stream: one run of model `firehose` (many tiny chunks written at once), read to the
 * end (or `timeoutMs`): token frames per second from the first to the last token, and the p99 gap
 * between consecutive token frames.
 */
export interface FirehoseResult {
  events: number;
  eventsPerSecond: number;
  p99GapMs: number;
  totalMs: number;
  error?: string;
}

async function oneStream(target: Target, timeoutMs: number): Promise<FirehoseResult> {
  const { path, headers, body } = target.run('firehose');
  const started = performance.now();
  try {
    const { status, tokenTimes } = await send(target.url, { path, headers, body, isToken: target.isToken, timeoutMs });
    const spanSeconds = (tokenTimes[tokenTimes.length - 1] - tokenTimes[0]) / 1000;
    const gaps = tokenTimes.slice(1).map((at, index) => at - tokenTimes[index]);
    return {
      events: tokenTimes.length,
      eventsPerSecond: tokenTimes.length / spanSeconds,
      p99GapMs: percentile(gaps, 99),
      totalMs: performance.now() - started,
      ...(status !== 200 && { error: `HTTP ${status}` }),
    };
  } catch (error) {
    return { events: 0, eventsPerSecond: 0, p99GapMs: Number.NaN, totalMs: performance.now() - started, error: String(error) };
  }
}

const line = (name: string, result: FirehoseResult) =>
  `  ${name.padEnd(14)} ${result.events} events in ${(result.totalMs / 1000).toFixed(2)} s, ${result.eventsPerSecond.toFixed(0)} events/s, ` +
  `p99 gap ${result.p99GapMs.toFixed(2)} ms${result.error ? ` — ${result.error}` : ''}`;

export async function measureFirehose(direct: Target, proxy: Target, hangar: Target, chunks: number, timeoutMs: number) {
  const results = {
    direct: await oneStream(direct, timeoutMs),
    proxy: await oneStream(proxy, timeoutMs),
    hangar: await oneStream(hangar, timeoutMs),
  };
  console.log(`one stream of ${chunks} chunks written at once:`);
  console.log(line('mock directly', results.direct));
  console.log(line('proxy', results.proxy));
  console.log(line('Hangar', results.hangar));
  console.log(
    `  Hangar: ${ratio(results.hangar.eventsPerSecond, results.proxy.eventsPerSecond)} the proxy's events/s; ` +
      `p99 gap added ${diff(results.hangar.p99GapMs, results.direct.p99GapMs)} vs the mock (proxy ${diff(results.proxy.p99GapMs, results.direct.p99GapMs)})`,
  );
  return results;
}
