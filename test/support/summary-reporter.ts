/**
 * Prints, after the run, the slowest test files with their durations (where the suite's time
 * goes: docs/development.md keeps the table), then one plain closing line,
 * `vitest: N passed, N failed, N skipped`, so tools that read a test run's last lines (CI) get
 * the counts in a form they know. DYNAMO_FN_TEST_TIMES=N prints N files instead of 12 (0: none).
 * @module
 */
import type { Reporter, TestModule } from 'vitest/node';

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    const shown = Number(process.env['DYNAMO_FN_TEST_TIMES'] ?? '12');
    // Files run in parallel; an integration file's time here leaves out its wait for the cluster
    // lock (test/integration/cluster-lock-setup.ts), printed after it.
    const times = testModules
      .map((testModule) => {
        const waited = (testModule.meta().clusterLockWaitMs ?? 0) / 1000;
        return { file: testModule.moduleId.replace(`${process.cwd()}/`, ''), project: testModule.project.name, seconds: testModule.diagnostic().duration / 1000 - waited, waited };
      })
      .sort((a, b) => b.seconds - a.seconds)
      .slice(0, Number.isInteger(shown) && shown > 0 ? shown : 0);
    if (times.length > 0) {
      const waitedFor = (t: { waited: number }) => (t.waited >= 0.05 ? `  (waited ${t.waited.toFixed(1)} s for the cluster lock)` : '');
      process.stdout.write(`\nSlowest test files (seconds, project):\n${times.map((t) => `${t.seconds.toFixed(1).padStart(8)}  ${t.project.padEnd(19)} ${t.file}${waitedFor(t)}`).join('\n')}\n`);
    }
    for (const testModule of testModules) {
      let failedHere = 0;
      for (const test of testModule.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed += 1;
        else if (state === 'failed') failedHere += 1;
        else skipped += 1;
      }
      failed += failedHere;
      // A file that failed to load, or whose hook failed (its tests then skipped), is a failure all the same.
      if (testModule.state() === 'failed' && failedHere === 0) failed += 1;
    }
    process.stdout.write(`\nvitest: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
