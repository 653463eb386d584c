import { defineConfig } from 'vitest/config';

// Tests that bound how long the process may be held (the fuzz's /healthz, the 1 MiB estimate) run
// after all others, so that other suites' processes competing for the 2 cores are not measured as Hangar's stalls.
const TIMED = ['test-e2e/fuzz.e2e.test.ts', 'test-e2e/hostile-input.e2e.test.ts'];

const HTTP_SUITES = ['test-e2e/**/*.e2e.test.ts', 'libs/client/test/**/*.e2e.test.ts'];

/**
 * The HTTP suites `npm test` runs again on the split shape, in about four minutes of CI: the agents,
 * attachments, quotas, tenant, webhook, OpenAI-compatible, session, API-key (and scope), tool-server,
 * exposure, knowledge, host-policy, read-view, content-guard and eval-suite routes, the gateway’s own, run events
 * on Kafka, a trace across processes, and the client, each route through its service's own process.
 * The rest take far longer there (a shape is seven processes to start; runs.e2e alone takes four
 * minutes): every HTTP suite runs on the split shape with `npm run test:split` (HANGAR_TEST_SPLIT=all;
 * 415 passed, 0 failed in 16.6 min on 2026-11-28), which CI's 30 minutes cannot hold; docs/decisions.md.
 */
const SPLIT_IN_CI = [
  'test-e2e/agents.e2e.test.ts',
  'test-e2e/attachments.e2e.test.ts',
  'test-e2e/quotas.e2e.test.ts',
  'test-e2e/tenant-matrix.e2e.test.ts',
  'test-e2e/openai-compatible.e2e.test.ts',
  'test-e2e/webhooks.e2e.test.ts',
  'libs/client/test/client.e2e.test.ts',
  'test-e2e/sessions.e2e.test.ts',
  'test-e2e/api-keys.e2e.test.ts',
  'test-e2e/tool-servers.e2e.test.ts',
  'test-e2e/exposure.e2e.test.ts',
  'test-e2e/knowledge.e2e.test.ts',
  'test-e2e/api-key-scopes.e2e.test.ts',
  'test-e2e/host-policies.e2e.test.ts',
  'test-e2e/read-view.e2e.test.ts',
  'test-e2e/content-guard.e2e.test.ts',
  'test-e2e/gateway.e2e.test.ts',
  'test-e2e/run-events-kafka.e2e.test.ts',
  'test-e2e/tracing.e2e.test.ts',
  'test-e2e/evaluations.e2e.test.ts',
  'test-e2e/workflows.e2e.test.ts',
];

/** HTTP suites that run in one shape only, and why; every other one runs on all-in-one and again on the split shape. */
const ONE_SHAPE_ONLY: Record<string, string> = {
  'test-e2e/split-shape.e2e.test.ts': 'starts the split shape itself (two gateways, two run executors)',
  'test-e2e/engine-faults.e2e.test.ts': 'starts the split shape itself, on private engines it kills',
  'test-e2e/gateways-distributed.e2e.test.ts': 'starts the split shape itself',
  'test-e2e/webhooks-distributed.e2e.test.ts': 'starts the split shape itself',
  'test-e2e/multi-process.e2e.test.ts': 'starts the split shape itself, as Kubernetes does (migration job)',
  'test-e2e/start-distributed.e2e.test.ts': 'runs npm run start:distributed',
  'test-e2e/built-javascript.e2e.test.ts': 'runs the built all-in-one, whatever the shape',
  'test-e2e/drain.e2e.test.ts': 'spawns all-in-one processes to signal them',
  'test-e2e/human-logs.e2e.test.ts': 'reads the output of an all-in-one process',
  'test-e2e/api-keys-multi-instance.e2e.test.ts': 'is about several instances on one database already (two all-in-ones on PostgreSQL)',
  'test-e2e/runs-multi-instance.e2e.test.ts': 'is about several instances on one database already (two all-in-ones on PostgreSQL)',
  'test-e2e/schedules-multi-instance.e2e.test.ts': 'is about several instances on one database already (three all-in-ones on PostgreSQL)',
  'test-e2e/runs-crash-recovery.e2e.test.ts': 'kills an all-in-one process and starts another on its data',
  'test-e2e/workflows-crash-recovery.e2e.test.ts': 'kills all-in-one processes and starts others on their data',
};

export default defineConfig({
  test: {
    globalSetup: ['./tools/test-engines.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    reporters: ['default', './tools/summary-reporter.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'suites',
          include: ['libs/*/test/**/*.test.ts', 'services/*/test/**/*.test.ts', 'test-e2e/**/*.test.ts'],
          exclude: TIMED,
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
          name: 'split',
          include: process.env.HANGAR_TEST_SPLIT === 'all' ? HTTP_SUITES : SPLIT_IN_CI,
          exclude: [...Object.keys(ONE_SHAPE_ONLY), ...TIMED],
          env: { HANGAR_TEST_TOPOLOGY: 'split' },
          globalSetup: ['./tools/test-engines.ts', './tools/test-build.ts'],
          // A test that starts a shape of its own waits for seven processes.
          testTimeout: 90_000,
          hookTimeout: 120_000,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
