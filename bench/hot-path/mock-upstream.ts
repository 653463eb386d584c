import { startMockOpenAI } from '@hangar/testing';

/**
 * The mock model upstream in its own process (so neither the load generator nor Hangar pays for
 * writing its streams), one model per workload. Prints `{"url": ...}` once listening.
 */
const words = (count: number) => 'w '.repeat(count).trimEnd();
const usage = { prompt: 10, completion: 5 };
const HANG_MS = Number(process.env.BENCH_HANG_MS ?? 240_000);

const mock = await startMockOpenAI();
/** First-token latency: 64 chunks 20 ms apart. */
mock.script('ttft', () => ({ text: words(64), usage, chunkDelayMs: 20 }));
/** Short runs for the throughput workload: 4 chunks, no pause. */
mock.script('short', () => ({ text: words(4), usage }));
/** One stream as fast as the mock writes it. */
mock.script('firehose', () => ({ text: words(Number(process.env.BENCH_STREAM_CHUNKS ?? 20_000)), usage }));
/** A model call that answers nothing for minutes: its run stays Running without output. */
mock.script('hang', () => ({ delayMs: HANG_MS, then: { text: 'late', usage } }));

process.stdout.write(`${JSON.stringify({ url: mock.url })}\n`);
process.once('SIGTERM', () => void mock.close().then(() => process.exit(0)));
