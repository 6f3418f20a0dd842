import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

import { SHARED_FILES } from './test/integration/cluster-access.js';
import ClusterSequencer from './test/integration/cluster-sequencer.js';

/**
 * Test files run at once in the first group (the unit files and the integration files that keep
 * to their own namespaces): DYNAMO_FN_TEST_WORKERS, else 3. Vitest's default on 2 cores is 1,
 * which ran every file one after the other; most integration time is waiting on the API server,
 * a child process or a poll. Then `integration-cluster` runs on 2 workers: files that need the
 * shared plane to themselves, one at a time under the cluster lock, beside files that do not use
 * it (test/integration/cluster-access.ts says which file is which, and why).
 */
const workers = Number(process.env['DYNAMO_FN_TEST_WORKERS'] ?? Math.max(3, availableParallelism()));

const integration = {
  globalSetup: ['test/integration/global-setup.ts'],
  testTimeout: 120_000,
  hookTimeout: 300_000,
};

export default defineConfig({
  test: {
    reporters: ['default', './test/support/summary-reporter.ts'],
    maxWorkers: workers,
    sequence: { sequencer: ClusterSequencer },
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
        test: { name: 'integration', include: [...SHARED_FILES], maxWorkers: workers, ...integration },
      },
      {
        test: {
          name: 'integration-cluster',
          include: ['test/integration/**/*.test.ts'],
          exclude: [...SHARED_FILES],
          setupFiles: ['test/integration/cluster-lock-setup.ts'],
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
          ...integration,
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
