import { randomBytes } from 'node:crypto';
import { Agent } from 'node:http';
import { availableParallelism } from 'node:os';
import { errorKind, ratio, send, type Exchange, type Target } from './client.js';
import { cpuAccount, describeCpuAccount } from '../cpu-by-process.js';

/**
 * Short runs/s: `clients` concurrent clients each start run after run of model `short` (4 chunks)
 * for `durationMs`, in JSON mode (Idempotency-Key) or SSE mode. A run counts when it answered 2xx
 * and completed; anything else (non-2xx, socket error, an SSE stream without `done`) is a failure,
 * counted by kind.
 */
export interface ThroughputResult {
  runsPerSecond: number;
  failures: number;
  kinds: Map<string, number>;
  /** CPU the target's process spent per completed run (its threads, not the engines'), when its pid is known. */
  cpuMsPerRun?: number;
  /** The whole machine's CPU per completed run by process (engines, clients, mock included), when `others` were named. */
  machine?: string;
  /** Runs/s this machine's cores would allow if the target's own process cost nothing: the ceiling its engines, clients and mock set. */
  ceilingWithoutTarget?: number;
}

type Mode = 'JSON' | 'SSE';

/** Why an answered exchange is not a completed run, or undefined when it is one. */
function failureOf(mode: Mode, exchange: Exchange): string | undefined {
  if (exchange.status < 200 || exchange.status > 299) return `HTTP ${exchange.status}`;
  if (mode === 'JSON') {
    const status = (JSON.parse(exchange.body) as { status?: string }).status; // a non-JSON body throws: counted by its error
    return status === 'Completed' ? undefined : `JSON status ${status}`;
  }
  if (exchange.events.includes('error')) return 'SSE error frame';
  // Hangar ends a completed stream with `done`; the proxy's (the mock's) ends with `[DONE]`.
  if (!exchange.events.includes('done') && !exchange.body.includes('[DONE]')) return 'SSE without done';
  return undefined;
}

async function client(target: Target, mode: Mode, deadline: number, agent: Agent, tag: string, result: ThroughputResult) {
  let completed = 0;
  for (let round = 0; performance.now() < deadline; round += 1) {
    const { path, headers, body } = target.run('short', mode === 'JSON' ? `${tag}-r${round}` : undefined);
    let failure: string | undefined;
    try {
      failure = failureOf(mode, await send(target.url, { path, headers, body, agent, keepBody: true, timeoutMs: 60_000 }));
    } catch (error) {
      failure = errorKind(error);
    }
    if (failure === undefined) completed += 1;
    else result.kinds.set(failure, (result.kinds.get(failure) ?? 0) + 1);
  }
  return completed;
}

export async function measureThroughput(
  target: Target,
  mode: Mode,
  clients: number,
  durationMs: number,
  pid?: number,
  others: Map<number, string> = new Map(),
): Promise<ThroughputResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: clients });
  const result: ThroughputResult = { runsPerSecond: 0, failures: 0, kinds: new Map() };
  const tag = randomBytes(4).toString('hex');
  // The target's process under its own name, `others` (the clients, the mock) under theirs, the rest by command name.
  const account = pid === undefined ? undefined : cpuAccount(new Map([...others, [pid, target.name]]));
  const started = performance.now();
  const completed = await Promise.all(
    Array.from({ length: clients }, (_, index) => client(target, mode, started + durationMs, agent, `${tag}-c${index}`, result)),
  );
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  const runs = completed.reduce((sum, count) => sum + count, 0);
  result.runsPerSecond = runs / seconds;
  if (account && runs > 0) {
    const spent = account.finish(runs);
    result.cpuMsPerRun = spent.perUnit.find(({ label }) => label === target.name)?.ms ?? 0;
    if (others.size) {
      result.machine = describeCpuAccount(spent, 'run');
      const rest = spent.perUnit.filter(({ label }) => label !== target.name).reduce((sum, { ms }) => sum + ms, 0);
      result.ceilingWithoutTarget = (availableParallelism() * 1000) / rest;
    }
  }
  result.failures = [...result.kinds.values()].reduce((sum, count) => sum + count, 0);
  return result;
}

export const describeFailures = (result: ThroughputResult) =>
  result.failures === 0
    ? '0 failures'
    : `${result.failures} failures (${[...result.kinds].map(([kind, count]) => `${count}× ${kind}`).join(', ')})`;

const describeCpu = (result: ThroughputResult) =>
  result.cpuMsPerRun === undefined ? '' : `, ${result.cpuMsPerRun.toFixed(2)} ms CPU per run`;

/** Both targets in one mode, one after the other, printed side by side (with each process's CPU per run when its pid is given). */
export async function compareThroughput(
  proxy: Target,
  hangar: Target,
  mode: Mode,
  clients: number,
  durationMs: number,
  pids: { proxy?: number; hangar?: number; mock?: number } = {},
) {
  const viaProxy = await measureThroughput(proxy, mode, clients, durationMs, pids.proxy);
  // Hangar's run also costs the engines, the clients (this process) and the mock: the machine's account says how much.
  const others = new Map([[process.pid, 'bench clients'], ...(pids.mock === undefined ? [] : ([[pids.mock, 'mock upstream']] as const))]);
  const viaHangar = await measureThroughput(hangar, mode, clients, durationMs, pids.hangar, others);
  console.log(`short runs (4 chunks), ${mode} mode, ${clients} concurrent clients, ${durationMs / 1000} s each:`);
  console.log(`  proxy   ${viaProxy.runsPerSecond.toFixed(1)} runs/s, ${describeFailures(viaProxy)}${describeCpu(viaProxy)}`);
  console.log(
    `  Hangar  ${viaHangar.runsPerSecond.toFixed(1)} runs/s (${ratio(viaHangar.runsPerSecond, viaProxy.runsPerSecond)} the proxy), ${describeFailures(viaHangar)}${describeCpu(viaHangar)}`,
  );
  if (viaHangar.machine) console.log(`  machine ${viaHangar.machine}`);
  if (viaHangar.ceilingWithoutTarget)
    console.log(
      `  ceiling: were Hangar's own CPU zero, the rest of each run (engines, clients, mock) would allow at most ${viaHangar.ceilingWithoutTarget.toFixed(0)} runs/s on ${availableParallelism()} cores`,
    );
  return { proxy: viaProxy, hangar: viaHangar };
}
