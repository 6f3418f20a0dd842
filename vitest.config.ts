import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * Test files run at once: DYNAMO_FN_TEST_WORKERS, else 4 (vitest's default on 2 cores is 1,
 * which ran every file one after the other; most integration time is waiting on the API server,
 * a child process or a poll). Integration files share the run's control plane under a
 * readers-writer lock (test/integration/cluster-access.ts says which file needs what).
 */
const workers = Number(process.env['DYNAMO_FN_TEST_WORKERS'] ?? Math.max(4, availableParallelism()));

export default defineConfig({
  test: {
    reporters: ['default', './test/support/summary-reporter.ts'],
    maxWorkers: workers,
    projects: [
      {
        test: {
          name: 'unit',
          include: ['shared/**/*.test.ts', 'functions/**/*.test.ts', 'test/unit/**/*.test.ts'],
          // Some files compile the Grove CRD schema or start servers first; on a loaded 2-core
          // machine that alone can pass vitest's 5 s default.
          testTimeout: 20_000,
          maxWorkers: workers,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/integration/global-setup.ts'],
          setupFiles: ['test/integration/cluster-lock-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 300_000,
          maxWorkers: workers,
        },
      },
      // The OCI image build and entrypoint run (test/image): 1-1.5 min, so only with
      // DYNAMO_FN_IMAGE_TEST=1 (.ci/run passes it through).
      ...(process.env['DYNAMO_FN_IMAGE_TEST'] === '1'
        ? [{ test: { name: 'image', include: ['test/image/**/*.test.ts'], testTimeout: 120_000, hookTimeout: 600_000, maxWorkers: workers } }]
        : []),
    ],
  },
});
