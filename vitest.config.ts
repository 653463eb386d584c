import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import LongestFirstSequencer from './tools/test-sequencer.js';

// Every process the run starts (each test file's fork, each service of a split shape, each spawned
// all-in-one) loads much the same JavaScript: V8's compile cache on disk spares the later ones the
// compiling (Node ≥ 22.1 reads this when a process starts; the forks and their children inherit it).
process.env.NODE_COMPILE_CACHE ??= fileURLToPath(new URL('./.hangar/node-compile-cache', import.meta.url));

// Tests that bound how long the process may be held (the fuzz's /healthz, the 1 MiB estimate) run
// after all others, so that other suites' processes competing for the 2 cores are not measured as Hangar's stalls.
const TIMED = ['test-e2e/fuzz.e2e.test.ts', 'test-e2e/hostile-input.e2e.test.ts'];

const HTTP_SUITES = ['test-e2e/**/*.e2e.test.ts', 'libs/client/test/**/*.e2e.test.ts'];

/**
 * Every HTTP suite runs again on the split shape, each route through its service's own process,
 * in CI but for these three, which take far longer there (a shape is seven processes to start):
 * runs.e2e starts nine shapes and takes four minutes, content protection two, rate limits almost
 * two (2026-11-28: 491 s of the 1,010 s the suites then outside CI took there, all passing). With
 * them CI would come too close to its 30 minutes; `npm run test:split` (HANGAR_TEST_SPLIT=all)
 * runs them too. docs/decisions.md.
 */
const SPLIT_OUTSIDE_CI = ['test-e2e/runs.e2e.test.ts', 'test-e2e/content-protection.e2e.test.ts', 'test-e2e/rate-limit.e2e.test.ts'];

/** HTTP suites that run in one shape only, and why; every other one runs on all-in-one and again on the split shape. */
const ONE_SHAPE_ONLY: Record<string, string> = {
  'test-e2e/split-shape.e2e.test.ts': 'starts the split shape itself (two gateways, two run executors)',
  'test-e2e/engine-faults.e2e.test.ts': 'starts the split shape itself, on private engines it kills',
  'test-e2e/gateways-distributed.e2e.test.ts': 'starts the split shape itself',
  'test-e2e/webhooks-distributed.e2e.test.ts': 'starts the split shape itself',
  'test-e2e/multi-process.e2e.test.ts': 'starts the split shape itself, as Kubernetes does (migration job)',
  'test-e2e/start-distributed.e2e.test.ts': 'runs npm run start:distributed',
  'test-e2e/drain.e2e.test.ts': 'spawns all-in-one processes to signal them',
  'test-e2e/human-logs.e2e.test.ts': 'reads the output of an all-in-one process',
  'test-e2e/api-keys-multi-instance.e2e.test.ts': 'is about several instances on one database already (two all-in-ones on PostgreSQL)',
  'test-e2e/runs-multi-instance.e2e.test.ts': 'is about several instances on one database already (two all-in-ones on PostgreSQL)',
  'test-e2e/schedules-multi-instance.e2e.test.ts': 'is about several instances on one database already (three all-in-ones on PostgreSQL)',
  'test-e2e/runs-crash-recovery.e2e.test.ts': 'kills an all-in-one process and starts another on its data',
  'test-e2e/workflows-crash-recovery.e2e.test.ts': 'kills all-in-one processes and starts others on their data',
};

/**
 * Files that run the production JavaScript, which the split projects' global setup builds once per
 * run (`tools/test-build.ts`): they run in the split project, whatever the shape (a build of their
 * own took 50 s of a CI worker beside the others). The files that start split shapes of their own
 * are among them: started from the build, a shape's nine processes load plain JavaScript where tsx
 * compiled every source in each (207 s of CI's start-up on 2026-12-02).
 */
const ON_THE_TEST_BUILD = [
  'test-e2e/built-javascript.e2e.test.ts',
  'test-e2e/split-shape.e2e.test.ts',
  'test-e2e/engine-faults.e2e.test.ts',
  'test-e2e/gateways-distributed.e2e.test.ts',
  'test-e2e/webhooks-distributed.e2e.test.ts',
  'test-e2e/multi-process.e2e.test.ts',
];

const SPLIT_EXCLUDED = [
  ...Object.keys(ONE_SHAPE_ONLY).filter((file) => !ON_THE_TEST_BUILD.includes(file)),
  ...TIMED,
  ...(process.env.HANGAR_TEST_SPLIT === 'all' ? [] : SPLIT_OUTSIDE_CI),
];

/** What the split projects share. */
const SPLIT = {
  env: { HANGAR_TEST_TOPOLOGY: 'split' },
  // The services run from the build in processes of their own: the test files need none of them.
  alias: { '@hangar/all-in-one': fileURLToPath(new URL('./tools/split-all-in-one.ts', import.meta.url)) },
  // What a test waits for crosses processes there (a validation call, a run's events read back):
  // past expect.poll's default second at times, on two cores with seven processes per shape.
  expect: { poll: { timeout: 10_000 } },
  globalSetup: ['./tools/test-engines.ts', './tools/test-build.ts'],
  // A test that starts a shape of its own waits for seven processes; a beforeAll that starts one
  // beside another file's suite took over 60 s in CI on a slow day (2026-11-28).
  testTimeout: 90_000,
  hookTimeout: 180_000,
  // Beside the suites, in one queue: a group of its own began only once the suites' last file ended.
  sequence: { groupOrder: 0 },
};

export default defineConfig({
  test: {
    globalSetup: ['./tools/test-engines.ts'],
    setupFiles: ['./tools/test-worker-setup.ts'],
    testTimeout: 30_000,
    // A suite's beforeAll starts a Hangar (and its mock upstreams); one bound for all, set here, not per file.
    hookTimeout: 90_000,
    pool: 'forks',
    // Each file in a process of its own: one that lived through many files' PGlite instances died in
    // V8 (nodejs/node#64500), and three files assert on the process-wide tracer provider, which the
    // first Hangar of a process registers. docs/decisions.md, session 26.
    poolOptions: { forks: { maxForks: 2, minForks: 1, isolate: true } },
    reporters: ['default', './tools/timings-reporter.ts', './tools/summary-reporter.ts'],
    sequence: { sequencer: LongestFirstSequencer },
    projects: [
      {
        extends: true,
        test: {
          name: 'suites',
          include: ['libs/*/test/**/*.test.ts', 'services/*/test/**/*.test.ts', 'test-e2e/**/*.test.ts'],
          exclude: [...TIMED, ...ON_THE_TEST_BUILD],
          sequence: { groupOrder: 0 },
        },
      },
      // One file at a time too: beside the fuzz, the 1 MiB estimate's /healthz bound was missed (104.9 ms of 100 in a CI run).
      {
        extends: true,
        test: { name: 'timed', include: TIMED, sequence: { groupOrder: 1 }, poolOptions: { forks: { singleFork: true } } },
      },
      {
        // The HTTP suites again, every startHangar() on the split shape: each service its own process
        // (the built JavaScript) on PostgreSQL, Redis and Kafka.
        extends: true,
        test: {
          ...SPLIT,
          name: 'split',
          include: HTTP_SUITES,
          exclude: SPLIT_EXCLUDED,
        },
      },
    ],
  },
});
