import type { IncomingMessage } from 'node:http';
import { errorKind, send, type Target } from './client.js';
import { cpuSeconds, rssAfterGcKb, sleep } from './processes.js';

/**
 * Idle `/events` streams: N `GET /api/runs/{id}/events` tails spread over runs whose model calls hang
 * (so nothing is ever sent; one run unless BENCH_IDLE_RUNS), against N idle proxied streams. Measured on the serving process: RSS growth
 * per 1,000 streams, CPU over an idle window without and with the streams, and (PostgreSQL) the
 * database work the streams cause.
 */
export interface SqlCounters {
  /** Transactions committed in the whole database (`pg_stat_database.xact_commit`). */
  transactions: number;
  /** Scans of Hangar's own tables (`seq_scan + idx_scan` in its schemas), about one per statement. */
  scans: number;
}

export interface IdleWindow {
  cpuPercent: number;
  perSecond?: SqlCounters;
}

export interface IdleResult {
  opened: number;
  openFailures: Map<string, number>;
  stillOpen: number;
  rssBeforeKb: number;
  rssAfterKb: number;
  rssPer1000Kb: number;
  without: IdleWindow;
  with: IdleWindow;
}

const OPEN_BATCH = 50;
const OPEN_BUDGET_MS = 90_000;

/** Opens up to `count` streams, a batch at a time, until the budget is spent or a whole batch fails. */
async function openStreams(target: Target, paths: string[], headers: Record<string, string>, count: number) {
  const streams: IncomingMessage[] = [];
  const failures = new Map<string, number>();
  const deadline = performance.now() + OPEN_BUDGET_MS;
  while (streams.length < count && performance.now() < deadline) {
    const batch = Math.min(OPEN_BATCH, count - streams.length);
    const opened = await Promise.all(
      Array.from({ length: batch }, async (_, index) => {
        try {
          const { status, response } = await send(target.url, {
            method: 'GET',
            path: paths[(streams.length + index) % paths.length],
            headers,
            untilHeaders: true,
            agent: false,
            timeoutMs: 15_000,
          });
          if (status === 200) return response.resume();
          response.destroy();
          failures.set(`HTTP ${status}`, (failures.get(`HTTP ${status}`) ?? 0) + 1);
        } catch (error) {
          failures.set(errorKind(error), (failures.get(errorKind(error)) ?? 0) + 1);
        }
        return undefined;
      }),
    );
    const ok = opened.filter((stream) => stream !== undefined);
    streams.push(...ok);
    if (ok.length === 0) break;
  }
  return { streams, failures };
}

/** CPU of `pid` (and database counters per second) over `seconds` of idleness. */
async function idleWindow(pid: number, seconds: number, sql?: () => Promise<SqlCounters>): Promise<IdleWindow> {
  const cpuBefore = cpuSeconds(pid);
  const sqlBefore = await sql?.();
  await sleep(seconds * 1000);
  const cpuPercent = ((cpuSeconds(pid) - cpuBefore) / seconds) * 100;
  const sqlAfter = await sql?.();
  if (!sqlBefore || !sqlAfter) return { cpuPercent };
  return {
    cpuPercent,
    perSecond: {
      transactions: (sqlAfter.transactions - sqlBefore.transactions) / seconds,
      scans: (sqlAfter.scans - sqlBefore.scans) / seconds,
    },
  };
}

export interface IdleSetup {
  target: Target;
  pid: number;
  /** The paths the idle streams take in turn, and the headers they need. */
  paths: string[];
  headers: Record<string, string>;
  count: number;
  seconds: number;
  sql?: () => Promise<SqlCounters>;
}

/**
 * PostgreSQL (15 and later) holds a backend's statistics until it flushes them, at the latest 10 s
 * after the backend went idle: the counters of a window that starts sooner after earlier work count
 * some of that work as the window's.
 */
const STATS_FLUSH_MS = 11_000;

export async function measureIdleStreams(setup: IdleSetup): Promise<IdleResult> {
  await sleep(setup.sql ? STATS_FLUSH_MS : 2000); // let start-up and earlier work settle
  const without = await idleWindow(setup.pid, setup.seconds, setup.sql);
  const rssBefore = await rssAfterGcKb(setup.pid);
  const { streams, failures } = await openStreams(setup.target, setup.paths, setup.headers, setup.count);
  let closed = 0;
  for (const stream of streams) stream.once('close', () => (closed += 1));
  await sleep(2000);
  const rssAfter = await rssAfterGcKb(setup.pid);
  if (setup.sql) await sleep(STATS_FLUSH_MS - 2000); // the openings' own statements out of the window
  const withStreams = await idleWindow(setup.pid, setup.seconds, setup.sql);
  const stillOpen = streams.length - closed;
  for (const stream of streams) stream.destroy();
  return {
    opened: streams.length,
    openFailures: failures,
    stillOpen,
    rssBeforeKb: rssBefore,
    rssAfterKb: rssAfter,
    rssPer1000Kb: streams.length ? ((rssAfter - rssBefore) / streams.length) * 1000 : Number.NaN,
    without,
    with: withStreams,
  };
}

/** Starts a streamed run of the hanging model and keeps its stream open; resolves with its id once the `run` frame came. */
export async function startHangingRun(hangar: Target) {
  const { path, headers, body } = hangar.run('hang');
  const { status, response } = await send(hangar.url, { path, headers, body, untilHeaders: true, timeoutMs: 30_000 });
  if (status !== 200) throw new Error(`the hanging run answered ${status}`);
  response.setEncoding('utf8');
  let text = '';
  const runId = await new Promise<string>((resolve, reject) => {
    response.on('data', (chunk: string) => {
      text += chunk;
      const match = /"runId":"([^"]+)"/.exec(text);
      if (match) resolve(match[1]);
    });
    response.once('end', () => reject(new Error(`the hanging run ended: ${text.slice(0, 300)}`)));
  });
  return { runId, close: () => response.destroy() };
}

const failuresText = (failures: Map<string, number>) =>
  failures.size ? ` (failed to open: ${[...failures].map(([kind, count]) => `${count}× ${kind}`).join(', ')})` : '';

const mb = (kb: number) => `${(kb / 1024).toFixed(1)} MB`;
const signed = (value: number) => `${value >= 0 ? '+' : ''}${value.toFixed(1)}`;

export function printIdle(name: string, requested: number, result: IdleResult, pollIntervalMs: number) {
  console.log(
    `  ${name.padEnd(7)} ${result.opened}/${requested} opened${failuresText(result.openFailures)}, ${result.stillOpen} still open after the window; ` +
      `RSS ${mb(result.rssBeforeKb)} → ${mb(result.rssAfterKb)} = ${signed(result.rssPer1000Kb / 1024)} MB per 1,000 streams; CPU ${result.without.cpuPercent.toFixed(1)}% idle without, ` +
      `${result.with.cpuPercent.toFixed(1)}% with the streams`,
  );
  const added = addedPerPoll(result, pollIntervalMs);
  if (!added) return;
  const { before, after } = added;
  console.log(
    `          PostgreSQL: ${before.transactions.toFixed(0)} → ${after.transactions.toFixed(0)} transactions/s (database-wide), ` +
      `${before.scans.toFixed(0)} → ${after.scans.toFixed(0)} table scans/s on Hangar's schemas: the streams add ` +
      `${added.scans.toFixed(1)} scans and ${added.transactions.toFixed(1)} transactions per ${pollIntervalMs} ms poll in all, ` +
      `${added.scansPerStream.toFixed(4)} scans per stream per poll`,
  );
}

/** What the open streams added to the database's work per poll, in all and per stream (PostgreSQL only). */
export function addedPerPoll(result: IdleResult, pollIntervalMs: number) {
  const [before, after] = [result.without.perSecond, result.with.perSecond];
  if (!before || !after) return undefined;
  const pollsPerSecond = 1000 / pollIntervalMs;
  const scans = (after.scans - before.scans) / pollsPerSecond;
  return {
    before,
    after,
    scans,
    transactions: (after.transactions - before.transactions) / pollsPerSecond,
    scansPerStream: scans / result.opened,
  };
}
