import { createScriptRunner } from '../services/skill/src/scripts/script-runner.js';

/**
 * Latency of a trivial stored `sh` script through the skill script runner: from calling run() to
 * the first stdout byte (temp file, spawn, interpreter start), and the whole run (until the temp
 * dir is removed). Runs one at a time.
 */
const RUNS = 20;
const runner = createScriptRunner({
  interpreters: { sh: '/bin/sh' },
  environmentAllowList: ['PATH'],
  timeoutMs: 10_000,
  maxOutputBytes: 1024 * 1024,
  maxArgumentBytes: 64 * 1024,
  maxConcurrentPerTenant: 4,
  maxConcurrentTotal: 8,
  concurrencyWaitMs: 5_000,
});
const script = { tenantId: 'bench', skillName: 'bench', scriptName: 'ok', extension: 'sh', source: { content: 'echo ok' } };

const percentile = (values: number[], share: number) => [...values].sort((a, b) => a - b)[Math.ceil(share * values.length) - 1];
const firstOutput: number[] = [];
const total: number[] = [];
for (let run = 0; run < RUNS; run += 1) {
  const started = performance.now();
  let firstOutputAt = Number.NaN;
  const result = await runner.run(script, { onFirstOutput: () => (firstOutputAt = performance.now()) });
  total.push(performance.now() - started);
  firstOutput.push(firstOutputAt - started);
  if (result.stdout !== 'ok\n') throw new Error(`unexpected output: ${JSON.stringify(result)}`);
}
const ms = (value: number) => value.toFixed(1);
console.log(`${RUNS} runs of 'echo ok' (sh), one at a time`);
console.log(`run() to first stdout byte: median ${ms(percentile(firstOutput, 0.5))} ms, p95 ${ms(percentile(firstOutput, 0.95))} ms`);
console.log(
  `whole run: median ${ms(percentile(total, 0.5))} ms, p95 ${ms(percentile(total, 0.95))} ms, all ${RUNS}: ${ms(total.reduce((a, b) => a + b))} ms`,
);
