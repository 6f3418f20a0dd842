/**
 * The profile function: DynamoGraphDeploymentRequest profiling; for the v1beta2 API (behind
 * `dgdrV1Beta2.enabled`), DynamoGraphDeploymentRuns: trace-claim protection before the Job
 * exists, the Run's AISimulate Job, and the Run's `Completed` condition. Deployed as a Knative
 * Service that scales to zero; run locally with `dynamo-fn serve profile`.
 * @module
 */
import { hostname } from 'node:os';
import { KubeConfig } from '@kubernetes/client-node';
import { FIELD_MANAGER_PROFILE_RUN } from '../../shared/api/index.js';
import { createKube, type Kube } from '../../shared/kube/index.js';
import { ConfigError, type FunctionDefinition, type HandlerDeps } from '../../shared/runtime/index.js';
import { claimRoute, jobRoute, podRoute, route as runRoute, type RunDeps } from './run.js';

/** The function's dependencies around a given client. */
export function depsWithKube(base: HandlerDeps, kube: Kube): RunDeps {
  return { ...base, kube, instance: process.env['K_REVISION'] ?? hostname() };
}

/**
 * A kube client from KUBECONFIG, else the in-cluster service account.
 * Failures: ConfigError naming KUBECONFIG when it is unset outside a pod.
 */
export function loadKubeConfig(base: HandlerDeps, env: Readonly<Record<string, string | undefined>> = process.env): KubeConfig {
  const kubeConfig = new KubeConfig();
  if (base.config.kubeconfigPath !== undefined) kubeConfig.loadFromFile(base.config.kubeconfigPath);
  else if ((env['KUBERNETES_SERVICE_HOST'] ?? '') === '') {
    throw new ConfigError([{ key: 'KUBECONFIG', expected: 'a kubeconfig file path when not running in a Kubernetes pod (KUBERNETES_SERVICE_HOST is unset)', received: undefined }]);
  } else kubeConfig.loadFromCluster();
  return kubeConfig;
}

export async function init(base: HandlerDeps): Promise<RunDeps> {
  return depsWithKube(base, createKube(loadKubeConfig(base), { fieldManager: FIELD_MANAGER_PROFILE_RUN, now: base.now }));
}

const profile: FunctionDefinition<RunDeps> = { name: 'profile', routes: [runRoute, jobRoute, podRoute, claimRoute], init: (base) => init(base) };
export default profile;
