/**
 * Intra-pod failover in a worker's pod: the main container is cloned into two engine
 * containers, `engine-0` (active) and `engine-1` (standby), on staggered system and
 * forward-pass metric ports; the standby takes over by acquiring the failover lock on the GMS
 * shared volume. Runs after GMS, so both engines inherit the shared claim and mount.
 *
 * Source (upstream `ai-dynamo/dynamo`, `deploy/operator/internal/dynamo/`): `failover.go`
 * (`IsIntraPodFailoverEnabled`, `buildFailoverPod`, `buildEngineContainer`,
 * `applyTRTLLMFailoverOverrides`, the frontend-sidecar env), `failover_vllm.go`
 * (`applyVLLMOverrides`, `staggerFlagValue`), `failover_sglang.go`
 * (`applySGLangFailoverOverrides`); values cross-checked against `failover_test.go`. The
 * reference documents are silent on failover. Everything here is pure.
 * @module
 */
import type { Component, Container, EnvVar, FieldIssue, PodCliqueScalingGroupConfig, PodCliqueTemplateSpec } from '../../api/index.js';
import { FRONTEND_SIDECAR_CONTAINER_NAME, MAIN_CONTAINER_NAME } from '../../api/index.js';
import { DYNAMO_FORWARDPASS_METRIC_PORT, DYNAMO_SYSTEM_PORT } from './component-defaults.js';
import {
  experimentalMode,
  GMS_SHARED_MOUNT_PATH,
  gmsEnginePodSpec,
  gmsResourceClaimTemplateConfigs,
  gmsResourceClaimTemplateSpec,
  gmsResourceSharingEntries,
  gmsWeightServerPodSpec,
  gpuMemoryServiceMode,
  singleNodeGmsRoles,
  type GmsPodSpec,
} from './gms.js';
import { MPI_RUN_SSH_PORT } from './multinode.js';
import { cloneJson } from '../clone.js';

/** Engines per intra-pod failover pod (upstream `failoverEngineCount`). */
export const FAILOVER_ENGINE_COUNT = 2;
/** The flock the engines elect the active one with (upstream `intraPodFailoverLockFile`). */
export const INTRA_POD_FAILOVER_LOCK_FILE = `${GMS_SHARED_MOUNT_PATH}/failover.lock`;
/** Stride between the engines' torch.distributed master ports (upstream `vllmMasterPortStride`). */
export const VLLM_MASTER_PORT_STRIDE = 100;

type Json = Record<string, unknown>;

/** Whether a component clones its engine inside one pod: `experimental.failover` in mode IntraPod (the default). Upstream `IsIntraPodFailoverEnabled`. Pure. */
export function isIntraPodFailover(component: Component): boolean {
  return experimentalMode(component.experimental?.failover) === 'IntraPod';
}

/** Removes every env var of that name, then appends the new one (upstream `appendOrReplaceEnvVars`). Pure. */
export function appendOrReplaceEnv(env: readonly EnvVar[] | undefined, ...variables: readonly EnvVar[]): EnvVar[] {
  let out = [...(env ?? [])];
  for (const variable of variables) out = [...out.filter((e) => e.name !== variable.name), variable];
  return out;
}

/** Env names the engine drops from the cloned main container before setting its own (upstream `buildEngineContainer` removeSet). */
const ENGINE_REPLACED_ENV = new Set(['DYN_SYSTEM_USE_ENDPOINT_HEALTH_STATUS', 'DYN_SYSTEM_PORT', 'DYN_SYSTEM_ENABLED', 'DYN_HEALTH_CHECK_ENABLED', 'CONTAINER_NAME', 'DYN_FORWARDPASS_METRIC_PORT']);

/**
 * One failover engine cloned from the main container: name `engine-<id>`, the only port
 * `system-<id>` (TCP, 9090+id); the health-status, system-port, health-check, CONTAINER_NAME
 * and forward-pass-port env dropped, then ENGINE_ID, CONTAINER_NAME, FAILOVER_LOCK_PATH,
 * DYN_GMS_FAILOVER_PRIMARY_ENGINE_ID=0, DYN_GMS_FAILOVER_SHADOW_MODE=true,
 * DYN_SYSTEM_STARTING_HEALTH_STATUS=notready, DYN_SYSTEM_PORT, DYN_SYSTEM_ENABLED=true,
 * DYN_KUBE_DISCOVERY_DEBOUNCE_MS=25, the three `*_GMS_LOCK_BEFORE_INIT` (1 on engine-0, else 0)
 * and DYN_FORWARDPASS_METRIC_PORT=20380+id; HTTP probes retargeted to `system-<id>`.
 * Source: upstream `buildEngineContainer`. Pure: `base` is cloned.
 */
export function failoverEngineContainer(base: Container, engineId: number): Container {
  const engine = cloneJson(base);
  engine.name = `engine-${engineId}`;
  const portName = `system-${engineId}`;
  const systemPort = DYNAMO_SYSTEM_PORT + engineId;
  engine.ports = [{ protocol: 'TCP', name: portName, containerPort: systemPort }];
  const lockBeforeInit = engineId === 0 ? '1' : '0';
  engine.env = appendOrReplaceEnv(
    (engine.env ?? []).filter((e) => !ENGINE_REPLACED_ENV.has(e.name)),
    { name: 'ENGINE_ID', value: String(engineId) },
    { name: 'CONTAINER_NAME', value: engine.name },
    { name: 'FAILOVER_LOCK_PATH', value: INTRA_POD_FAILOVER_LOCK_FILE },
    { name: 'DYN_GMS_FAILOVER_PRIMARY_ENGINE_ID', value: '0' },
    { name: 'DYN_GMS_FAILOVER_SHADOW_MODE', value: 'true' },
    { name: 'DYN_SYSTEM_STARTING_HEALTH_STATUS', value: 'notready' },
    { name: 'DYN_SYSTEM_PORT', value: String(systemPort) },
    { name: 'DYN_SYSTEM_ENABLED', value: 'true' },
    { name: 'DYN_KUBE_DISCOVERY_DEBOUNCE_MS', value: '25' },
    { name: 'DYN_VLLM_GMS_LOCK_BEFORE_INIT', value: lockBeforeInit },
    { name: 'DYN_SGLANG_GMS_LOCK_BEFORE_INIT', value: lockBeforeInit },
    { name: 'DYN_TRTLLM_GMS_LOCK_BEFORE_INIT', value: lockBeforeInit },
    { name: 'DYN_FORWARDPASS_METRIC_PORT', value: String(DYNAMO_FORWARDPASS_METRIC_PORT + engineId) },
  );
  for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe'] as const) {
    const httpGet = ((engine as Json)[probe] as { httpGet?: Json } | undefined)?.httpGet;
    if (httpGet !== undefined) httpGet['port'] = portName;
  }
  return engine;
}

/**
 * The env the `sidecar-frontend` container of a failover pod gets, so it notices an engine
 * switch quickly: discovery debounce 25 ms, gateway not-ready grace 1000 ms, migration retry
 * concurrency 2, first-chunk timeout 500 ms, recent-failover window 1500 ms. Source: upstream
 * `buildFailoverPod` (`gms*Default` constants). Pure.
 */
export function failoverFrontendSidecarEnv(): EnvVar[] {
  return [
    { name: 'DYN_KUBE_DISCOVERY_DEBOUNCE_MS', value: '25' },
    { name: 'DYN_BULWARK_GATEWAY_NOTREADY_GRACE_MS', value: '1000' },
    { name: 'DYN_MIGRATION_RETRY_CONCURRENCY', value: '2' },
    { name: 'DYN_MIGRATION_FIRST_CHUNK_TIMEOUT_MS', value: '500' },
    { name: 'DYN_MIGRATION_RECENT_FAILOVER_WINDOW_MS', value: '1500' },
  ];
}

function engineId(container: Container): number | undefined {
  const match = /^engine-(\d+)$/.exec(container.name);
  return match === null ? undefined : Number(match[1]);
}

/**
 * Adds `offset` to the integer after `flag`: a separate `flag VALUE` arg pair first, else a
 * `flag VALUE` inside one arg, else inside one command word; the first match only.
 * Source: upstream `staggerFlagValue`. Mutates `container`.
 */
export function staggerFlagValue(container: Container, flag: string, offset: number): void {
  const args = container.args ?? [];
  for (let i = 0; i + 1 < args.length; i++) {
    if (args[i] === flag && /^-?\d+$/.test(args[i + 1] ?? '')) {
      container.args = args.map((a, j) => (j === i + 1 ? String(Number(a) + offset) : a));
      return;
    }
  }
  const inWord = new RegExp(`${flag} (\\d+)`);
  for (const key of ['args', 'command'] as const) {
    const words = container[key] ?? [];
    const index = words.findIndex((w) => inWord.test(w));
    if (index >= 0) {
      container[key] = words.map((w, j) => (j === index ? w.replace(inWord, (_m, port: string) => `${flag} ${Number(port) + offset}`) : w));
      return;
    }
  }
}

function hasMasterPortFlag(container: Container): boolean {
  return (container.args ?? []).some((a) => a === '--master-port' || a.includes('--master-port ')) || (container.command ?? []).some((c) => c.includes('--master-port '));
}

/**
 * vLLM engines: DYN_VLLM_GMS_SHADOW_MODE=true, VLLM_NIXL_SIDE_CHANNEL_PORT 5600+id,
 * DYN_VLLM_KV_EVENT_PORT 20080+id; engines after the first get `--master-port` staggered by
 * 100 per engine (appended as `--master-port 29600` when absent); multinode engines get
 * NNODES. Source: upstream `applyVLLMOverrides`. Mutates `podSpec`.
 */
export function applyVllmFailoverOverrides(podSpec: GmsPodSpec, nodeCount: number): void {
  for (const container of podSpec.containers ?? []) {
    const id = engineId(container);
    if (id === undefined) continue;
    container.env = [
      ...(container.env ?? []),
      { name: 'DYN_VLLM_GMS_SHADOW_MODE', value: 'true' },
      { name: 'VLLM_NIXL_SIDE_CHANNEL_PORT', value: String(5600 + id) },
      { name: 'DYN_VLLM_KV_EVENT_PORT', value: String(20080 + id) },
    ];
    if (id > 0) {
      if (hasMasterPortFlag(container)) staggerFlagValue(container, '--master-port', id * VLLM_MASTER_PORT_STRIDE);
      else container.args = [...(container.args ?? []), '--master-port', String(29500 + id * VLLM_MASTER_PORT_STRIDE)];
    }
    if (nodeCount > 1) container.env = [...container.env, { name: 'NNODES', value: String(nodeCount) }];
  }
}

/** SGLang engines get `--disable-piecewise-cuda-graph` unless their command line has it. Source: upstream `applySGLangFailoverOverrides`. Mutates `podSpec`. */
export function applySglangFailoverOverrides(podSpec: GmsPodSpec): void {
  const flag = '--disable-piecewise-cuda-graph';
  for (const container of podSpec.containers ?? []) {
    if (engineId(container) === undefined) continue;
    const words = [...(container.command ?? []), ...(container.args ?? [])].flatMap((w) => w.split(/\s+/));
    if (!words.includes(flag)) container.args = [...(container.args ?? []), flag];
  }
}

/**
 * Multinode TensorRT-LLM engines after the first move their SSH port from 2222 to 2222+id
 * (`Port 2222` and `-p 2222` in the launch line, the TCP readiness probe). Single node: no
 * change. Source: upstream `applyTRTLLMFailoverOverrides`, `retargetTRTLLMSshPort`. Mutates `podSpec`.
 */
export function applyTrtllmFailoverOverrides(podSpec: GmsPodSpec, nodeCount: number): void {
  if (nodeCount <= 1) return;
  const from = String(MPI_RUN_SSH_PORT);
  for (const container of podSpec.containers ?? []) {
    const id = engineId(container);
    if (id === undefined || id <= 0) continue;
    const to = String(MPI_RUN_SSH_PORT + id);
    const retarget = (w: string) => w.replaceAll(`Port ${from}`, `Port ${to}`).replaceAll(`-p ${from}`, `-p ${to}`);
    if (container.args !== undefined) container.args = container.args.map(retarget);
    if (container.command !== undefined) container.command = container.command.map(retarget);
    const tcpSocket = ((container as Json)['readinessProbe'] as { tcpSocket?: Json } | undefined)?.tcpSocket;
    if (tcpSocket !== undefined) tcpSocket['port'] = MPI_RUN_SSH_PORT + id;
  }
}

/**
 * The failover pod: the main container (the pod's first) replaced by `engine-0` and
 * `engine-1`, the other containers kept after them (`sidecar-frontend` with the failover
 * frontend env), then the backend's overrides. Source: upstream `buildFailoverPod`.
 * Mutates `podSpec`; the backend must be vllm, sglang or trtllm (see `failoverComponentIssues`).
 */
export function buildFailoverPod(podSpec: GmsPodSpec, nodeCount: number, backend: string | undefined): void {
  const [main, ...sidecars] = podSpec.containers ?? [];
  if (main === undefined) return;
  const engines = Array.from({ length: FAILOVER_ENGINE_COUNT }, (_, i) => failoverEngineContainer(main, i));
  for (const sidecar of sidecars) {
    if (sidecar.name === FRONTEND_SIDECAR_CONTAINER_NAME) sidecar.env = appendOrReplaceEnv(sidecar.env, ...failoverFrontendSidecarEnv());
  }
  podSpec.containers = [...engines, ...sidecars];
  if (backend === 'vllm') applyVllmFailoverOverrides(podSpec, nodeCount);
  else if (backend === 'trtllm') applyTrtllmFailoverOverrides(podSpec, nodeCount);
  else if (backend === 'sglang') applySglangFailoverOverrides(podSpec);
}

const BACKEND_COMMAND_PATTERNS = [
  ['vllm', /python[0-9.]*\s+[^|&;]*-m\s+[^|&;]*dynamo\.vllm[^|&;]*/],
  ['sglang', /python[0-9.]*\s+[^|&;]*-m\s+[^|&;]*dynamo\.sglang[^|&;]*/],
  ['trtllm', /python[0-9.]*\s+[^|&;]*-m\s+[^|&;]*dynamo\.trtllm[^|&;]*/],
] as const;

/**
 * The backend a failover component's engines run: `spec.backendFramework`, else the one
 * framework `python -m dynamo.<backend>` in the authored main container's command and args
 * names (none or several -> undefined). Source: upstream `detectBackendFrameworkFromArgs`. Pure.
 */
export function failoverBackendFramework(backendFramework: string | undefined, component: Component): string | undefined {
  if (backendFramework !== undefined) return backendFramework;
  const main = component.podTemplate?.spec?.containers?.find((c) => c.name === MAIN_CONTAINER_NAME);
  const line = [...(main?.command ?? []), ...(main?.args ?? [])].join(' ');
  const detected = BACKEND_COMMAND_PATTERNS.filter(([, pattern]) => pattern.test(line)).map(([name]) => name);
  return detected.length === 1 ? detected[0] : undefined;
}

/**
 * Why an intra-pod failover component cannot render: a backend other than vllm, sglang or
 * trtllm, from `spec.backendFramework` or the main container's command (Invalid at
 * `spec.components[i].experimental.failover`, upstream's "failover is not supported for
 * backend framework <b>"). Pure.
 */
export function failoverComponentIssues(component: Component, index: number, backendFramework: string | undefined): FieldIssue[] {
  const backend = failoverBackendFramework(backendFramework, component);
  if (!isIntraPodFailover(component) || backend === 'vllm' || backend === 'sglang' || backend === 'trtllm') return [];
  return [{ path: `spec.components[${index}].experimental.failover`, type: 'Invalid', detail: `failover is not supported for backend framework ${backend ?? '""'}` }];
}

/**
 * Warnings a user should see about a failover component: without `gpuMemoryService` the two
 * engines do not share their GPUs (upstream's webhook requires GMS with failover), a mode
 * different from GMS's, and a kube discovery mode other than `container` (`discoveryMode`: the
 * component's effective `nvidia.com/dynamo-kube-discovery-mode`), with which the engines of one
 * pod cannot register apart. Source: upstream v1beta1 `FailoverSpec` ("requires that
 * gpuMemoryService is also set, and that failover.mode matches gpuMemoryService.mode. Also
 * requires the `nvidia.com/dynamo-kube-discovery-mode: container` annotation"). Pure.
 */
export function failoverWarnings(component: Component, index: number, discoveryMode: string | undefined): string[] {
  const mode = experimentalMode(component.experimental?.failover);
  if (mode === undefined) return [];
  const at = `spec.components[${index}].experimental.failover`;
  const warnings: string[] = [];
  const gms = gpuMemoryServiceMode(component);
  if (gms === undefined) warnings.push(`${at} ("${component.name}"): requires experimental.gpuMemoryService; without it the failover engines do not share GPU memory`);
  else if (gms !== mode) warnings.push(`${at}.mode ("${component.name}"): ${mode} must match experimental.gpuMemoryService.mode ${gms}`);
  if (discoveryMode !== 'container') warnings.push(`${at} ("${component.name}"): requires the annotation nvidia.com/dynamo-kube-discovery-mode: container, so that each engine registers on its own`);
  return warnings;
}

// ── Inter-pod failover: shadow engines in the engine clique of the inter-pod GMS layout ──────

/** The label on every engine clique of an inter-pod failover cohort (upstream `KubeLabelDynamoFailoverEngineGroupMember`). */
export const LABEL_FAILOVER_ENGINE_GROUP_MEMBER = 'nvidia.com/dynamo-failover-engine-group-member';
/** Labels GMS weight-server cliques drop: they run no Dynamo runtime (upstream `buildCliqueForRole`). */
const DISCOVERY_LABELS = ['nvidia.com/dynamo-discovery-backend', 'nvidia.com/dynamo-discovery-enabled'];
/** Annotations GMS weight-server cliques drop: the KV-transfer topology source (upstream `KubeTopologySourceAnnotationKeys`). */
const TOPOLOGY_SOURCE_ANNOTATIONS = ['nvidia.com/topology-label-key', 'nvidia.com/topology-cluster-topology-name'];

/** Whether failover runs shadow engine pods (`failover.mode: InterPod`; upstream `IsInterPodFailoverEnabled`). Pure. */
export function isInterPodFailover(component: Component): boolean {
  return experimentalMode(component.experimental?.failover) === 'InterPod';
}

/**
 * Engine pods per rank: the primary plus `numShadows` shadows (at least 1) with inter-pod
 * failover, else 1. Source: upstream `GetNumShadows`, `GetTotalEnginePods`. Pure.
 */
export function interPodEnginePods(component: Component): number {
  if (!isInterPodFailover(component)) return 1;
  const shadows = (component.experimental?.failover as { numShadows?: unknown } | undefined)?.numShadows;
  return 1 + (typeof shadows === 'number' && Number.isInteger(shadows) && shadows >= 1 ? shadows : 1);
}

/** What a single-node inter-pod GMS component renders into. */
export interface InterPodGmsLayout {
  readonly cliques: PodCliqueTemplateSpec[];
  readonly scalingGroup: PodCliqueScalingGroupConfig & { resourceSharing: Record<string, unknown>[] };
  readonly resourceClaimTemplates: Record<string, unknown>[];
}

/**
 * A single-node inter-pod GMS component (upstream `GenerateGrovePodCliqueSet` with
 * `expandSingleNodeGMSRoles`): the cliques `<name>-gms-0` (one weight server) and `<name>`
 * (1 engine pod, or 1 + shadows with inter-pod failover; 0 while `engineGated`), each built by
 * `buildClique` (the component's ordinary clique: labels, annotations, pod spec) with
 * minAvailable 1 as scaling-group members; the weight server's pod from
 * `gmsWeightServerPodSpec` without discovery labels or topology annotations, the engine's
 * from `gmsEnginePodSpec`, starting after the weight server, labelled as a failover cohort
 * member with inter-pod failover; the scaling group `<name>` sharing the rank's claim template;
 * the PodCliqueSet claim template. Pure.
 */
export function interPodGmsLayout(
  component: Component,
  buildClique: (name: string, replicas: number, minAvailable: number) => PodCliqueTemplateSpec,
  group: Pick<PodCliqueScalingGroupConfig, 'replicas' | 'minAvailable' | 'rollingUpdate' | 'topologyConstraint'>,
  engineGated: boolean,
): InterPodGmsLayout {
  const roles = singleNodeGmsRoles(component, interPodEnginePods(component));
  const gpuCount = gmsResourceClaimTemplateSpec(component).count;
  const failover = isInterPodFailover(component);
  const cliques = roles.map((role) => {
    const clique = buildClique(role.name, role.role === 'main' && engineGated ? 0 : role.replicas, 1);
    const podSpec = clique.spec.podSpec as GmsPodSpec;
    if (role.role === 'gms') {
      clique.spec.podSpec = gmsWeightServerPodSpec(podSpec, role.rank, gpuCount);
      for (const key of DISCOVERY_LABELS) delete clique.labels?.[key];
      for (const key of TOPOLOGY_SOURCE_ANNOTATIONS) delete clique.annotations?.[key];
      return clique;
    }
    clique.spec.podSpec = gmsEnginePodSpec(podSpec, role.rank, failover);
    clique.spec.startsAfter = roles.filter((r) => r.role === 'gms' && r.rank === role.rank).map((r) => r.name);
    if (failover) clique.labels = Object.fromEntries(Object.entries({ ...clique.labels, [LABEL_FAILOVER_ENGINE_GROUP_MEMBER]: 'true' }).sort(([a], [b]) => (a < b ? -1 : 1)));
    return clique;
  });
  return {
    cliques,
    scalingGroup: { name: component.name.toLowerCase(), cliqueNames: roles.map((r) => r.name), ...group, resourceSharing: gmsResourceSharingEntries(component, roles) },
    resourceClaimTemplates: gmsResourceClaimTemplateConfigs(component, roles),
  };
}
