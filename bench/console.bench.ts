import { readdirSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { allInOneModules } from '@hangar/all-in-one';
import { CONSOLE_DIRECTORY } from '@hangar/console';
import { chromiumPath, startHangar, TEST_TOKEN } from '@hangar/testing';
import { chromium } from 'playwright-core';

/**
 * The web console's weight (its JS and CSS, gzip -9) and the time to first render of its runs page
 * with BENCH_RUNS runs recorded (default 10,000): from navigation to the table's first row, in this
 * machine's Chromium, against all-in-one on PGlite (what `npm start` runs), median of BENCH_SAMPLES.
 */
const RUNS = Number(process.env.BENCH_RUNS ?? 10_000);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 7);
const CLIENTS = 32;

const assets = readdirSync(`${CONSOLE_DIRECTORY}assets`);
let gzipped = 0;
for (const file of assets) {
  const bytes = readFileSync(`${CONSOLE_DIRECTORY}assets/${file}`);
  const size = gzipSync(bytes, { level: 9 }).length;
  gzipped += size;
  console.log(`  ${file}: ${(bytes.length / 1024).toFixed(1)} kB, ${(size / 1024).toFixed(1)} kB gzip`);
}
console.log(`console weight (JS + CSS, gzip): ${(gzipped / 1024).toFixed(1)} kB`);

const hangar = await startHangar({ modules: allInOneModules(), overrides: { Logging: { Level: 'error' } } });
const browser = await chromium.launch({ executablePath: await chromiumPath(), args: ['--no-sandbox'] });
try {
  const created = await hangar.request('POST', '/api/agents', { body: { name: 'bench', model: { provider: 'demo', model: 'echo' } } });
  if (created.status !== 201) throw new Error(`agent: ${created.status} ${created.text}`);
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < RUNS) {
        const number = ++next;
        const run = await hangar.request('POST', '/api/agents/bench/run', { body: { message: `run ${number}` } });
        if (run.status !== 200) throw new Error(`run: ${run.status}`);
        if (number % 1000 === 0) console.log(`  run ${number} of ${RUNS} recorded`);
      }
    }),
  );
  console.log(`${RUNS} runs recorded in ${((performance.now() - started) / 1000).toFixed(1)} s`);

  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(`${hangar.url}/console`);
  // Signed in as the sign-in page leaves it (the page's own storage; the script runs in the browser).
  const credential = JSON.stringify(JSON.stringify({ kind: 'token', value: TEST_TOKEN }));
  await page.evaluate(`sessionStorage.setItem('hangar.console.credential', ${credential})`);
  const times: number[] = [];
  for (let sample = 0; sample < SAMPLES; sample += 1) {
    await page.goto('about:blank');
    const navigated = performance.now();
    await page.goto(`${hangar.url}/console#/runs`);
    await page.locator('table tbody tr').first().waitFor();
    times.push(performance.now() - navigated);
  }
  times.sort((a, b) => a - b);
  console.log(
    `runs page, first render with ${RUNS} runs recorded: median ${times[Math.floor(times.length / 2)].toFixed(0)} ms ` +
      `(min ${times[0].toFixed(0)}, max ${times.at(-1)!.toFixed(0)}; ${SAMPLES} samples, navigation to the first row)`,
  );
} finally {
  await browser.close();
  await hangar.stop();
}
