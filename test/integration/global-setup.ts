/**
 * Vitest globalSetup of the `integration` project: one real control plane (etcd,
 * kube-apiserver, kube-controller-manager with the job controller, kube-scheduler, kwok) for
 * the whole run, with our CRDs, Grove's and
 * Knative's installed. Builds the binaries first if they are missing (minutes, once).
 *
 * Tests get the admin kubeconfig path with `inject('kubeconfigPath')` (see
 * test/harness/testing.ts); KUBECONFIG is set too, for anything that reads the environment.
 * Set DYNAMO_FN_TEST_VERBOSE=1 for the harness's debug lines.
 * @module
 */
import type { TestProject } from 'vitest/node';

import { startControlPlane } from '../harness/apiserver.js';
import { ensureKubeBinaries } from '../harness/binaries.js';
import { defaultCrdFiles } from '../harness/crds.js';
import { createLineLog } from '../harness/log.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The admin kubeconfig of the run's control plane. */
    kubeconfigPath: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const lineLog = createLineLog({ verbose: process.env['DYNAMO_FN_TEST_VERBOSE'] === '1' });
  // Start-up progress is worth seeing; the teardown runs after the run's closing line, so it
  // stays quiet unless something goes wrong.
  let tearingDown = false;
  const log: typeof lineLog = { ...lineLog, info: (fields, msg) => (tearingDown ? undefined : lineLog.info(fields, msg)) };
  const binaries = await ensureKubeBinaries({ log });
  const plane = await startControlPlane({
    binaries,
    crdFiles: await defaultCrdFiles(),
    log,
    withControllerManager: binaries.kubeControllerManager !== undefined,
    withScheduler: binaries.kubeScheduler !== undefined,
    withKwok: binaries.kwok !== undefined,
  });
  project.provide('kubeconfigPath', plane.kubeconfigPath);
  process.env['KUBECONFIG'] = plane.kubeconfigPath;
  return async () => {
    tearingDown = true;
    await plane.stop();
  };
}
