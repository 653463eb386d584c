import { dropSchemas, spawnAllInOne, startMockOpenAI, TEST_TOKEN } from '@hangar/testing';
import { benchEngines } from './engines.js';

/**
 * What a workflow's super step costs beyond the runs it contains. Hangar all-in-one in its own
 * process (PGlite, or BENCH_ENGINES=real PostgreSQL, Redis and Kafka), agents on the mock upstream:
 *
 * - `chain`: STEPS agent steps one after another (one run per super step), against the same number
 *   of runs of that agent (streamed, read to the end) one after another: (workflow − runs) / STEPS is the overhead per super step;
 * - `fan-out`: one super step of WIDTH agent steps side by side, against WIDTH concurrent runs;
 * - `transforms`: STEPS transform steps, no run at all: the bare cost of a super step (lease renewal
 *   aside: its events, the saved state, the checkpoint).
 *
 * Each workflow run is timed from its POST to its terminal event on /api/runs/{id}/events.
 *
 *   BENCH_ENGINES=real  BENCH_SAMPLES=20  BENCH_STEPS=5  BENCH_WIDTH=4
 */
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 20);
const STEPS = Number(process.env.BENCH_STEPS ?? 5);
const WIDTH = Number(process.env.BENCH_WIDTH ?? 4);

const mock = await startMockOpenAI();
mock.script('bench', () => ({ text: 'a short answer from the step', usage: { prompt: 20, completion: 6 } }));
const engines = benchEngines();
const hangar = await spawnAllInOne({
  env: { HANGAR__Providers__mock__Kind: 'OpenAICompatible', HANGAR__Providers__mock__Endpoint: mock.url, ...engines.env },
});
console.log(`shape: all-in-one; engines: ${engines.name}; ${SAMPLES} samples, chains of ${STEPS}, fan-out of ${WIDTH}`);
const headers = { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' };

async function call(method: string, path: string, body?: unknown) {
  const response = await fetch(`${hangar.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

const chain = (kind: 'agent' | 'transform') => ({
  steps: Array.from({ length: STEPS }, (_, index) =>
    kind === 'agent' ? { id: `s${index}`, kind, agent: 'stepper' } : { id: `s${index}`, kind, template: `step ${index}: {{input}}` },
  ),
  edges: Array.from({ length: STEPS - 1 }, (_, index) => ({ from: `s${index}`, to: `s${index + 1}` })),
});
const fanOut = {
  steps: [
    { id: 'split', kind: 'transform', template: '{{input}}' },
    ...Array.from({ length: WIDTH }, (_, index) => ({ id: `w${index}`, kind: 'agent', agent: 'stepper' })),
  ],
  edges: Array.from({ length: WIDTH }, (_, index) => ({ from: 'split', to: `w${index}` })),
};

/** One workflow run, from its POST to its terminal event. */
async function workflowRun(name: string): Promise<number> {
  const started = performance.now();
  const { workflowRunId } = await call('POST', `/api/workflows/${name}/run`, { input: 'bench' });
  const events = await fetch(`${hangar.url}/api/runs/${workflowRunId}/events`, { headers });
  const text = await events.text();
  if (!text.includes('run.completed')) throw new Error(`workflow run ${workflowRunId} did not complete: ${text.slice(-500)}`);
  return performance.now() - started;
}

const directRun = async () => {
  const started = performance.now();
  // The run's whole SSE answer, read to its end.
  const response = await fetch(`${hangar.url}/api/agents/stepper/run`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ message: 'bench' }),
  });
  if (!(await response.text()).includes('event: done')) throw new Error('the run did not complete');
  return performance.now() - started;
};

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const p99 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * 0.99))];

async function sample(times: number, measure: () => Promise<number>) {
  await measure(); // warm-up
  const values: number[] = [];
  for (let index = 0; index < times; index++) values.push(await measure());
  return values;
}

try {
  await call('POST', '/api/agents', { name: 'stepper', model: { provider: 'mock', model: 'bench' } });
  await call('PUT', '/api/workflows/chain', chain('agent'));
  await call('PUT', '/api/workflows/transforms', chain('transform'));
  await call('PUT', '/api/workflows/fan-out', fanOut);

  const runs = await sample(SAMPLES, async () => {
    let total = 0;
    for (let step = 0; step < STEPS; step++) total += await directRun();
    return total;
  });
  const chains = await sample(SAMPLES, () => workflowRun('chain'));
  const transforms = await sample(SAMPLES, () => workflowRun('transforms'));
  const parallelRuns = await sample(SAMPLES, async () => {
    const started = performance.now();
    await Promise.all(Array.from({ length: WIDTH }, directRun));
    return performance.now() - started;
  });
  const fanOuts = await sample(SAMPLES, () => workflowRun('fan-out'));

  const perStep = (workflow: number[], baseline: number[]) => (median(workflow) - median(baseline)) / STEPS;
  console.log(`chain of ${STEPS} agent steps: ${median(chains).toFixed(1)} ms p50, ${p99(chains).toFixed(1)} ms p99`);
  console.log(`the same ${STEPS} runs one after another (SSE, read to the end): ${median(runs).toFixed(1)} ms p50`);
  console.log(`→ overhead per super step of one run: ${perStep(chains, runs).toFixed(1)} ms`);
  console.log(
    `chain of ${STEPS} transform steps: ${median(transforms).toFixed(1)} ms p50 → ${(median(transforms) / STEPS).toFixed(1)} ms per super step with no run`,
  );
  console.log(
    `fan-out of ${WIDTH} agent steps (2 super steps): ${median(fanOuts).toFixed(1)} ms p50; ${WIDTH} concurrent runs: ${median(parallelRuns).toFixed(1)} ms p50`,
  );
  console.log(
    `→ overhead of the fan-out's super steps: ${(median(fanOuts) - median(parallelRuns)).toFixed(1)} ms (both, including the transform one)`,
  );
} finally {
  await hangar.stop();
  await mock.close();
  if (engines.real) await dropSchemas(engines.schemaPrefix);
}
