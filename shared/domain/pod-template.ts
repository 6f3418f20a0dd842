/**
 * Builds the pod spec and labels of one clique from a component: injected env, ports, shared
 * memory, system labels. Everything here is pure and works on clones.
 *
 * Source: ../shared/upstream-notes/dgd.md §4.4 (injected env), §4.5 (labels), §2.3
 * (`sharedMemorySize`: nil means 8Gi, "0" disables).
 * @module
 */
import {
  ANNOTATION_ENABLE_METRICS,
  ENV_DYN_COMPONENT,
  ENV_DYN_NAMESPACE,
  ENV_DYN_NAMESPACE_WORKER_SUFFIX,
  ENV_DYN_PARENT_DGD_K8S_NAME,
  ENV_DYN_PARENT_DGD_K8S_NAMESPACE,
  FRONTEND_HTTP_PORT,
  LABEL_COMPONENT,
  LABEL_COMPONENT_TYPE,
  LABEL_DYNAMO_NAMESPACE,
  LABEL_GRAPH_DEPLOYMENT_NAME,
  LABEL_METRICS_ENABLED,
  LABEL_SELECTOR,
  LABEL_WORKER_HASH,
  MAIN_CONTAINER_NAME,
  WORKER_CLASS_TYPES,
  WORKER_SYSTEM_PORT,
  type Component,
  type Container,
  type Dgd,
  type EnvVar,
  type PodTemplateSpec,
} from '../api/index.js';
import { shortenName } from './names.js';

/** The default `/dev/shm` size when `sharedMemorySize` is omitted (upstream-notes/dgd.md §2.3). */
export const DEFAULT_SHARED_MEMORY_SIZE = '8Gi';
const SHARED_MEMORY_VOLUME = 'shared-memory';
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

export interface CliqueContext {
  readonly dgd: Dgd;
  readonly namespace: string;
  readonly component: Component;
  /** The shared worker hash; set for worker-class components only. */
  readonly workerHash: string | undefined;
}

/**
 * System labels of a component's pods, which user labels cannot override
 * (upstream-notes/dgd.md §4.5). Pure.
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
  if (ctx.workerHash !== undefined) labels[LABEL_WORKER_HASH] = ctx.workerHash;
  return labels;
}

/**
 * Labels of a clique: the metrics label (unless `nvidia.com/enable-metrics: "false"`), then
 * `spec.labels`, then pod-template labels, then the system labels, each layer winning over
 * the one before. Pure.
 */
export function cliqueLabels(ctx: CliqueContext, template: PodTemplateSpec | undefined): Record<string, string> {
  const metricsDisabled = ctx.dgd.metadata.annotations?.[ANNOTATION_ENABLE_METRICS]?.toLowerCase() === 'false';
  return sortKeys({
    ...(metricsDisabled ? {} : { [LABEL_METRICS_ENABLED]: 'true' }),
    ...(ctx.dgd.spec.labels ?? {}),
    ...(template?.metadata?.labels ?? {}),
    ...systemLabels(ctx),
  });
}

/** Annotations of a clique: `spec.annotations`, then pod-template annotations. Pure. */
export function cliqueAnnotations(ctx: CliqueContext, template: PodTemplateSpec | undefined): Record<string, string> | undefined {
  const annotations = { ...(ctx.dgd.spec.annotations ?? {}), ...(template?.metadata?.annotations ?? {}) };
  return Object.keys(annotations).length > 0 ? sortKeys(annotations) : undefined;
}

/** Env every component gets (upstream-notes/dgd.md §4.4). Pure. */
export function injectedEnv(ctx: CliqueContext): EnvVar[] {
  const { dgd, component } = ctx;
  const ns = dynamoNamespace(dgd, ctx.namespace, component);
  const env: EnvVar[] = [
    { name: ENV_DYN_NAMESPACE, value: ns },
    { name: ENV_DYN_PARENT_DGD_K8S_NAME, value: dgd.metadata.name ?? '' },
    { name: ENV_DYN_PARENT_DGD_K8S_NAMESPACE, value: ctx.namespace },
    { name: 'DYN_DISCOVERY_BACKEND', value: 'kubernetes' },
    { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
    { name: 'POD_UID', valueFrom: { fieldRef: { fieldPath: 'metadata.uid' } } },
  ];
  if (component.type !== undefined) env.push({ name: ENV_DYN_COMPONENT, value: component.type });
  if (isWorkerClass(component)) {
    env.push(
      { name: 'DYN_SYSTEM_ENABLED', value: 'true' },
      { name: 'DYN_SYSTEM_PORT', value: String(WORKER_SYSTEM_PORT) },
      { name: 'DYN_SYSTEM_USE_ENDPOINT_HEALTH_STATUS', value: '["generate"]' },
    );
  }
  if (component.type === 'frontend') {
    env.push(
      { name: 'DYNAMO_PORT', value: String(FRONTEND_HTTP_PORT) },
      { name: 'DYN_HTTP_PORT', value: String(FRONTEND_HTTP_PORT) },
      { name: 'DYN_NAMESPACE_PREFIX', value: ns },
    );
  }
  return env;
}

/**
 * Merges env lists by name, later lists winning, sorted by name as upstream's `MergeEnvs`. Pure.
 */
export function mergeEnv(...lists: readonly (readonly EnvVar[] | undefined)[]): EnvVar[] {
  const byName = new Map<string, EnvVar>();
  for (const list of lists) for (const item of list ?? []) byName.set(item.name, structuredClone(item));
  return [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * The pod spec of one clique: the authored template's spec with, on the main container, the
 * merged env (injected < graph `spec.env` < authored; the worker suffix is always ours), the
 * component's port, and the shared-memory mount. Pure: `template` is cloned.
 */
export function buildPodSpec(ctx: CliqueContext, template: PodTemplateSpec | undefined): Record<string, unknown> {
  const podSpec = structuredClone(template?.spec ?? {}) as Record<string, unknown> & { containers?: Container[] | null; volumes?: Record<string, unknown>[] };
  const containers = [...(podSpec.containers ?? [])];
  let main = containers.find((c) => c.name === MAIN_CONTAINER_NAME);
  if (main === undefined) {
    main = { name: MAIN_CONTAINER_NAME };
    containers.unshift(main);
  }
  const enforced: EnvVar[] = ctx.workerHash === undefined ? [] : [{ name: ENV_DYN_NAMESPACE_WORKER_SUFFIX, value: ctx.workerHash }];
  main.env = mergeEnv(injectedEnv(ctx), ctx.dgd.spec.env, main.env, enforced);
  const port = componentPort(ctx.component);
  if (port !== undefined) {
    const ports = (main.ports ?? []) as { name?: string; containerPort?: number }[];
    if (!ports.some((p) => p.name === port.name || p.containerPort === port.containerPort)) main.ports = [...ports, port];
  }
  applySharedMemory(ctx.component, podSpec, main);
  podSpec.containers = containers;
  return podSpec;
}

function componentPort(component: Component): { name: string; containerPort: number; protocol: 'TCP' } | undefined {
  if (component.type === 'frontend') return { name: 'http', containerPort: FRONTEND_HTTP_PORT, protocol: 'TCP' };
  if (component.type !== undefined && WORKER_CLASS_TYPES.includes(component.type)) return { name: 'system', containerPort: WORKER_SYSTEM_PORT, protocol: 'TCP' };
  return undefined;
}

function applySharedMemory(component: Component, podSpec: { volumes?: Record<string, unknown>[] }, main: Container): void {
  const size = component.sharedMemorySize === undefined ? DEFAULT_SHARED_MEMORY_SIZE : String(component.sharedMemorySize);
  if (size === '0') return;
  const mounts = (main['volumeMounts'] ?? []) as { mountPath?: string }[];
  if (mounts.some((m) => m.mountPath === '/dev/shm')) return;
  const volumes = podSpec.volumes ?? [];
  if (!volumes.some((v) => v['name'] === SHARED_MEMORY_VOLUME)) {
    podSpec.volumes = [...volumes, { name: SHARED_MEMORY_VOLUME, emptyDir: { medium: 'Memory', sizeLimit: size } }];
  }
  main['volumeMounts'] = [...mounts, { name: SHARED_MEMORY_VOLUME, mountPath: '/dev/shm' }];
}

function sortKeys(record: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
