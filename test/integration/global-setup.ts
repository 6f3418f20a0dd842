/**
 * Vitest globalSetup of the `integration` project: one real control plane (etcd,
 * kube-apiserver, kube-controller-manager with the job controller, kube-scheduler, kwok) for
 * the whole run, with our CRDs, Grove's and
 * Knative's installed. Builds the binaries first if they are missing (minutes, once).
 * Our multi-version CRDs convert through the admission function's `/convert`, served here over
 * TLS on 127.0.0.1 for the whole run (the CRDs' clientConfig points at it).
 *
 * Tests get the admin kubeconfig path with `inject('kubeconfigPath')` (see
 * test/harness/testing.ts); KUBECONFIG is set too, for anything that reads the environment.
 * Set DYNAMO_FN_TEST_VERBOSE=1 for the harness's debug lines.
 * @module
 */
import type { TestProject } from 'vitest/node';

import { pino } from 'pino';
import { generateServingCertificates } from '../../functions/admission/dev-certs.js';
import { startAdmissionServer } from '../../functions/admission/index.js';
import { startControlPlane } from '../harness/apiserver.js';
import { ensureKubeBinaries } from '../harness/binaries.js';
import { startClusterLockServer, type ClusterLockServer } from '../harness/cluster-lock.js';
import { defaultCrdFiles } from '../harness/crds.js';
import { createLineLog } from '../harness/log.js';
import { lpxCrdFiles } from '../harness/lpx-crds.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The admin kubeconfig of the run's control plane. */
    kubeconfigPath: string;
    /** The run's admission server (TLS, loopback; it serves the CRD conversion webhook), e.g. `https://127.0.0.1:PORT`. */
    admissionUrl: string;
    /** Base64 of the CA PEM that signed its certificate (a webhook caBundle). */
    admissionCaBundle: string;
    /** The run's cluster lock (test/harness/cluster-lock.ts), e.g. `http://127.0.0.1:PORT`. */
    clusterLockUrl: string;
  }
}

/**
 * Both integration projects (vitest.config.ts) name this global setup, and vitest runs it once
 * per project, in its main process: the plane and the cluster lock are kept on globalThis,
 * started by the first call and stopped by the last project's teardown.
 */
const SHARED = Symbol.for('dynamo-fn.integration.plane');
interface Holder {
  started?: Promise<{ plane: SharedPlane; lock: ClusterLockServer }>;
  users: number;
}
const holder: Holder = ((globalThis as Record<symbol, Holder | undefined>)[SHARED] ??= { users: 0 });

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  holder.users += 1;
  // What each file may share of the plane, and the lock that enforces it:
  // test/integration/cluster-access.ts and test/harness/cluster-lock.ts.
  holder.started ??= (async () => {
    const lock = await startClusterLockServer();
    try {
      return { plane: await startSharedPlane(), lock };
    } catch (error) {
      await lock.close();
      throw error;
    }
  })();
  let started: { plane: SharedPlane; lock: ClusterLockServer };
  try {
    started = await holder.started;
  } catch (error) {
    holder.users -= 1;
    throw error;
  }
  const { plane: shared, lock } = started;
  project.provide('kubeconfigPath', shared.kubeconfigPath);
  project.provide('admissionUrl', shared.admissionUrl);
  project.provide('admissionCaBundle', shared.admissionCaBundle);
  project.provide('clusterLockUrl', lock.url);
  process.env['KUBECONFIG'] = shared.kubeconfigPath;
  return async () => {
    holder.users -= 1;
    if (holder.users > 0) return;
    holder.started = undefined;
    await lock.close();
    await shared.stop();
  };
}

interface SharedPlane {
  readonly kubeconfigPath: string;
  readonly admissionUrl: string;
  readonly admissionCaBundle: string;
  stop(): Promise<void>;
}

async function startSharedPlane(): Promise<SharedPlane> {
  const lineLog = createLineLog({ verbose: process.env['DYNAMO_FN_TEST_VERBOSE'] === '1' });
  // Start-up progress is worth seeing; the teardown runs after the run's closing line, so it
  // stays quiet unless something goes wrong.
  let tearingDown = false;
  const log: typeof lineLog = { ...lineLog, info: (fields, msg) => (tearingDown ? undefined : lineLog.info(fields, msg)) };
  const binaries = await ensureKubeBinaries({ log });
  const certs = await generateServingCertificates({ ipAddresses: ['127.0.0.1'] });
  const conversion = await startAdmissionServer({ port: 0, host: '127.0.0.1', tls: { cert: certs.certPem, key: certs.keyPem }, config: { lpxEnabled: false }, log: pino({ level: 'warn' }), shutdownDelaySeconds: 0 });
  let plane;
  try {
    plane = await startControlPlane({
      binaries,
      crdFiles: [...(await defaultCrdFiles()), ...(await lpxCrdFiles())],
      conversionWebhook: { url: `https://127.0.0.1:${conversion.port}/convert`, caBundle: Buffer.from(certs.caPem).toString('base64') },
      log,
      withControllerManager: binaries.kubeControllerManager !== undefined,
      withScheduler: binaries.kubeScheduler !== undefined,
      withKwok: binaries.kwok !== undefined,
      // Services are left behind by every file (its namespace is not deleted), and files run in
      // any order: the default /24 (254 addresses) ran out before reconcile.test.ts's corpus
      // when it ran last. A /16 holds every file's Services.
      serviceClusterIpRange: '10.0.0.0/16',
    });
  } catch (error) {
    await conversion.close();
    throw error;
  }
  return {
    kubeconfigPath: plane.kubeconfigPath,
    admissionUrl: `https://127.0.0.1:${conversion.port}`,
    admissionCaBundle: Buffer.from(certs.caPem).toString('base64'),
    stop: async () => {
      tearingDown = true;
      await plane.stop();
      await conversion.close();
    },
  };
}
