/**
 * The profile function: DynamoGraphDeploymentRequest (v1beta1) profiling (./dgdr.ts: hardware
 * discovery, the profiling Job, the generated DynamoGraphDeployment, the request's status); for
 * the v1beta2 API (behind `dgdrV1Beta2.enabled`), DynamoGraphDeploymentRuns (./run.ts):
 * trace-claim protection before the Job exists, the Run's AISimulate Job, and the Run's
 * `Completed` condition. Deployed as a Knative Service that scales to zero (infra/profile/); run
 * locally with `dynamo-fn serve profile`.
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
import { FIELD_MANAGER_PROFILE, FIELD_MANAGER_PROFILE_RUN } from '../../shared/api/index.js';
import { createKube, type Kube } from '../../shared/kube/index.js';
import { ConfigError, type FunctionDefinition, type HandlerDeps, type Outcome, type Route } from '../../shared/runtime/index.js';
import { configMapRoute as dgdrConfigMapRoute, dgdRoute as dgdrDgdRoute, jobRoute as dgdrJobRoute, route as dgdrRoute, type ProfileDeps } from './dgdr.js';
import { claimRoute, jobRoute as runJobRoute, podRoute, route as runRoute, type RunDeps } from './run.js';

/** Environment variables copied into the profiler container when set (upstream `AddStandardEnvVars`). */
export const STANDARD_ENV_NAMES = ['NATS_SERVER', 'ETCD_ENDPOINTS', 'MODEL_EXPRESS_URL', 'PROMETHEUS_ENDPOINT'] as const;

/** The DGDR (v1beta1) dependencies around a given client (field manager `dynamo-profile`). */
export function dgdrDepsWithKube(base: HandlerDeps, kube: Kube, env: Readonly<Record<string, string | undefined>> = process.env): ProfileDeps {
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

/** Both halves' dependencies: the Runs' (this object) and the v1beta1 requests' (`dgdr`), each with its own field manager. */
export interface ProfileFunctionDeps extends RunDeps {
  readonly dgdr: ProfileDeps;
}

/** A v1beta1 request route on the combined deps: the event's logger and clock, the DGDR client. */
function forDgdr(route: Route<ProfileDeps>): Route<ProfileFunctionDeps> {
  return {
    apiVersion: route.apiVersion,
    kind: route.kind,
    handle: (event, deps) => route.handle(event, { ...deps.dgdr, log: deps.log, now: deps.now }),
    ...(route.listKeys === undefined ? {} : { listKeys: (deps: ProfileFunctionDeps) => (route.listKeys as (d: ProfileDeps) => Promise<readonly never[]>)({ ...deps.dgdr, log: deps.log, now: deps.now }) }),
  };
}

const OUTCOME_RANK: Readonly<Record<Outcome['kind'], number>> = { Done: 0, Permanent: 1, Transient: 2 };

/** A Job event may name a profiling Job or a Run's Job: both halves look, each ignoring Jobs not its own; the worse outcome answers. */
const jobRoute: Route<ProfileFunctionDeps> = {
  apiVersion: 'batch/v1',
  kind: 'Job',
  async handle(event, deps) {
    const outcomes = [await forDgdr(dgdrJobRoute).handle(event, deps), await runJobRoute.handle(event, deps)];
    return outcomes.reduce((worst, outcome) => (OUTCOME_RANK[outcome.kind] > OUTCOME_RANK[worst.kind] ? outcome : worst));
  },
};

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

export async function init(base: HandlerDeps, env: Readonly<Record<string, string | undefined>> = process.env): Promise<ProfileFunctionDeps> {
  const kubeConfig = loadKubeConfig(base, env);
  return {
    ...depsWithKube(base, createKube(kubeConfig, { fieldManager: FIELD_MANAGER_PROFILE_RUN, now: base.now })),
    dgdr: dgdrDepsWithKube(base, createKube(kubeConfig, { fieldManager: FIELD_MANAGER_PROFILE, now: base.now }), env),
  };
}

const profile: FunctionDefinition<ProfileFunctionDeps> = {
  name: 'profile',
  routes: [forDgdr(dgdrRoute), jobRoute, forDgdr(dgdrConfigMapRoute), forDgdr(dgdrDgdRoute), runRoute, podRoute, claimRoute],
  init: (base) => init(base),
};
export default profile;
