/**
 * Setup file of the `integration-cluster` project: before a file's own hooks, takes the cluster lock its
 * access calls for (cluster-access.ts), and releases it after the file's last hook. The time
 * spent waiting is kept in the file's meta (`clusterLockWaitMs`), so the run's summary
 * (test/support/summary-reporter.ts) reports each file's time without it.
 * @module
 */
import { afterAll, beforeAll, inject } from 'vitest';

import { acquireClusterLock } from '../harness/cluster-lock.js';
import { clusterLockModeOf } from './cluster-access.js';

declare module 'vitest' {
  interface TaskMeta {
    /** How long the file waited for the cluster lock, in ms. */
    clusterLockWaitMs?: number;
  }
}

let release: (() => void) | undefined;

// Waiting is bounded by the other files' run times, not by this file's work: an hour at most.
// (vitest reads a hook's first argument as fixtures: it must be a destructuring pattern)
beforeAll(async ({}, suite) => {
  const mode = clusterLockModeOf(suite.file.filepath);
  if (mode === undefined) return;
  const started = Date.now();
  release = await acquireClusterLock(inject('clusterLockUrl'), mode);
  suite.file.meta.clusterLockWaitMs = Date.now() - started;
}, 3_600_000);

afterAll(() => {
  release?.();
  release = undefined;
});
