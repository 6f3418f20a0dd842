/**
 * Component defaults: the base main container and base pod spec of each component type, and
 * how an authored pod template is merged over them (user values win where upstream lets them).
 *
 * Source: upstream `deploy/operator/internal/dynamo/component_common.go` (common env, command
 * `/bin/sh -c`, terminationGracePeriodSeconds 60, restartPolicy Always),
 * `component_worker.go` (ports, probes, env), `component_frontend.go`, `component_planner.go`,
 * `component_epp.go`, `graph.go` (`GenerateBasePodSpec`, `mergeContainerByName`,
 * `applyDefaultSecurityContext`), `internal/consts/consts.go` (ports, names). Pure.
 * @module
 */
import type { Component, Container, EnvVar } from '../../api/index.js';
import { MAIN_CONTAINER_NAME } from '../../api/index.js';
import { GATE_CANARY_HEALTH_CHECKS, GATE_INCREASED_WORKER_FAILURE_THRESHOLD, GATE_STRICT_NAMESPACE_PREFIX, isRuntimeGateEnabled, type Version } from './runtime-version.js';
import { cloneJson } from '../clone.js';

/** Ports and names of `internal/consts/consts.go`. */
export const DYNAMO_SYSTEM_PORT = 9090;
export const DYNAMO_NIXL_PORT = 19090;
export const DYNAMO_FORWARDPASS_METRIC_PORT = 20380;
export const DYNAMO_FRONTEND_PORT = 8000;
export const DYNAMO_PLANNER_METRICS_PORT = 9085;
export const EPP_GRPC_PORT_NUMBER = 9002;
export const EPP_GRPC_HEALTH_PORT = 9003;
export const PLANNER_SERVICE_ACCOUNT = 'planner-serviceaccount';
export const EPP_SERVICE_ACCOUNT = 'epp-serviceaccount';
export const DEFAULT_SECURITY_CONTEXT_FS_GROUP = 1000;
export const DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS = 60;
export const EPP_TERMINATION_GRACE_PERIOD_SECONDS = 130;

type Json = Record<string, unknown>;

export interface DefaultsContext {
  readonly component: Component;
  /** The component's runtime version (see runtime-version.ts), for the version-gated defaults. */
  readonly runtimeVersion: Version | undefined;
  /** Env every component gets (DYN_NAMESPACE, pod identity, ...), already computed. */
  readonly commonEnv: readonly EnvVar[];
}

const tcp = (name: string, containerPort: number): Json => ({ name, containerPort, protocol: 'TCP' });
const httpGet = (path: string, port: string): Json => ({ httpGet: { path, port } });

/**
 * Worker defaults (worker, prefill, decode): ports `system` 9090 and `nixl` 19090; liveness
 * `/live` (period 5, timeout 4, failureThreshold 1, or 3 from runtime 1.5.0), readiness
 * `/health` (10/4/3) and startup `/live` (10/5/720, two hours) on the system port; env
 * DYN_SYSTEM_*, DYN_HEALTH_CHECK_ENABLED (true from runtime 1.5.0), NIXL_TELEMETRY_*,
 * DYN_FORWARDPASS_METRIC_PORT. Source: upstream `component_worker.go`. Pure.
 */
export function workerBaseContainer(ctx: DefaultsContext): Container {
  const liveFailures = isRuntimeGateEnabled(GATE_INCREASED_WORKER_FAILURE_THRESHOLD, ctx.runtimeVersion) ? 3 : 1;
  return {
    name: MAIN_CONTAINER_NAME,
    command: ['/bin/sh', '-c'],
    ports: [tcp('system', DYNAMO_SYSTEM_PORT), tcp('nixl', DYNAMO_NIXL_PORT)],
    livenessProbe: { ...httpGet('/live', 'system'), periodSeconds: 5, timeoutSeconds: 4, failureThreshold: liveFailures },
    readinessProbe: { ...httpGet('/health', 'system'), periodSeconds: 10, timeoutSeconds: 4, failureThreshold: 3 },
    startupProbe: { ...httpGet('/live', 'system'), periodSeconds: 10, timeoutSeconds: 5, failureThreshold: 720 },
    env: [
      ...ctx.commonEnv,
      { name: 'DYN_SYSTEM_ENABLED', value: 'true' },
      { name: 'DYN_SYSTEM_USE_ENDPOINT_HEALTH_STATUS', value: '["generate"]' },
      { name: 'DYN_SYSTEM_PORT', value: String(DYNAMO_SYSTEM_PORT) },
      { name: 'DYN_HEALTH_CHECK_ENABLED', value: String(isRuntimeGateEnabled(GATE_CANARY_HEALTH_CHECKS, ctx.runtimeVersion)) },
      { name: 'NIXL_TELEMETRY_ENABLE', value: 'n' },
      { name: 'NIXL_TELEMETRY_EXPORTER', value: 'prometheus' },
      { name: 'NIXL_TELEMETRY_PROMETHEUS_PORT', value: String(DYNAMO_NIXL_PORT) },
      { name: 'DYN_FORWARDPASS_METRIC_PORT', value: String(DYNAMO_FORWARDPASS_METRIC_PORT) },
    ],
  };
}

/**
 * Frontend defaults: command `python3 -m dynamo.frontend`, port `http` 8000, liveness `/live`
 * (initialDelay 15, period 10, timeout 1, failureThreshold 3) and readiness `/health`
 * (10/10/3/3) on `http`; env DYNAMO_PORT, DYN_HTTP_PORT, DYN_NAMESPACE_PREFIX,
 * DYN_NAMESPACE_PREFIX_STRICT=true from runtime 1.6.0, and NVIDIA_VISIBLE_DEVICES=void (a
 * CPU-only pod). Source: upstream `component_frontend.go`,
 * `TestComponentNamespacePrefixRuntimeCompatibility`. Pure.
 */
export function frontendBaseContainer(ctx: DefaultsContext, dynamoNamespace: string): Container {
  const strict = isRuntimeGateEnabled(GATE_STRICT_NAMESPACE_PREFIX, ctx.runtimeVersion) ? [{ name: 'DYN_NAMESPACE_PREFIX_STRICT', value: 'true' }] : [];
  return {
    name: MAIN_CONTAINER_NAME,
    command: ['python3'],
    args: ['-m', 'dynamo.frontend'],
    ports: [tcp('http', DYNAMO_FRONTEND_PORT)],
    livenessProbe: { ...httpGet('/live', 'http'), initialDelaySeconds: 15, periodSeconds: 10, timeoutSeconds: 1, failureThreshold: 3 },
    readinessProbe: { ...httpGet('/health', 'http'), initialDelaySeconds: 10, periodSeconds: 10, timeoutSeconds: 3, failureThreshold: 3 },
    env: [
      ...ctx.commonEnv,
      { name: 'DYNAMO_PORT', value: String(DYNAMO_FRONTEND_PORT) },
      { name: 'DYN_HTTP_PORT', value: String(DYNAMO_FRONTEND_PORT) },
      { name: 'DYN_NAMESPACE_PREFIX', value: dynamoNamespace },
      ...strict,
      { name: 'NVIDIA_VISIBLE_DEVICES', value: 'void' },
    ],
  };
}

/**
 * Planner defaults: port `metrics` 9085, env PLANNER_PROMETHEUS_PORT=9085 and
 * NVIDIA_VISIBLE_DEVICES=void. Source: upstream `component_planner.go`. Pure.
 */
export function plannerBaseContainer(ctx: DefaultsContext): Container {
  return {
    name: MAIN_CONTAINER_NAME,
    command: ['/bin/sh', '-c'],
    ports: [tcp('metrics', DYNAMO_PLANNER_METRICS_PORT)],
    env: [...ctx.commonEnv, { name: 'PLANNER_PROMETHEUS_PORT', value: String(DYNAMO_PLANNER_METRICS_PORT) }, { name: 'NVIDIA_VISIBLE_DEVICES', value: 'void' }],
  };
}

/**
 * EPP defaults: ports `grpc` 9002, `grpc-health` 9003, `metrics` 9090; gRPC liveness and
 * readiness on 9003 (service `inference-extension`, initialDelay 5, period 10); env
 * DYNAMO_KV_BLOCK_SIZE=16, USE_STREAMING=true, RUST_LOG, DYN_NAMESPACE_PREFIX, and
 * DYN_NAMESPACE_PREFIX_STRICT=true from runtime 1.6.0 unless it is the legacy Go EPP
 * (`eppConfig` set). Upstream's default args name the EPP ConfigMap, which this control plane
 * does not render, so the image's own command runs. Source: upstream `component_epp.go`,
 * `TestComponentNamespacePrefixRuntimeCompatibility`, `TestLegacyEPPDoesNotEnableStrictNamespacePrefix`. Pure.
 */
export function eppBaseContainer(ctx: DefaultsContext, dynamoNamespace: string): Container {
  const strict = ctx.component.eppConfig === undefined && isRuntimeGateEnabled(GATE_STRICT_NAMESPACE_PREFIX, ctx.runtimeVersion) ? [{ name: 'DYN_NAMESPACE_PREFIX_STRICT', value: 'true' }] : [];
  const grpcProbe = { grpc: { port: EPP_GRPC_HEALTH_PORT, service: 'inference-extension' }, initialDelaySeconds: 5, periodSeconds: 10 };
  return {
    name: MAIN_CONTAINER_NAME,
    ports: [tcp('grpc', EPP_GRPC_PORT_NUMBER), tcp('grpc-health', EPP_GRPC_HEALTH_PORT), tcp('metrics', DYNAMO_SYSTEM_PORT)],
    livenessProbe: grpcProbe,
    readinessProbe: cloneJson(grpcProbe),
    env: [
      ...ctx.commonEnv,
      { name: 'DYNAMO_KV_BLOCK_SIZE', value: '16' },
      { name: 'USE_STREAMING', value: 'true' },
      { name: 'RUST_LOG', value: 'debug,dynamo_llm::kv_router=trace' },
      { name: 'DYN_NAMESPACE_PREFIX', value: dynamoNamespace },
      ...strict,
    ],
  };
}

/** The base main container of a component by type (`ComponentDefaultsFactory`). Pure. */
export function baseContainer(ctx: DefaultsContext, dynamoNamespace: string): Container {
  switch (ctx.component.type) {
    case 'worker':
    case 'prefill':
    case 'decode':
      return workerBaseContainer(ctx);
    case 'frontend':
      return frontendBaseContainer(ctx, dynamoNamespace);
    case 'planner':
      return plannerBaseContainer(ctx);
    case 'epp':
      return eppBaseContainer(ctx, dynamoNamespace);
    case 'lpx':
    case undefined:
      return { name: MAIN_CONTAINER_NAME, command: ['/bin/sh', '-c'], env: [...ctx.commonEnv] };
    default: {
      const never: never = ctx.component.type;
      return never;
    }
  }
}

/**
 * The base pod spec of a component (`GetBasePodSpec`): terminationGracePeriodSeconds 60 and
 * restartPolicy Always; the planner runs as `planner-serviceaccount`; the EPP as
 * `epp-serviceaccount` with a 130 s grace period. Pure.
 */
export function basePodSpec(component: Component): Json {
  const spec: Json = { terminationGracePeriodSeconds: DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS, restartPolicy: 'Always' };
  if (component.type === 'planner') spec['serviceAccountName'] = PLANNER_SERVICE_ACCOUNT;
  if (component.type === 'epp') {
    spec['serviceAccountName'] = EPP_SERVICE_ACCOUNT;
    spec['terminationGracePeriodSeconds'] = EPP_TERMINATION_GRACE_PERIOD_SECONDS;
  }
  return spec;
}

/** Go's zero value check used by mergo: absent, null, "", 0, false, empty list or map. */
function isGoEmpty(value: unknown): boolean {
  if (value === undefined || value === null || value === '' || value === 0 || value === false) return true;
  if (Array.isArray(value)) return value.length === 0;
  return typeof value === 'object' && Object.keys(value).length === 0;
}

/**
 * Overlays `user` on `base` as upstream's `mergo.Merge(..., WithOverride)` does: a non-empty
 * user field replaces the base field (lists replace whole), nested objects merge key by key.
 * Pure: returns a new object.
 */
export function mergeOverride(base: Json, user: Json): Json {
  return overlayInto(cloneJson(base), user, true);
}

/**
 * {@link mergeOverride} into `out` itself (which the caller owns), copying `user`'s values
 * when `isCopying`, else moving them in (when the caller owns `user` too). Returns `out`.
 */
function overlayInto(out: Json, user: Json, isCopying: boolean): Json {
  for (const key of Object.keys(user)) {
    const value = user[key];
    if (isGoEmpty(value)) continue;
    const current = out[key];
    if (isPlainObject(current) && isPlainObject(value)) out[key] = overlayInto(current, value, isCopying);
    else out[key] = isCopying ? cloneJson(value) : value;
  }
  return out;
}

function isPlainObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Merges env lists by name, later lists winning, sorted by name (upstream `MergeEnvs`). Pure.
 */
export function mergeEnvByName(...lists: readonly (readonly EnvVar[] | undefined)[]): EnvVar[] {
  const out = mergeEnvByNameShared(...lists);
  // Only the winners are copied (the result never shares an item with its inputs).
  for (let index = 0; index < out.length; index += 1) out[index] = cloneJson(out[index] as EnvVar);
  return out;
}

/**
 * {@link mergeEnvByName} without copying the items: the result is a new list that shares its
 * items with the inputs. For the intermediate merges of one pod spec, whose env is copied once
 * at the end (pod-template.ts `buildPodSpec`); env items are never changed in place. Pure.
 */
export function mergeEnvByNameShared(...lists: readonly (readonly EnvVar[] | undefined)[]): EnvVar[] {
  const all: EnvVar[] = [];
  // An insertion sort by name (stable, and linear on the mostly sorted lists merged here, with
  // no comparator calls): same-named items keep their input order, so the last of each run is
  // the one a later list (or a later item) set.
  for (const list of lists) {
    if (list === undefined) continue;
    for (let from = 0; from < list.length; from += 1) {
      const item = list[from] as EnvVar;
      let index = all.length;
      all.push(item);
      while (index > 0 && (all[index - 1] as EnvVar).name > item.name) {
        all[index] = all[index - 1] as EnvVar;
        index -= 1;
      }
      all[index] = item;
    }
  }
  const out: EnvVar[] = [];
  for (let index = 0; index < all.length; index += 1) {
    const item = all[index] as EnvVar;
    if (index + 1 === all.length || (all[index + 1] as EnvVar).name !== item.name) out.push(item);
  }
  return out;
}

/**
 * The main container: the authored container overlaid on the base (`mergeContainerByName`):
 * the user's non-empty fields win (command, args, ports, resources...), the user's probes
 * replace the base probes whole, env is merged by name with the user's values winning, and the
 * name stays `main`. Pure.
 */
export function mergeMainContainer(base: Container, user: Container | undefined): Container {
  if (user === undefined) return cloneJson(base);
  return mergeMainContainerOwned(cloneJson(base), cloneJson(user), mergeEnvByName);
}

/**
 * {@link mergeMainContainer} for a caller that owns both containers (fresh copies nothing else
 * holds): `base` becomes the result and `user`'s values move into it, with the env merged by
 * `mergeEnv`. Saves the copies `buildPodSpec` would otherwise make of what it just built.
 */
export function mergeMainContainerOwned(base: Container, user: Container | undefined, mergeEnv: (...lists: readonly (readonly EnvVar[] | undefined)[]) => EnvVar[]): Container {
  if (user === undefined) return base;
  const baseEnv = base.env;
  const merged = overlayInto(base as Json, user as Json, false) as Container;
  merged.env = mergeEnv(baseEnv, user.env);
  for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe'] as const) {
    const authored = (user as Json)[probe];
    if (authored !== undefined && authored !== null) (merged as Json)[probe] = authored;
  }
  merged.name = MAIN_CONTAINER_NAME;
  return merged;
}

/**
 * The pod spec fields around the containers: the base pod spec overlaid by the authored spec
 * (containers excluded), then the default `securityContext: {fsGroup: 1000}` unless the user
 * authored any securityContext ("If user provides ANY securityContext ... they get full
 * control", upstream `GenerateBasePodSpec`). Pure.
 */
export function mergePodSpec(component: Component, authored: Json | undefined): Json {
  return mergePodSpecOwned(component, cloneJson(authored));
}

/** {@link mergePodSpec} for a caller that owns `authored`: its values move into the result. */
export function mergePodSpecOwned(component: Component, authored: Json | undefined): Json {
  const { containers: _containers, ...rest } = authored ?? {};
  const merged = overlayInto(basePodSpec(component), rest, false);
  if (authored?.['securityContext'] === undefined || authored['securityContext'] === null) {
    merged['securityContext'] = { ...((merged['securityContext'] as Json | undefined) ?? {}), fsGroup: DEFAULT_SECURITY_CONTEXT_FS_GROUP };
  } else {
    merged['securityContext'] = authored['securityContext'];
  }
  return merged;
}
