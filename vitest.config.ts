import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    reporters: ['default', './test/support/summary-reporter.ts'],
    projects: [
      {
        test: {
          name: 'unit',
          include: ['shared/**/*.test.ts', 'functions/**/*.test.ts', 'test/unit/**/*.test.ts'],
          // Some files compile the Grove CRD schema or start servers first; on a loaded 2-core
          // machine that alone can pass vitest's 5 s default.
          testTimeout: 20_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/integration/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 300_000,
          fileParallelism: false,
        },
      },
      // The OCI image build and entrypoint run (test/image): 1-1.5 min, so only with
      // DYNAMO_FN_IMAGE_TEST=1 (.ci/run passes it through).
      ...(process.env['DYNAMO_FN_IMAGE_TEST'] === '1'
        ? [{ test: { name: 'image', include: ['test/image/**/*.test.ts'], testTimeout: 120_000, hookTimeout: 600_000 } }]
        : []),
    ],
  },
});
