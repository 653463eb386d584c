import { diff, ms, ratio } from './client.js';
import type { FirehoseResult } from './firehose.js';
import type { FirstTokenResult } from './first-token.js';
import { addedPerPoll, type IdleResult } from './idle-streams.js';
import type { ThroughputResult } from './throughput.js';

/** What the workloads measured (a workload that failed leaves its entry out). */
export interface Figures {
  firstToken?: FirstTokenResult;
  json?: { proxy: ThroughputResult; hangar: ThroughputResult };
  sse?: { proxy: ThroughputResult; hangar: ThroughputResult };
  firehose?: { direct: FirehoseResult; proxy: FirehoseResult; hangar: FirehoseResult };
  idle?: { proxy: IdleResult; hangar: IdleResult; requested: number; pollIntervalMs: number };
}

type Row = [string, string, string, string];

function firstTokenRows({ added }: FirstTokenResult): Row[] {
  return (['p50', 'p99'] as const).flatMap((p): Row[] => [
    [`first token added vs mock, ${p}`, ms(added.hangar[p]), ms(added.proxy[p]), diff(added.hangar[p], added.proxy[p])],
    [`  via /v1/chat/completions, ${p}`, ms(added.compatible[p]), ms(added.proxy[p]), diff(added.compatible[p], added.proxy[p])],
  ]);
}

function throughputRows(mode: string, { proxy, hangar }: { proxy: ThroughputResult; hangar: ThroughputResult }): Row[] {
  const cell = (result: ThroughputResult) => `${result.runsPerSecond.toFixed(1)}/s (${result.failures} failed)`;
  const rows: Row[] = [[`short runs, ${mode}`, cell(hangar), cell(proxy), ratio(hangar.runsPerSecond, proxy.runsPerSecond)]];
  const ceiling = hangar.ceilingWithoutTarget;
  if (ceiling) rows.push([`  ceiling were Hangar's CPU zero`, `${ceiling.toFixed(0)}/s`, '', ratio(ceiling, proxy.runsPerSecond)]);
  return rows;
}

function firehoseRows({ direct, proxy, hangar }: NonNullable<Figures['firehose']>): Row[] {
  return [
    [
      'one stream, chunks carried/s',
      hangar.chunksPerSecond.toFixed(0),
      proxy.chunksPerSecond.toFixed(0),
      ratio(hangar.chunksPerSecond, proxy.chunksPerSecond),
    ],
    [
      'one stream, frames/s',
      hangar.eventsPerSecond.toFixed(0),
      proxy.eventsPerSecond.toFixed(0),
      ratio(hangar.eventsPerSecond, proxy.eventsPerSecond),
    ],
    [
      'one stream, p99 gap between chunks added vs mock',
      ms(hangar.p99GapMs - direct.p99GapMs),
      ms(proxy.p99GapMs - direct.p99GapMs),
      diff(hangar.p99GapMs, proxy.p99GapMs),
    ],
    ['one stream, longest gap between frames', ms(hangar.maxGapMs), ms(proxy.maxGapMs), diff(hangar.maxGapMs, proxy.maxGapMs)],
  ];
}

function idleRows({ proxy, hangar, requested, pollIntervalMs }: NonNullable<Figures['idle']>): Row[] {
  const mb = (kb: number) => `${(kb / 1024).toFixed(1)} MB`;
  const rows: Row[] = [
    ['idle streams opened', `${hangar.opened}/${requested}`, `${proxy.opened}/${requested}`, ''],
    ['RSS per 1,000 idle streams', mb(hangar.rssPer1000Kb), mb(proxy.rssPer1000Kb), ratio(hangar.rssPer1000Kb, proxy.rssPer1000Kb)],
    [
      'CPU idle, without → with streams',
      `${hangar.without.cpuPercent.toFixed(1)}% → ${hangar.with.cpuPercent.toFixed(1)}%`,
      `${proxy.without.cpuPercent.toFixed(1)}% → ${proxy.with.cpuPercent.toFixed(1)}%`,
      diff(hangar.with.cpuPercent - hangar.without.cpuPercent, proxy.with.cpuPercent - proxy.without.cpuPercent, 'pt'),
    ],
  ];
  const added = addedPerPoll(hangar, pollIntervalMs);
  if (added) {
    rows.push(
      ['PG transactions/s without → with', `${added.before.transactions.toFixed(0)} → ${added.after.transactions.toFixed(0)}`, '—', ''],
      ['PG scans per poll, all streams', added.scans.toFixed(1), '—', ''],
      ['PG scans per stream per poll', added.scansPerStream.toFixed(4), '—', ''],
    );
  }
  return rows;
}

export function printSummary(engines: string, figures: Figures) {
  const rows: Row[] = [['figure', 'Hangar', 'raw proxy', 'Hangar vs proxy']];
  if (figures.firstToken) rows.push(...firstTokenRows(figures.firstToken));
  if (figures.json) rows.push(...throughputRows('JSON', figures.json));
  if (figures.sse) rows.push(...throughputRows('SSE', figures.sse));
  if (figures.firehose) rows.push(...firehoseRows(figures.firehose));
  if (figures.idle) rows.push(...idleRows(figures.idle));
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  console.log(`\nsummary (${engines})`);
  for (const [index, row] of rows.entries()) {
    console.log(`| ${row.map((cell, column) => cell.padEnd(widths[column])).join(' | ')} |`);
    if (index === 0) console.log(`|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`);
  }
}
