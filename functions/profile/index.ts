/**
 * The profile function: DynamoGraphDeploymentRequest (v1beta1) -> hardware discovery, the
 * profiling Job, the generated DynamoGraphDeployment and the request's status. Deployed as a
 * Knative Service that scales to zero (infra/profile/); run locally with `dynamo-fn serve profile`.
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
import { ConfigError, type FunctionDefinition, type HandlerDeps } from '../../shared/runtime/index.js';
import { configMapRoute, dgdRoute, jobRoute, route as dgdrRoute, type ProfileDeps } from './dgdr.js';

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

const profile: FunctionDefinition<ProfileDeps> = { name: 'profile', routes: [dgdrRoute, jobRoute, configMapRoute, dgdRoute], init: (base) => init(base) };
export default profile;
