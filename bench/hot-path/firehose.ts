import { diff, percentile, ratio, send, type Target } from './client.js';

/**
 * Events/s on one stream: one run of model `firehose` (many one-word chunks written at once), read
 * to the end (or `timeoutMs`). Two rates: upstream chunks carried per second (words of text
 * received, whatever frames they came in) and token frames per second, from the first token to the
 * last. Two gaps: the p99 gap between consecutive chunks (the events counted per second: a frame's
 * first chunk waited since the previous frame, the others came with it) and the longest stall
 * between two frames. The mock and the proxy send a frame per chunk, so for them both gaps are
 * between frames; Hangar joins deltas that queued up while it was busy, so it may carry several
 * per frame: its frame gaps alone would be a p99 of ~60 samples (the longest), against 20,000.
 */
export interface FirehoseResult {
  /** Token frames received. */
  events: number;
  eventsPerSecond: number;
  /** Upstream chunks (words) carried. */
  chunks: number;
  chunksPerSecond: number;
  /** p99 of the gaps between consecutive chunks. */
  p99GapMs: number;
  /** The longest gap between two frames. */
  maxGapMs: number;
  totalMs: number;
  error?: string;
}

const TEXT = /"(?:content|text)":"([^"]*)"/;
/** The words of text a token frame carries (each upstream chunk of the firehose is one). */
const wordsIn = (frame: string) => (TEXT.exec(frame)?.[1].match(/\S+/g) ?? []).length;

async function oneStream(target: Target, timeoutMs: number): Promise<FirehoseResult> {
  const { path, headers, body } = target.run('firehose');
  const started = performance.now();
  let chunks = 0;
  const wordsPerFrame: number[] = [];
  try {
    const { status, tokenTimes } = await send(target.url, {
      path,
      headers,
      body,
      isToken: target.isToken,
      timeoutMs,
      onFrame: (frame) => {
        if (!target.isToken(frame)) return;
        wordsPerFrame.push(wordsIn(frame));
        chunks += wordsPerFrame.at(-1)!;
      },
    });
    const spanSeconds = (tokenTimes[tokenTimes.length - 1] - tokenTimes[0]) / 1000;
    const frameGaps = tokenTimes.slice(1).map((at, index) => at - tokenTimes[index]);
    return {
      events: tokenTimes.length,
      eventsPerSecond: tokenTimes.length / spanSeconds,
      chunks,
      chunksPerSecond: chunks / spanSeconds,
      p99GapMs: percentile(chunkGaps(frameGaps, wordsPerFrame), 99),
      maxGapMs: Math.max(...frameGaps),
      totalMs: performance.now() - started,
      ...(status !== 200 && { error: `HTTP ${status}` }),
    };
  } catch (error) {
    return {
      events: 0,
      eventsPerSecond: 0,
      chunks,
      chunksPerSecond: 0,
      p99GapMs: Number.NaN,
      maxGapMs: Number.NaN,
      totalMs: performance.now() - started,
      error: String(error),
    };
  }
}

/** The gap before each chunk after the first: a frame's first chunk waited the frame's gap, the rest none. */
function chunkGaps(frameGaps: number[], wordsPerFrame: number[]): number[] {
  const gaps: number[] = [];
  wordsPerFrame.forEach((words, frame) => {
    if (frame > 0) gaps.push(frameGaps[frame - 1]);
    for (let more = 1; more < words; more++) gaps.push(0);
  });
  return gaps;
}

const line = (name: string, result: FirehoseResult) =>
  `  ${name.padEnd(14)} ${result.chunks} chunks in ${result.events} frames in ${(result.totalMs / 1000).toFixed(2)} s: ` +
  `${result.chunksPerSecond.toFixed(0)} chunks/s, ${result.eventsPerSecond.toFixed(0)} frames/s, ` +
  `p99 gap between chunks ${result.p99GapMs.toFixed(2)} ms, longest between frames ${result.maxGapMs.toFixed(2)} ms${result.error ? ` — ${result.error}` : ''}`;

export async function measureFirehose(direct: Target, proxy: Target, hangar: Target, chunks: number, timeoutMs: number) {
  const results = {
    direct: await oneStream(direct, timeoutMs),
    proxy: await oneStream(proxy, timeoutMs),
    hangar: await oneStream(hangar, timeoutMs),
  };
  console.log(`one stream of ${chunks} one-word chunks written at once:`);
  console.log(line('mock directly', results.direct));
  console.log(line('proxy', results.proxy));
  console.log(line('Hangar', results.hangar));
  console.log(
    `  Hangar: ${ratio(results.hangar.chunksPerSecond, results.proxy.chunksPerSecond)} the proxy's chunks/s; ` +
      `p99 gap between chunks added ${diff(results.hangar.p99GapMs, results.direct.p99GapMs)} vs the mock (proxy ${diff(results.proxy.p99GapMs, results.direct.p99GapMs)}); ` +
      `longest gap between frames ${diff(results.hangar.maxGapMs, results.proxy.maxGapMs)} vs the proxy`,
  );
  return results;
}
