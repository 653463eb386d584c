import { diff, ms, percentile, send, type Target } from './client.js';

/**
 * First-token added latency: sequential streamed runs of model `ttft` (64 chunks 20 ms apart), each
 * sample timed direct from the mock, through the proxy, through Hangar's run route and through its
 * OpenAI-compatible `/v1/chat/completions`; the figures are percentiles of the per-sample
 * differences (via X − direct). Fresh connections every time, so no target profits from a warm
 * socket. Hangar's streams are read to their end (leaving one would cancel the run); the mock's and
 * the proxy's are left at the first token.
 */
export interface FirstTokenResult {
  /** `proxy`, `hangar` (the native run route) and `compatible` (`/v1/chat/completions`). */
  added: Record<string, { p50: number; p99: number }>;
  /** Hangar's last token minus the mock's last token (p50), read to the end on both. */
  hangarLastTokenP50: number;
}

async function firstToken(target: Target, toTheEnd: boolean) {
  const { path, headers, body } = target.run('ttft');
  let first: number | undefined;
  const started = performance.now();
  const exchange = await send(target.url, {
    path,
    headers,
    body,
    agent: false,
    timeoutMs: 30_000,
    onFrame: (frame) => {
      if (first === undefined && target.isToken(frame)) first = performance.now() - started;
      return !toTheEnd && first !== undefined;
    },
  });
  if (exchange.status !== 200 || first === undefined) throw new Error(`${target.name}: ${exchange.status}, no token`);
  return { first, last: performance.now() - started };
}

export async function measureFirstToken(
  direct: Target,
  proxy: Target,
  hangar: Target,
  compatible: Target,
  samples: number,
): Promise<FirstTokenResult> {
  for (let warm = 0; warm < 5; warm += 1)
    await Promise.all([firstToken(proxy, false), firstToken(hangar, true), firstToken(compatible, true)]);
  const added: Record<string, number[]> = { proxy: [], hangar: [], compatible: [] };
  const directLast: number[] = [];
  const hangarLast: number[] = [];
  for (let sample = 0; sample < samples; sample += 1) {
    const base = await firstToken(direct, sample % 10 === 0);
    if (sample % 10 === 0) directLast.push(base.last);
    added.proxy.push((await firstToken(proxy, false)).first - base.first);
    const through = await firstToken(hangar, true);
    added.hangar.push(through.first - base.first);
    hangarLast.push(through.last);
    added.compatible.push((await firstToken(compatible, true)).first - base.first);
  }
  const result: FirstTokenResult = {
    added: Object.fromEntries(
      Object.entries(added).map(([name, values]) => [name, { p50: percentile(values, 50), p99: percentile(values, 99) }]),
    ),
    hangarLastTokenP50: percentile(hangarLast, 50) - percentile(directLast, 50),
  };
  const { proxy: viaProxy, hangar: viaHangar, compatible: viaCompatible } = result.added;
  // Where the tail lies: slow samples bunched at the start are warm-up, spread ones are noise.
  const slowest = added.hangar
    .map((value, sample) => ({ value, sample }))
    .sort((a, b) => b.value - a.value)
    .slice(0, 5);
  console.log(`first token added vs the mock directly (${samples} sequential samples, 64 chunks 20 ms apart):`);
  console.log(`  proxy   p50 ${ms(viaProxy.p50)}, p99 ${ms(viaProxy.p99)}`);
  console.log(
    `  Hangar  p50 ${ms(viaHangar.p50)} (${diff(viaHangar.p50, viaProxy.p50)} vs proxy), p99 ${ms(viaHangar.p99)} (${diff(viaHangar.p99, viaProxy.p99)} vs proxy); ` +
      `last token p50 ${diff(result.hangarLastTokenP50, 0)} vs the mock`,
  );
  console.log(
    `  Hangar /v1/chat/completions  p50 ${ms(viaCompatible.p50)} (${diff(viaCompatible.p50, viaHangar.p50)} vs the run route), ` +
      `p99 ${ms(viaCompatible.p99)} (${diff(viaCompatible.p99, viaHangar.p99)} vs the run route)`,
  );
  console.log(`  Hangar's slowest samples: ${slowest.map(({ value, sample }) => `#${sample} ${ms(value)}`).join(', ')}`);
  return result;
}
