import { defineConfig } from 'vitest/config';

// Tests that bound how long the process may be held (the fuzz's /healthz, the 1 MiB estimate) run
// after all others, so that other suites' processes competing for the 2 cores are not measured as Hangar's stalls.
const TIMED = ['test-e2e/fuzz.e2e.test.ts', 'test-e2e/hostile-input.e2e.test.ts'];

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
      { extends: true, test: { name: 'timed', include: TIMED, sequence: { groupOrder: 1 } } },
    ],
  },
});
