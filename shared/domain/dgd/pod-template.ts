/**
 * Builds the pod spec and labels of one clique from a component: injected env, ports, shared
 * memory, system labels. Everything here is pure and works on clones.
 *
 * Source: ../shared/upstream-notes/dgd.md §4.4 (injected env), §4.5 (labels), §2.3
 * (`sharedMemorySize`: nil means 8Gi, "0" disables).
 * @module
 */
import {
  ANNOTATION_DISCOVERY_BACKEND,
  ANNOTATION_ENABLE_METRICS,
  ANNOTATION_KAI_QUEUE,
  ANNOTATION_KUBE_DISCOVERY_MODE,
  ANNOTATION_OPERATOR_ORIGIN_VERSION,
  ANNOTATION_VLLM_DISTRIBUTED_EXECUTOR_BACKEND,
  DEFAULT_KAI_QUEUE,
  ENV_DYN_COMPONENT,
  ENV_DYN_NAMESPACE,
  ENV_DYN_NAMESPACE_WORKER_SUFFIX,
  ENV_DYN_PARENT_DGD_K8S_NAME,
  ENV_DYN_PARENT_DGD_K8S_NAMESPACE,
  LABEL_COMPONENT,
  LABEL_COMPONENT_CLASS,
  LABEL_COMPONENT_TYPE,
  LABEL_DISCOVERY_BACKEND,
  LABEL_DISCOVERY_ENABLED,
  LABEL_DYNAMO_NAMESPACE,
  LABEL_GRAPH_DEPLOYMENT_NAME,
  LABEL_KAI_QUEUE,
  LABEL_METRICS_ENABLED,
  LABEL_SELECTOR,
  LABEL_WORKER_HASH,
  MAIN_CONTAINER_NAME,
  WORKER_CLASS_TYPES,
  type Component,
  type Container,
  type Dgd,
  type EnvVar,
  type PodTemplateSpec,
} from '../../api/index.js';
import { baseContainer, frontendBaseContainer, mergeEnvByName, mergeEnvByNameShared, mergeMainContainerOwned, mergeOverride, mergePodSpecOwned } from './component-defaults.js';
import { applySglangMultinode, applyTrtllmMultinode, applyVllmMultinode, multinodeTopologyEnv, type MultinodeContext, type MultinodeRole } from './multinode.js';
import { componentRuntimeVersion, parseImageVersion, GATE_CANARY_HEALTH_CHECKS, GATE_MULTINODE_TOPOLOGY_ALIASES, GATE_VLLM_MULTIPROCESSING, isOriginGateEnabled, isRuntimeGateEnabled } from './runtime-version.js';
import {
  activeKvTransferPolicy,
  ANNOTATION_TOPOLOGY_CLUSTER_TOPOLOGY_NAME,
  ANNOTATION_TOPOLOGY_LABEL_KEY,
  applyCompilationCache,
  applyKvTransferPolicy,
  applySharedMemory,
  topologyAnnotations,
  withMissingPvcVolumes,
} from './volumes.js';
import { isMultinode, shortenName } from './names.js';
import { applyIntraPodGpuMemoryService, gmsResourceClaimTemplateName, gpuMemoryServiceMode } from './gms.js';
import { buildFailoverPod, failoverBackendFramework, isIntraPodFailover } from './failover.js';
import { withK8sDiscoveryServiceAccount } from './k8s-discovery.js';
import { cloneJson } from '../clone.js';

/** The default `/dev/shm` size when `sharedMemorySize` is omitted (upstream-notes/dgd.md §2.3). */
export const DEFAULT_SHARED_MEMORY_SIZE = '8Gi';
const MAX_LABEL_VALUE_LENGTH = 63;

/**
 * The Dynamo namespace of a DGD: `<k8s namespace>-<dgd name with dots as hyphens>`, or
 * `dynamo` for a component with `globalDynamoNamespace` (upstream-notes/dgd.md §4.4). Pure.
 */
export function dynamoNamespace(dgd: Pick<Dgd, 'metadata'>, namespace: string, component?: Component): string {
  if (component?.globalDynamoNamespace === true) return 'dynamo';
  return `${namespace}-${(dgd.metadata.name ?? '').replace(/\./g, '-')}`;
}

export function isWorkerClass(component: Component): boolean {
  return component.type !== undefined && WORKER_CLASS_TYPES.includes(component.type);
}

/** A label value: at most 63 characters, shortened with a stable hash suffix. Pure. */
export function labelValue(value: string): string {
  return shortenName(value, MAX_LABEL_VALUE_LENGTH);
}


/** Operator settings pod rendering depends on (see RenderConfig). */
export interface PodSettings {
  /**
   * The configured operator version (`OPERATOR_VERSION`): admission stamps it as a new DGD's
   * origin version. Rendering never reads it for a gate (see `isOriginGateEnabled`): a stored DGD
   * renders by its own annotation, or as legacy without one.
   */
  readonly defaultOriginVersion: string;
  /** Secret with the TensorRT-LLM SSH key pair (upstream operator config `mpi.sshSecretName`). */
  readonly mpiSshSecretName: string;
  /** Operator default discovery backend (upstream `discovery.backend`): `kubernetes` or `etcd`. */
  readonly discoveryBackend: 'kubernetes' | 'etcd';
  /** Gang scheduler integration of the installation: KAI, Volcano, or none. */
  readonly scheduler: 'kai' | 'volcano' | 'none';
}

export const DEFAULT_POD_SETTINGS: PodSettings = Object.freeze({
  defaultOriginVersion: '1.6.1',
  mpiSshSecretName: 'mpi-run-ssh-secret',
  discoveryBackend: 'kubernetes',
  scheduler: 'none',
});

export interface CliqueContext {
  readonly dgd: Dgd;
  readonly namespace: string;
  readonly component: Component;
  /** The shared worker hash; set for worker-class components only. */
  readonly workerHash: string | undefined;
  /** The clique's multinode role; absent for a single-node clique. */
  readonly role?: MultinodeRole;
  readonly settings?: PodSettings;
}

/** DGD metadata annotations the operator propagates onto each component pod template (upstream `dgdPropagatedAnnotationKeys`). */
export const PROPAGATED_DGD_ANNOTATIONS = [
  ANNOTATION_ENABLE_METRICS,
  ANNOTATION_DISCOVERY_BACKEND,
  ANNOTATION_KUBE_DISCOVERY_MODE,
  ANNOTATION_OPERATOR_ORIGIN_VERSION,
  ANNOTATION_VLLM_DISTRIBUTED_EXECUTOR_BACKEND,
] as const;

/**
 * The effective annotation of a component: its pod template's value, else the DGD's
 * (upstream `propagateDGDAnnotations`: component values are never overwritten). Pure.
 */
export function componentAnnotation(ctx: Pick<CliqueContext, 'dgd' | 'component'>, key: string, template?: PodTemplateSpec): string | undefined {
  return (template ?? ctx.component.podTemplate)?.metadata?.annotations?.[key] ?? ctx.dgd.metadata.annotations?.[key];
}

/**
 * The discovery backend of a component: the `nvidia.com/dynamo-discovery-backend` annotation
 * (component, else DGD), else the operator default. Source: upstream
 * `controller_common.GetDiscoveryBackend`. Pure.
 */
export function discoveryBackend(ctx: CliqueContext, template?: PodTemplateSpec): string {
  return componentAnnotation(ctx, ANNOTATION_DISCOVERY_BACKEND, template) ?? (ctx.settings ?? DEFAULT_POD_SETTINGS).discoveryBackend;
}

/**
 * System labels of a component's pods, which user labels cannot override
 * (upstream `generateLabels`): selector, graph, component, type, component class `worker` for
 * workers of a graph with an EPP, Dynamo namespace, worker
 * hash, and the Kubernetes discovery labels. (The v1alpha1 `subComponentType` label comes
 * from the conversion, as a pod-template label.) Pure.
 */
export function systemLabels(ctx: CliqueContext): Record<string, string> {
  const { dgd, component } = ctx;
  const labels: Record<string, string> = {
    [LABEL_SELECTOR]: labelValue(`${dgd.metadata.name ?? ''}-${component.name.toLowerCase()}`),
    [LABEL_GRAPH_DEPLOYMENT_NAME]: labelValue(dgd.metadata.name ?? ''),
    [LABEL_COMPONENT]: labelValue(component.name),
    [LABEL_DYNAMO_NAMESPACE]: labelValue(dynamoNamespace(dgd, ctx.namespace, component)),
  };
  if (component.type !== undefined) labels[LABEL_COMPONENT_TYPE] = component.type;
  if (isWorkerClass(component) && dgd.spec.components.some((c) => c.type === 'epp')) labels[LABEL_COMPONENT_CLASS] = 'worker';
  if (ctx.workerHash !== undefined) labels[LABEL_WORKER_HASH] = ctx.workerHash;
  if (discoveryBackend(ctx) === 'kubernetes') {
    labels[LABEL_DISCOVERY_BACKEND] = 'kubernetes';
    labels[LABEL_DISCOVERY_ENABLED] = 'true';
  }
  return labels;
}

/**
 * Labels of a clique: the metrics label (unless `nvidia.com/enable-metrics: "false"`), then
 * `spec.labels`, then pod-template labels, then the system labels, each layer winning over
 * the one before; plus `kai.scheduler/queue` under KAI. Pure.
 */
export function cliqueLabels(ctx: CliqueContext, template: PodTemplateSpec | undefined): Record<string, string> {
  const metricsDisabled = componentAnnotation(ctx, ANNOTATION_ENABLE_METRICS, template)?.toLowerCase() === 'false';
  const labels: Record<string, string> = {
    ...(metricsDisabled ? {} : { [LABEL_METRICS_ENABLED]: 'true' }),
    ...(ctx.dgd.spec.labels ?? {}),
    ...(template?.metadata?.labels ?? {}),
    ...systemLabels(ctx),
  };
  if ((ctx.settings ?? DEFAULT_POD_SETTINGS).scheduler === 'kai') labels[LABEL_KAI_QUEUE] = kaiSchedulerQueue(ctx.dgd);
  return sortKeys(labels);
}

/**
 * The KAI queue of a DGD: `nvidia.com/kai-scheduler-queue` (trimmed), else `dynamo`.
 * Source: upstream `resolveKaiSchedulerQueueName`. Pure.
 */
export function kaiSchedulerQueue(dgd: Pick<Dgd, 'metadata'>): string {
  const queue = dgd.metadata.annotations?.[ANNOTATION_KAI_QUEUE]?.trim() ?? '';
  return queue === '' ? DEFAULT_KAI_QUEUE : queue;
}

/**
 * Annotations of a clique: `spec.annotations`, then pod-template annotations, then the DGD
 * annotations the operator propagates (when the template has none of its own), the
 * component's discovery backend, and the KV-transfer topology source for workers. Pure.
 */
export function cliqueAnnotations(ctx: CliqueContext, template: PodTemplateSpec | undefined): Record<string, string> | undefined {
  const annotations: Record<string, string> = { ...(ctx.dgd.spec.annotations ?? {}), ...(template?.metadata?.annotations ?? {}) };
  for (const key of PROPAGATED_DGD_ANNOTATIONS) {
    const value = ctx.dgd.metadata.annotations?.[key];
    if (value !== undefined && annotations[key] === undefined) annotations[key] = value;
  }
  annotations[ANNOTATION_DISCOVERY_BACKEND] = discoveryBackend(ctx, template);
  delete annotations[ANNOTATION_TOPOLOGY_LABEL_KEY];
  delete annotations[ANNOTATION_TOPOLOGY_CLUSTER_TOPOLOGY_NAME];
  const policy = activeKvTransferPolicy(ctx.dgd.spec.experimental);
  if (policy !== undefined && isWorkerClass(ctx.component)) Object.assign(annotations, topologyAnnotations(policy));
  return Object.keys(annotations).length > 0 ? sortKeys(annotations) : undefined;
}

/**
 * Env every component gets (upstream `getCommonContainer`): DYN_NAMESPACE, DYN_COMPONENT,
 * the parent DGD, downward-API pod identity, DYN_DISCOVERY_BACKEND=kubernetes unless the
 * backend is etcd, CONTAINER_NAME and DYN_KUBE_DISCOVERY_MODE in container discovery mode,
 * and DYN_NAMESPACE_WORKER_SUFFIX on workers. Pure.
 */
export function injectedEnv(ctx: CliqueContext): EnvVar[] {
  const { dgd, component } = ctx;
  const env: EnvVar[] = [
    { name: ENV_DYN_NAMESPACE, value: dynamoNamespace(dgd, ctx.namespace, component) },
    { name: ENV_DYN_PARENT_DGD_K8S_NAME, value: dgd.metadata.name ?? '' },
    { name: ENV_DYN_PARENT_DGD_K8S_NAMESPACE, value: ctx.namespace },
    { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
    { name: 'POD_UID', valueFrom: { fieldRef: { fieldPath: 'metadata.uid' } } },
  ];
  if (component.type !== undefined) env.push({ name: ENV_DYN_COMPONENT, value: component.type });
  if (discoveryBackend(ctx) !== 'etcd') env.push({ name: 'DYN_DISCOVERY_BACKEND', value: 'kubernetes' });
  if (componentAnnotation(ctx, ANNOTATION_KUBE_DISCOVERY_MODE) === 'container') {
    env.push({ name: 'CONTAINER_NAME', value: MAIN_CONTAINER_NAME }, { name: 'DYN_KUBE_DISCOVERY_MODE', value: 'container' });
  }
  if (ctx.workerHash !== undefined) env.push({ name: ENV_DYN_NAMESPACE_WORKER_SUFFIX, value: ctx.workerHash });
  return env;
}

/** Merges env lists by name, later lists winning, sorted by name as upstream's `MergeEnvs`. Pure. */
export function mergeEnv(...lists: readonly (readonly EnvVar[] | undefined)[]): EnvVar[] {
  return mergeEnvByName(...lists);
}

/**
 * Whether a worker serves decode, which keeps the canary health check off: type `decode`,
 * `--disaggregation-mode decode` (or `=decode`), or `--is-decode-worker`; for SGLang also
 * `--use-sglang-tokenizer` or a truthy DYN_SGL_USE_TOKENIZER. Source: upstream
 * `isDecodeWorkerMode` and `TestWorkerHealthCheckDefaultsByBackendMode`. Pure.
 */
export function keepsCanaryOff(component: Component, main: Container, backend: string | undefined): boolean {
  if (component.type === 'decode') return true;
  const tokens = [...(main.command ?? []), ...(main.args ?? [])].flatMap((t) => t.split(/\s+/));
  const flag = (name: string, value?: string) =>
    tokens.some((t, i) => (value === undefined ? t === name : (t === name && tokens[i + 1]?.toLowerCase() === value) || t.toLowerCase() === `${name}=${value}`));
  if (flag('--disaggregation-mode', 'decode') || flag('--is-decode-worker')) return true;
  if (backend !== 'sglang') return false;
  const truthy = ['1', 'true', 'yes', 'y', 'on'];
  return flag('--use-sglang-tokenizer') || (main.env ?? []).some((e) => e.name === 'DYN_SGL_USE_TOKENIZER' && truthy.includes((e.value ?? '').toLowerCase()));
}

/**
 * The vLLM executor of a DGD: `nvidia.com/vllm-distributed-executor-backend` `mp` or `ray`
 * (case-insensitive), else multiprocessing from origin 1.0.0 (`VLLMMultiprocessing`).
 * Source: upstream `shouldUseMpBackend`. Pure.
 */
export function usesVllmMultiprocessing(ctx: CliqueContext): boolean {
  const override = componentAnnotation(ctx, ANNOTATION_VLLM_DISTRIBUTED_EXECUTOR_BACKEND)?.toLowerCase();
  if (override === 'mp') return true;
  if (override === 'ray') return false;
  return isOriginGateEnabled(GATE_VLLM_MULTIPROCESSING, ctx.dgd);
}

type PodSpecJson = Record<string, unknown> & { containers?: Container[]; initContainers?: Container[]; volumes?: Record<string, unknown>[] };

/**
 * The pod spec of one clique (upstream `GenerateBasePodSpec`), in upstream's order:
 * 1. the base container of the component type, overlaid by the authored main container with
 *    the graph `spec.env` under the authored env (user values win);
 * 2. for workers the KV-transfer policy env and topology mount, and the canary health-check
 *    default (on from runtime 1.5.0, off for decode; an authored value wins);
 * 3. on a multinode clique DYNAMO_LEADER_ADDRESS/DYNAMO_RANK (origin >= 1.6.0) and the
 *    backend's launch command;
 * 4. the base pod spec overlaid by the authored pod spec, the default fsGroup, the Kubernetes
 *    discovery ServiceAccount unless one is named (k8s-discovery.ts), the sidecars;
 * 5. compilation cache, shared memory, the v1alpha1 frontend sidecar defaults, and a PVC
 *    volume for every main-container mount that names none.
 * Pure: `template` is cloned.
 */
export function buildPodSpec(ctx: CliqueContext, template: PodTemplateSpec | undefined): Record<string, unknown> {
  const { component, dgd } = ctx;
  const settings = ctx.settings ?? DEFAULT_POD_SETTINGS;
  const backend = dgd.spec.backendFramework;
  const authored = cloneJson(template?.spec ?? {}) as PodSpecJson;
  const authoredContainers = authored.containers ?? [];
  const runtimeVersion = componentRuntimeVersion(component);
  const ns = dynamoNamespace(dgd, ctx.namespace, component);

  const base = baseContainer({ component, runtimeVersion, commonEnv: injectedEnv(ctx) }, ns);
  const user = authoredContainers.find((c) => c.name === MAIN_CONTAINER_NAME);
  // The graph env is the one input the env below takes items from (the rest is this call's own).
  const graphEnv = cloneJson(dgd.spec.env);
  const userWithGraphEnv = user === undefined ? (graphEnv === undefined ? undefined : { name: MAIN_CONTAINER_NAME, env: graphEnv }) : { ...user, env: mergeEnvByNameShared(graphEnv, user.env) };
  // `base` and `authored` are this call's own: the merges move their values instead of copying them.
  const main = mergeMainContainerOwned(base, userWithGraphEnv, mergeEnvByNameShared);

  const podSpec = withK8sDiscoveryServiceAccount(mergePodSpecOwned(component, authored as Record<string, unknown>), dgd.metadata.name ?? '', discoveryBackend(ctx) === 'kubernetes') as PodSpecJson;
  const policy = activeKvTransferPolicy(dgd.spec.experimental);
  if (policy !== undefined && isWorkerClass(component)) applyKvTransferPolicy(main, podSpec, policy, mergeEnvByNameShared);
  // Authored (pod template or graph `spec.env`, which upstream folds into it first) wins.
  if (isWorkerClass(component) && !(userWithGraphEnv?.env ?? []).some((e) => e.name === 'DYN_HEALTH_CHECK_ENABLED')) {
    const enabled = isRuntimeGateEnabled(GATE_CANARY_HEALTH_CHECKS, runtimeVersion) && !keepsCanaryOff(component, main, backend);
    main.env = mergeEnvByNameShared(main.env, [{ name: 'DYN_HEALTH_CHECK_ENABLED', value: String(enabled) }]);
  }

  if (ctx.role !== undefined) {
    const topologyAliases = isOriginGateEnabled(GATE_MULTINODE_TOPOLOGY_ALIASES, dgd);
    if (topologyAliases) main.env = mergeEnvByNameShared(main.env, multinodeTopologyEnv(component));
    const mctx: MultinodeContext = {
      component,
      role: ctx.role,
      nodeCount: component.multinode?.nodeCount ?? 2,
      topologyAliases,
      vllmMultiprocessing: usesVllmMultiprocessing(ctx),
      mpiSshSecretName: settings.mpiSshSecretName,
    };
    if (backend === 'sglang') applySglangMultinode(main, mctx);
    else if (backend === 'vllm') applyVllmMultinode(main, podSpec, mctx);
    else if (backend === 'trtllm') applyTrtllmMultinode(main, podSpec, mctx);
  }

  applyCompilationCache(component.compilationCache, backend, podSpec, main);
  // Every env item is this call's own (built here, or copied from the template or graph env),
  // so the merges share items instead of copying them; no item is ever changed in place.
  main.env = mergeEnvByNameShared(main.env);
  const size = component.sharedMemorySize === undefined ? DEFAULT_SHARED_MEMORY_SIZE : String(component.sharedMemorySize);
  applySharedMemory(size, podSpec, main);
  const sidecars = authoredContainers.filter((c) => c.name !== MAIN_CONTAINER_NAME);
  podSpec.containers = [main, ...sidecars.map((s) => (s.name === component.frontendSidecar ? frontendSidecarContainer(ctx, s) : s))];
  podSpec.volumes = withMissingPvcVolumes(podSpec.volumes ?? [], ((main as Record<string, unknown>)['volumeMounts'] as Record<string, unknown>[] | undefined) ?? []);
  // Upstream applies GMS, then failover, to the finished pod (`GenerateBasePodSpec`).
  if (gpuMemoryServiceMode(component) === 'IntraPod') applyIntraPodGpuMemoryService(podSpec, component, gmsResourceClaimTemplateName(dgd.metadata.name ?? '', component.name));
  if (isIntraPodFailover(component)) buildFailoverPod(podSpec, isMultinode(component) ? (component.multinode?.nodeCount ?? 2) : 1, failoverBackendFramework(backend, component));
  if (podSpec.volumes.length === 0) delete podSpec.volumes;
  if ((podSpec.initContainers ?? []).length === 0) delete podSpec.initContainers;
  return podSpec;
}

/**
 * The frontend sidecar of a worker (`frontendSidecar` names it): the frontend defaults
 * overlaid by the authored sidecar, env merged by name, gated on the sidecar image's version. Source: upstream `mergeFrontendSidecarDefaults`. Pure.
 */
export function frontendSidecarContainer(ctx: CliqueContext, sidecar: Container): Container {
  const frontendComponent: Component = { ...ctx.component, type: 'frontend' };
  const frontendCtx: CliqueContext = { ...ctx, component: frontendComponent, workerHash: undefined };
  // The sidecar's own image version gates its defaults, not the worker's (upstream
  // TestFrontendSidecarNamespacePrefixRuntimeCompatibility); CONTAINER_NAME names the sidecar.
  const runtimeVersion = sidecar.image === undefined ? undefined : parseImageVersion(sidecar.image);
  const commonEnv = injectedEnv(frontendCtx).map((e) => (e.name === 'CONTAINER_NAME' ? { ...e, value: sidecar.name } : e));
  const base = { ...frontendBaseContainer({ component: frontendComponent, runtimeVersion, commonEnv }, dynamoNamespace(ctx.dgd, ctx.namespace, ctx.component)), name: sidecar.name };
  const merged = mergeOverride(base as Record<string, unknown>, sidecar as Record<string, unknown>) as Container;
  merged.env = mergeEnvByName(base.env, sidecar.env);
  merged.name = sidecar.name;
  return merged;
}

function sortKeys(record: Record<string, string>): Record<string, string> {
  // The default sort orders by UTF-16 code units, as `<` does, without a comparator call.
  return Object.fromEntries(Object.keys(record).sort().map((key) => [key, record[key] as string]));
}
