/**
 * The profile function: DynamoGraphDeploymentRequest (v1beta1) -> hardware discovery, the
 * profiling Job, the generated DynamoGraphDeployment and the request's status. Deployed as a
 * Knative Service that scales to zero (infra/profile/); run locally with `dynamo-fn serve profile`.
 * Behind `dgdrV1Beta2.enabled`, also the v1beta2 DynamoGraphDeploymentRuns (./run.ts): trace-claim
 * protection before the Job exists, the Run's AISimulate Job, its `Completed` condition.
 *
 * Configuration, besides the host's (shared/runtime): `OPERATOR_IMAGE`, the image carrying
 * `/dgd-apply-overrides` that a profiling Job's init container installs when a request sets
 * `spec.overrides.dgd` (unset: such requests fail with upstream's message); `NATS_SERVER`,
 * `ETCD_ENDPOINTS`, `MODEL_EXPRESS_URL`, `PROMETHEUS_ENDPOINT`, passed to the profiler when set
 * (upstream `AddStandardEnvVars`).
 * @module
 */
import { hostname } from 'node:os';
import { KubeConfig } from '@kubernetes/client-node';
import { FIELD_MANAGER_PROFILE } from '../../shared/api/index.js';
import { createKube, type Kube } from '../../shared/kube/index.js';
import { ConfigError, type FunctionDefinition, type HandlerDeps, type Route } from '../../shared/runtime/index.js';
import { configMapRoute, dgdRoute, jobRoute as dgdrJobRoute, route as dgdrRoute, type ProfileDeps } from './dgdr.js';
import { claimRoute as runClaimRoute, jobRoute as runJobRoute, podRoute as runPodRoute, route as runRoute } from './run.js';

/**
 * One Job route for both owners (a route table takes one route per kind): a profiling Job
 * wakes its request, a Run's Job its Run; each handler ignores the other's Jobs.
 */
export const jobRoute: Route<ProfileDeps> = {
  apiVersion: 'batch/v1',
  kind: 'Job',
  async handle(event, deps) {
    const outcome = await dgdrJobRoute.handle(event, deps);
    return outcome.kind === 'Done' ? runJobRoute.handle(event, deps) : outcome;
  },
};

/** Environment variables copied into the profiler container when set (upstream `AddStandardEnvVars`). */
export const STANDARD_ENV_NAMES = ['NATS_SERVER', 'ETCD_ENDPOINTS', 'MODEL_EXPRESS_URL', 'PROMETHEUS_ENDPOINT'] as const;

/** The function's dependencies around a given client. */
export function depsWithKube(base: HandlerDeps, kube: Kube, env: Readonly<Record<string, string | undefined>> = process.env): ProfileDeps {
  const operatorImage = env['OPERATOR_IMAGE'];
  return {
    ...base,
    kube,
    profilingJob: {
      operatorImage: operatorImage === undefined || operatorImage === '' ? undefined : operatorImage,
      standardEnv: STANDARD_ENV_NAMES.flatMap((name) => {
        const value = env[name];
        return value === undefined || value === '' ? [] : [{ name, value }];
      }),
    },
    instance: env['K_REVISION'] ?? hostname(),
  };
}

/**
 * Builds the dependencies: a kube client from KUBECONFIG, else the in-cluster service account.
 * Failures: ConfigError naming KUBECONFIG when it is unset outside a pod.
 */
export async function init(base: HandlerDeps, env: Readonly<Record<string, string | undefined>> = process.env): Promise<ProfileDeps> {
  const kubeConfig = new KubeConfig();
  if (base.config.kubeconfigPath !== undefined) kubeConfig.loadFromFile(base.config.kubeconfigPath);
  else if ((env['KUBERNETES_SERVICE_HOST'] ?? '') === '') {
    throw new ConfigError([{ key: 'KUBECONFIG', expected: 'a kubeconfig file path when not running in a Kubernetes pod (KUBERNETES_SERVICE_HOST is unset)', received: undefined }]);
  } else kubeConfig.loadFromCluster();
  return depsWithKube(base, createKube(kubeConfig, { fieldManager: FIELD_MANAGER_PROFILE, now: base.now }), env);
}

const profile: FunctionDefinition<ProfileDeps> = {
  name: 'profile',
  routes: [dgdrRoute, jobRoute, configMapRoute, dgdRoute, runRoute, runPodRoute, runClaimRoute],
  init: (base) => init(base),
};
export default profile;
