/**
 * The cleanup function: trace-claim release and Run cancellation, Run retention (v1beta2,
 * behind `dgdrV1Beta2.enabled`). Deployed on its own as a Knative Service that scales to zero,
 * woken by claim, Job and Run events and a PingSource tick; run locally with
 * `dynamo-fn serve cleanup`.
 *
 * The route table: one file per concern, one line per route. Add a concern (LPX scheduling
 * deadlines) as its own file exporting a `Route<CleanupDeps>` and one line below.
 * @module
 */
import { FIELD_MANAGER_CLEANUP } from '../../shared/api/index.js';
import { createKube, createListSnapshot, loadKubeConnection, type Kube } from '../../shared/kube/index.js';
import { ConfigError, type FunctionDefinition, type HandlerDeps, type Route } from '../../shared/runtime/index.js';
import type { CleanupDeps } from './deps.js';
import { lpxDeadlineRoute } from './lpx-deadlines.js';
import { route as runRetentionRoute } from './run-retention.js';
import { jobRoute as traceClaimJobRoute, route as traceClaimRoute } from './trace-claim.js';

export type { CleanupDeps } from './deps.js';

/** The routes, by kind: PersistentVolumeClaim and Job (trace claims), DynamoGraphDeploymentRun (retention, release). */
export const routes: readonly Route<CleanupDeps>[] = [
  traceClaimRoute,
  traceClaimJobRoute,
  runRetentionRoute,
  lpxDeadlineRoute,
];

/** The function's dependencies around a given client. */
export function depsWithKube(base: HandlerDeps, kube: Kube): CleanupDeps {
  return { ...base, kube };
}

/**
 * Builds the dependencies: a kube client from KUBECONFIG, else the in-cluster service account.
 * Failures: ConfigError naming KUBECONFIG when it is unset outside a pod.
 */
export async function init(base: HandlerDeps, env: Readonly<Record<string, string | undefined>> = process.env): Promise<CleanupDeps> {
  const kubeConfig = await loadKubeConnection(base.config.kubeconfigPath, env);
  if (kubeConfig === undefined) {
    throw new ConfigError([{ key: 'KUBECONFIG', expected: 'a kubeconfig file path when not running in a Kubernetes pod (KUBERNETES_SERVICE_HOST is unset)', received: undefined }]);
  }
  return depsWithKube(base, createKube(kubeConfig, { fieldManager: FIELD_MANAGER_CLEANUP, now: base.now }));
}

/** A tick's reads: one LIST per kind, taken on the first read and shared by every object's pass. */
export function resyncDeps(deps: CleanupDeps): CleanupDeps {
  return { ...deps, snapshot: createListSnapshot(deps.kube) };
}

const cleanup: FunctionDefinition<CleanupDeps> = { name: 'cleanup', routes, init: (base) => init(base), resyncDeps };
export default cleanup;
