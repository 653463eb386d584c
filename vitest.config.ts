import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    globalSetup: ['./tools/test-engines.ts'],
    include: ['libs/*/test/**/*.test.ts', 'services/*/test/**/*.test.ts', 'test-e2e/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    reporters: ['default', './tools/summary-reporter.ts'],
  },
});
