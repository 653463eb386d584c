import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnAllInOne } from '@hangar/testing';

/** Time from process spawn to the first 200 of `GET /api/meta`, on a fresh and on an existing data dir. */
const RUNS = 3;
const fresh: number[] = [];
const warm: number[] = [];
for (let run = 0; run < RUNS; run += 1) {
  const dataDir = mkdtempSync(join(tmpdir(), 'hangar-startup-'));
  const first = await spawnAllInOne({ dataDir });
  fresh.push(first.startupMs);
  await first.stop();
  const second = await spawnAllInOne({ dataDir });
  warm.push(second.startupMs);
  await second.stop();
  console.log(`run ${run + 1}: fresh data dir ${first.startupMs.toFixed(0)} ms, existing data dir ${second.startupMs.toFixed(0)} ms`);
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
console.log(
  `all-in-one startup to first /api/meta 200 (median of ${RUNS}): fresh ${median(fresh).toFixed(0)} ms, existing ${median(warm).toFixed(0)} ms`,
);
