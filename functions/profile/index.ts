/**
 * The profile function: DynamoGraphDeploymentRequest (v1beta1) -> hardware discovery, the
 * profiling Job, the generated DynamoGraphDeployment and the request's status; for the v1beta2
 * API (behind `dgdrV1Beta2.enabled`), DynamoGraphDeploymentRuns: trace-claim protection before
 * the Job exists, the Run's AISimulate Job, and the Run's `Completed` condition (./run.ts, under
 * its own field manager); one Run per generation of a native v1beta2 request, a spec change
 * stopping the old Run (Superseded) first (./request.ts). Deployed as a Knative Service that scales to zero (infra/chart/templates/profile/); run
 * locally with `dynamo-fn serve profile`.
 *
 * Configuration, besides the host's (shared/runtime): `OPERATOR_IMAGE`, the image carrying
 * `/dgd-apply-overrides` that a profiling Job's init container installs when a request sets
 * `spec.overrides.dgd` (unset: such requests fail with upstream's message); `NATS_SERVER`,
 * `ETCD_ENDPOINTS`, `MODEL_EXPRESS_URL`, `PROMETHEUS_ENDPOINT`, passed to the profiler when set
 * (upstream `AddStandardEnvVars`); `DCGM_METRICS_ENDPOINT_TEMPLATE` and
 * `INTEL_XPU_METRICS_ENDPOINT_TEMPLATE`, where hardware discovery scrapes DCGM and Intel XPU exporter
 * pods (`{POD_IP}` replaced; defaults `http://{POD_IP}:9400/metrics` and `http://{POD_IP}:8080/metrics`, upstream's);
 * `GPU_EXPORTER_NAMESPACES`, the namespaces whose DaemonSet-controlled exporter pods discovery
 * trusts (comma separated, `*` any; default `gpu-operator`; chart `hardwareDiscovery.exporterNamespaces`).
 * @module
 */
import { hostname } from 'node:os';
import { DGDR_V1BETA1, FIELD_MANAGER_PROFILE, FIELD_MANAGER_PROFILE_PUBLISHER, FIELD_MANAGER_PROFILE_RUN, isDgdrV1Beta2View, LABEL_DGDR_RUN_UID } from '../../shared/api/index.js';
import { ENV_DCGM_ENDPOINT_TEMPLATE, ENV_EXPORTER_NAMESPACES, ENV_INTEL_XPU_ENDPOINT_TEMPLATE, EXPORTER_NAMESPACES_EXPECTED, parseExporterNamespaces } from '../../shared/domain/index.js';
import { createKube, createListSnapshot, loadKubeConnection, type Kube, type KubeConnectionConfig } from '../../shared/kube/index.js';
import { ConfigError, combineResyncOutcomes, type FunctionDefinition, type HandlerDeps, type Route } from '../../shared/runtime/index.js';
import { GpuDiscoveryCache } from '../../shared/discovery/index.js';
import { configMapRoute, dgdRoute, jobRoute, route as dgdrRoute, type ProfileDeps } from './dgdr.js';
import { route as requestRoute, runRoute as requestOfRunRoute } from './request.js';
import { candidateRoute, claimRoute, jobRoute as runJobRoute, podRoute, route as runRoute, type RunDeps } from './run.js';

/** The profile function's dependencies: the DGDR ones, and the Runs' client (its own field manager). */
export interface ProfileFunctionDeps extends ProfileDeps {
  readonly runKube: Kube;
  /** The Candidate publisher's client (field manager `dynamo-profile-publisher`: it owns the Run's Published condition). */
  readonly publisherKube: Kube;
}

/** Environment variables copied into the profiler container when set (upstream `AddStandardEnvVars`). */
export const STANDARD_ENV_NAMES = ['NATS_SERVER', 'ETCD_ENDPOINTS', 'MODEL_EXPRESS_URL', 'PROMETHEUS_ENDPOINT'] as const;

/**
 * The function's dependencies around a given client.
 * Failures: ConfigError naming GPU_EXPORTER_NAMESPACES when it is not a namespace list or `*`.
 */
export function depsWithKube(base: HandlerDeps, kube: Kube, env: Readonly<Record<string, string | undefined>> = process.env): ProfileDeps {
  const exporterNamespaces = parseExporterNamespaces(env[ENV_EXPORTER_NAMESPACES]);
  if (!exporterNamespaces.ok) throw new ConfigError([{ key: ENV_EXPORTER_NAMESPACES, expected: EXPORTER_NAMESPACES_EXPECTED, received: env[ENV_EXPORTER_NAMESPACES] }]);
  const operatorImage = env['OPERATOR_IMAGE'];
  const dcgmEndpointTemplate = env[ENV_DCGM_ENDPOINT_TEMPLATE];
  const intelXpuEndpointTemplate = env[ENV_INTEL_XPU_ENDPOINT_TEMPLATE];
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
    ...(dcgmEndpointTemplate === undefined || dcgmEndpointTemplate === '' ? {} : { dcgmEndpointTemplate }),
    ...(intelXpuEndpointTemplate === undefined || intelXpuEndpointTemplate === '' ? {} : { intelXpuEndpointTemplate }),
    // One cache per function instance (upstream keeps one per operator process).
    discoveryCache: new GpuDiscoveryCache(base.now),
    exporterNamespaces: exporterNamespaces.namespaces,
  };
}

/**
 * A kubeconfig from KUBECONFIG, else the in-cluster service account.
 * Failures: ConfigError naming KUBECONFIG when it is unset outside a pod.
 */
export async function loadKubeConfig(base: HandlerDeps, env: Readonly<Record<string, string | undefined>> = process.env): Promise<KubeConnectionConfig> {
  const kubeConfig = await loadKubeConnection(base.config.kubeconfigPath, env);
  if (kubeConfig === undefined) {
    throw new ConfigError([{ key: 'KUBECONFIG', expected: 'a kubeconfig file path when not running in a Kubernetes pod (KUBERNETES_SERVICE_HOST is unset)', received: undefined }]);
  }
  return kubeConfig;
}

/**
 * Builds the DGDR dependencies: a kube client from KUBECONFIG, else the in-cluster service account.
 * Failures: ConfigError naming KUBECONFIG when it is unset outside a pod.
 */
export async function init(base: HandlerDeps, env: Readonly<Record<string, string | undefined>> = process.env): Promise<ProfileDeps> {
  return depsWithKube(base, createKube(await loadKubeConfig(base, env), { fieldManager: FIELD_MANAGER_PROFILE, now: base.now }), env);
}

/** A Run route on the Runs' client. */
function onRunKube(route: Route<RunDeps>): Route<ProfileFunctionDeps> {
  return {
    apiVersion: route.apiVersion,
    kind: route.kind,
    handle: (event, deps) => route.handle(event, { ...deps, kube: deps.runKube }),
    ...(route.listKeys === undefined ? {} : { listKeys: (deps: ProfileFunctionDeps) => route.listKeys?.({ ...deps, kube: deps.runKube }) ?? Promise.resolve([]) }),
  };
}

/**
 * A Job belongs to a DGDR (profiling Job) or to a Run (AISimulate Job); each handler ignores the
 * other's. Both see every Job event; the worse outcome answers the broker.
 */
const anyJobRoute: Route<ProfileFunctionDeps> = {
  apiVersion: 'batch/v1',
  kind: 'Job',
  handle: async (event, deps) => combineResyncOutcomes([await jobRoute.handle(event, deps), await onRunKube(runJobRoute).handle(event, deps)]),
};

/**
 * A DynamoGraphDeploymentRequest event goes to the v1beta1 lifecycle (./dgdr.ts) and, with the
 * v1beta2 gate on, to the v1beta2 Runs (./request.ts); each ignores the other's requests. The
 * resync lists every request once (and at v1beta2 only if a native v1beta2 request needs it:
 * one the v1beta1 list shows as a native v1beta1 request is not read again). The worse outcome
 * answers the broker.
 */
const anyDgdrRoute: Route<ProfileFunctionDeps> = {
  apiVersion: dgdrRoute.apiVersion,
  kind: dgdrRoute.kind,
  handle: async (event, deps) => {
    const v1beta1 = await dgdrRoute.handle(event, deps);
    if (!deps.config.dgdrV1Beta2Enabled) return v1beta1;
    const listed = await deps.snapshot?.get({ apiVersion: DGDR_V1BETA1, kind: event.key.kind, namespace: event.key.namespace, name: event.key.name });
    if (listed !== undefined && !isDgdrV1Beta2View(listed)) return v1beta1;
    return combineResyncOutcomes([v1beta1, await onRunKube(requestRoute).handle(event, deps)]);
  },
  ...(dgdrRoute.listKeys === undefined ? {} : { listKeys: dgdrRoute.listKeys }),
};

/** A Run event reconciles the Run, then the v1beta2 request that controls it (a stopped Run lets the next start). */
const runAndRequestRoute: Route<ProfileFunctionDeps> = {
  ...onRunKube(runRoute),
  handle: async (event, deps) => combineResyncOutcomes([await onRunKube(runRoute).handle(event, deps), await onRunKube(requestOfRunRoute).handle(event, deps)]),
};

/** Both clients on one kubeconfig. Failures: as {@link loadKubeConfig}. */
export async function initProfile(base: HandlerDeps, env: Readonly<Record<string, string | undefined>> = process.env): Promise<ProfileFunctionDeps> {
  const kubeConfig = await loadKubeConfig(base, env);
  return {
    ...depsWithKube(base, createKube(kubeConfig, { fieldManager: FIELD_MANAGER_PROFILE, now: base.now }), env),
    runKube: createKube(kubeConfig, { fieldManager: FIELD_MANAGER_PROFILE_RUN, now: base.now }),
    publisherKube: createKube(kubeConfig, { fieldManager: FIELD_MANAGER_PROFILE_PUBLISHER, now: base.now }),
  };
}

/**
 * A resync's reads: one LIST per kind, taken on the first read and shared by every request's and
 * Run's pass (Pods only those labelled with a Run uid, the only Pods a quiet pass reads).
 */
export function resyncDeps<D extends ProfileDeps>(deps: D): D {
  return { ...deps, snapshot: createListSnapshot(deps.kube, { byLabel: [{ apiVersion: 'v1', kind: 'Pod', label: LABEL_DGDR_RUN_UID }] }) };
}

const profile: FunctionDefinition<ProfileFunctionDeps> = {
  name: 'profile',
  routes: [anyDgdrRoute, anyJobRoute, configMapRoute, dgdRoute, runAndRequestRoute, onRunKube(podRoute), onRunKube(candidateRoute), onRunKube(claimRoute)],
  init: (base) => initProfile(base),
  resyncDeps,
};
export default profile;
