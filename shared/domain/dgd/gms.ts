/**
 * GPU memory service (GMS) in a worker's pod: the intra-pod layout, where the GMS server runs
 * as a native sidecar beside the engine and every GMS process shares the pod's GPUs through
 * one DRA ResourceClaim made from the component's ResourceClaimTemplate.
 *
 * Source (upstream `ai-dynamo/dynamo`, `deploy/operator/internal/`): `dra/dra.go`
 * (`ApplyClaim`, `ResourceClaimTemplateName`, `RemoveGPUResources`, `isGPUResourceName`,
 * `GenerateResourceClaimTemplate`), `gms/gms.go` (`EnsureServerSidecar`, `EnsureClient`,
 * `EnableV1`, `Container`), `dynamo/graph.go` (`GenerateBasePodSpec`: GMS after the pod is
 * built, V1 protocol only with a checkpoint, extra client containers). The reference documents
 * are silent on GMS; upstream-notes/dgd.md §2.3 lists the field. Everything here is pure.
 * @module
 */
import type { Component, Container, EnvVar, FieldIssue } from '../../api/index.js';
import { MAIN_CONTAINER_NAME } from '../../api/index.js';
import { cloneJson } from '../clone.js';

/** The pod-level DRA claim every GMS process and engine references (upstream `dra.ClaimName`). */
export const GMS_DRA_CLAIM_NAME = 'intrapod-shared-gpu';
/** The default DRA DeviceClass (upstream `dra.DefaultDeviceClassName`). */
export const DEFAULT_GPU_DEVICE_CLASS = 'gpu.nvidia.com';
/** The GMS server sidecar (upstream `gms.ServerContainerName`). */
export const GMS_SERVER_CONTAINER_NAME = 'gms-server';
/** The emptyDir the GMS UDS sockets live in, and where it is mounted (upstream `gms.SharedVolumeName`, `gms.SharedMountPath`). */
export const GMS_SHARED_VOLUME = 'gms-intrapod-control';
export const GMS_SHARED_MOUNT_PATH = '/gms-intrapod-control';
/** The socket-directory env var, the V1-protocol switch and the server module (upstream `gms.EnvSocketDir`, `gms.EnvUseV1`, `gms.ServerModule`). */
export const ENV_GMS_SOCKET_DIR = 'GMS_SOCKET_DIR';
export const ENV_GMS_USE_V1 = 'DYN_GMS_USE_V1';
export const GMS_SERVER_MODULE = 'gpu_memory_service.cli.server';
/** The taint key GPU nodes carry; DRA bypasses the device plugin's toleration (upstream `consts.KubeResourceGPUNvidia`). */
export const GPU_TOLERATION_KEY = 'nvidia.com/gpu';

type Json = Record<string, unknown>;
/** A pod spec as rendering builds it (loose JSON with the lists GMS touches typed). */
export type GmsPodSpec = Json & { containers?: Container[]; initContainers?: Container[]; volumes?: Json[]; tolerations?: Json[]; resourceClaims?: Json[] };

export type GmsMode = 'IntraPod' | 'InterPod';

/**
 * The GMS or failover mode of an `experimental` block: absent (or the v1alpha1 form with
 * `enabled: false`) -> undefined; `mode` compared case-insensitively, so the v1alpha1 spelling
 * `intraPod`/`interPod` reads as v1beta1's `IntraPod`/`InterPod`; no mode -> `IntraPod` (the
 * CRD default). Source: upstream v1beta1 `GPUMemoryServiceSpec`/`FailoverSpec` ("presence
 * means enabled"; v1alpha1 conversion drops a disabled block), `IsIntraPodFailoverEnabled`. Pure.
 */
export function experimentalMode(block: unknown): GmsMode | undefined {
  if (typeof block !== 'object' || block === null) return undefined;
  const { enabled, mode } = block as { enabled?: unknown; mode?: unknown };
  if (enabled === false) return undefined;
  return typeof mode === 'string' && mode.toLowerCase() === 'interpod' ? 'InterPod' : 'IntraPod';
}

/** The component's GMS mode (see `experimentalMode`). Pure. */
export function gpuMemoryServiceMode(component: Component): GmsMode | undefined {
  return experimentalMode(component.experimental?.gpuMemoryService);
}

/**
 * The ResourceClaimTemplate a GMS component's pods claim their GPUs from:
 * `<dgd name>-<lower-cased component name>-gpu`. Source: upstream `dra.ResourceClaimTemplateName`. Pure.
 */
export function gmsResourceClaimTemplateName(dgdName: string, componentName: string): string {
  return `${dgdName}-${componentName.toLowerCase()}-gpu`;
}

/**
 * Whether a resource name is a scalar GPU (`nvidia.com/gpu`, `gpu`, `<vendor>/gpu`, a MIG
 * shape containing `/mig-`, or starting with `gpu.`), case-insensitive. Source: upstream `dra.isGPUResourceName`. Pure.
 */
export function isGpuResourceName(name: string): boolean {
  const normalized = name.toLowerCase();
  return normalized === GPU_TOLERATION_KEY || normalized === 'gpu' || normalized.endsWith('/gpu') || normalized.includes('/mig-') || normalized.startsWith('gpu.');
}

/** A resource list without its scalar GPUs (upstream `dra.RemoveGPUResources`), absent when it becomes empty. Pure. */
export function withoutGpuResources(list: unknown): Json | undefined {
  if (typeof list !== 'object' || list === null) return undefined;
  const kept = Object.fromEntries(Object.entries(list as Json).filter(([name]) => !isGpuResourceName(name)));
  return Object.keys(kept).length > 0 ? kept : undefined;
}

/** The GPU count of a container: the first GPU resource of its limits, else of its requests (upstream `ExtractGPUCountFromResourceRequirements`); 0 when none. Pure. */
export function gpuCountOf(container: Container | undefined): number {
  const resources = (container?.resources ?? {}) as { limits?: Json; requests?: Json };
  for (const list of [resources.limits, resources.requests]) {
    const name = Object.keys(list ?? {}).filter(isGpuResourceName).sort()[0];
    if (name === undefined) continue;
    const raw = list?.[name];
    const count = typeof raw === 'number' ? raw : Number(raw);
    return Number.isInteger(count) ? count : 0;
  }
  return 0;
}

/** Moves a container from scalar GPUs to the shared claim, keeping its other resources (upstream `EnsureClient`/`applyClaim`). Mutates `container`. */
function claimSharedGpus(container: Container): void {
  const resources = { ...((container.resources ?? {}) as Json) };
  for (const key of ['limits', 'requests'] as const) {
    const kept = withoutGpuResources(resources[key]);
    if (kept === undefined) delete resources[key];
    else resources[key] = kept;
  }
  const claims = (resources['claims'] as Json[] | undefined) ?? [];
  if (!claims.some((c) => c['name'] === GMS_DRA_CLAIM_NAME)) resources['claims'] = [...claims, { name: GMS_DRA_CLAIM_NAME }];
  container.resources = resources;
}

/**
 * Wires the shared DRA claim onto the main container (the pod's first): its scalar GPUs are
 * removed and `resources.claims` gets `intrapod-shared-gpu`; the pod tolerates
 * `nvidia.com/gpu:NoSchedule` (operator Exists) unless it already does, and
 * `resourceClaims` gets `{name: intrapod-shared-gpu, resourceClaimTemplateName}` (replacing
 * one of that name). Source: upstream `dra.ApplyClaim`. Mutates `podSpec`.
 */
export function applyDraGpuClaim(podSpec: GmsPodSpec, claimTemplateName: string): void {
  const main = podSpec.containers?.[0];
  if (main === undefined) return;
  claimSharedGpus(main);
  const tolerations = podSpec.tolerations ?? [];
  if (!tolerations.some((t) => t['key'] === GPU_TOLERATION_KEY && t['effect'] === 'NoSchedule')) {
    podSpec.tolerations = [...tolerations, { key: GPU_TOLERATION_KEY, operator: 'Exists', effect: 'NoSchedule' }];
  }
  const claim = { name: GMS_DRA_CLAIM_NAME, resourceClaimTemplateName: claimTemplateName };
  podSpec.resourceClaims = [...(podSpec.resourceClaims ?? []).filter((c) => c['name'] !== GMS_DRA_CLAIM_NAME), claim];
}

/**
 * Makes a container a GMS client: the `gms-intrapod-control` emptyDir on the pod, mounted at
 * `/gms-intrapod-control`, `GMS_SOCKET_DIR` pointing there, scalar GPUs replaced by the shared
 * claim (each set or replaced by name). Source: upstream `gms.EnsureClient`. Mutates both.
 */
export function ensureGmsClient(podSpec: GmsPodSpec, container: Container): void {
  const volume = { name: GMS_SHARED_VOLUME, emptyDir: {} };
  const volumes = podSpec.volumes ?? [];
  podSpec.volumes = volumes.some((v) => v['name'] === GMS_SHARED_VOLUME) ? volumes.map((v) => (v['name'] === GMS_SHARED_VOLUME ? volume : v)) : [...volumes, volume];
  const mount = { name: GMS_SHARED_VOLUME, mountPath: GMS_SHARED_MOUNT_PATH };
  const mounts = ((container as Json)['volumeMounts'] as Json[] | undefined) ?? [];
  (container as Json)['volumeMounts'] = mounts.some((m) => m['name'] === GMS_SHARED_VOLUME) ? mounts.map((m) => (m['name'] === GMS_SHARED_VOLUME ? mount : m)) : [...mounts, mount];
  container.env = setEnv(container.env, { name: ENV_GMS_SOCKET_DIR, value: GMS_SHARED_MOUNT_PATH });
  claimSharedGpus(container);
}

/** Sets `DYN_GMS_USE_V1=true` on a GMS process container (upstream `gms.EnableV1`). Mutates `container`. */
export function enableGmsV1(container: Container): void {
  container.env = setEnv(container.env, { name: ENV_GMS_USE_V1, value: 'true' });
}

/**
 * The GMS server as a native sidecar (an init container with `restartPolicy: Always`, no
 * startup probe): `gms-server`, the main container's image, `python3 -m
 * gpu_memory_service.cli.server`, GMS_SOCKET_DIR, the shared mount and the shared claim. The
 * main container becomes a client first; with `useV1` both get DYN_GMS_USE_V1=true. Added
 * once. Source: upstream `gms.EnsureServerSidecar`, `gms.Container`. Mutates both.
 */
export function ensureGmsServerSidecar(podSpec: GmsPodSpec, main: Container, useV1: boolean): void {
  ensureGmsClient(podSpec, main);
  const sidecar: Container = {
    name: GMS_SERVER_CONTAINER_NAME,
    ...(main.image === undefined ? {} : { image: main.image }),
    command: ['python3', '-m', GMS_SERVER_MODULE],
    env: [{ name: ENV_GMS_SOCKET_DIR, value: GMS_SHARED_MOUNT_PATH }],
    volumeMounts: [{ name: GMS_SHARED_VOLUME, mountPath: GMS_SHARED_MOUNT_PATH }],
    resources: { claims: [{ name: GMS_DRA_CLAIM_NAME }] },
  };
  if (useV1) {
    enableGmsV1(sidecar);
    enableGmsV1(main);
  }
  (sidecar as Json)['restartPolicy'] = 'Always';
  const inits = podSpec.initContainers ?? [];
  if (!inits.some((c) => c.name === GMS_SERVER_CONTAINER_NAME)) podSpec.initContainers = [...inits, sidecar];
}

/** The `extraClientContainers` names of a component's GMS block (strings only). Pure. */
export function gmsExtraClientContainers(component: Component): string[] {
  const names = (component.experimental?.gpuMemoryService as { extraClientContainers?: unknown } | undefined)?.extraClientContainers;
  return Array.isArray(names) ? names.filter((n): n is string => typeof n === 'string') : [];
}

/**
 * Intra-pod GMS on a rendered worker pod, in upstream's order: the shared DRA claim on the
 * main container (from ResourceClaimTemplate `claimTemplateName`), the GMS server sidecar
 * (V1 protocol only when the component has `experimental.checkpoint`), then each
 * `extraClientContainers` container wired as a client (V1 likewise). Source: upstream
 * `GenerateBasePodSpec` ("Intra-pod GMS"). Mutates `podSpec`.
 */
export function applyIntraPodGpuMemoryService(podSpec: GmsPodSpec, component: Component, claimTemplateName: string): void {
  const main = podSpec.containers?.[0];
  if (main === undefined) return;
  applyDraGpuClaim(podSpec, claimTemplateName);
  const useV1 = component.experimental?.checkpoint !== undefined;
  ensureGmsServerSidecar(podSpec, main, useV1);
  for (const name of gmsExtraClientContainers(component)) {
    const client = podSpec.containers?.find((c) => c.name === name);
    if (client === undefined) continue;
    ensureGmsClient(podSpec, client);
    if (useV1) enableGmsV1(client);
  }
}

/**
 * What a GMS component needs that rendering cannot give (admission runs the CRD's CEL first):
 * each `extraClientContainers` name must be a podTemplate container other than `main`
 * (Invalid at `spec.components[i].experimental.gpuMemoryService.extraClientContainers[j]`).
 * Source: upstream `gmsExtraClientContainersError`. Pure.
 */
export function gmsComponentIssues(component: Component, index: number): FieldIssue[] {
  if (gpuMemoryServiceMode(component) !== 'IntraPod') return [];
  const declared = new Set((component.podTemplate?.spec?.containers ?? []).map((c) => c.name).filter((n) => n !== MAIN_CONTAINER_NAME));
  return gmsExtraClientContainers(component).flatMap((name, j) =>
    declared.has(name)
      ? []
      : [{ path: `spec.components[${index}].experimental.gpuMemoryService.extraClientContainers[${j}]`, type: 'Invalid' as const, value: name, detail: 'must name a container of podTemplate.spec.containers other than "main"' }],
  );
}

/**
 * The ResourceClaimTemplate upstream creates for an intra-pod GMS component (`resource.k8s.io/v1`):
 * one request `gpus` of exactly the main container's GPU count from
 * `gpuMemoryService.deviceClassName` (default `gpu.nvidia.com`). Source: upstream
 * `dra.GenerateResourceClaimTemplate`, `ExtractGPUParams`. Pure.
 */
export function gmsResourceClaimTemplateSpec(component: Component): { deviceClassName: string; count: number } {
  const className = (component.experimental?.gpuMemoryService as { deviceClassName?: unknown } | undefined)?.deviceClassName;
  const main = component.podTemplate?.spec?.containers?.find((c) => c.name === MAIN_CONTAINER_NAME);
  return { deviceClassName: typeof className === 'string' && className !== '' ? className : DEFAULT_GPU_DEVICE_CLASS, count: gpuCountOf(main) };
}

/** The DRA API the GMS claims come from (Kubernetes 1.34+, `resource.k8s.io/v1`). */
export const RESOURCE_API_VERSION = 'resource.k8s.io/v1';
export const RESOURCE_CLAIM_TEMPLATE_KIND = 'ResourceClaimTemplate';

/**
 * The ResourceClaimTemplate object an intra-pod GMS component's pods claim their GPUs from,
 * as upstream's DGD controller creates it beside the PodCliqueSet: `spec.spec.devices.requests`
 * is one request `gpus`, `exactly` `{deviceClassName, allocationMode: ExactCount, count}`.
 * In: the component, and the object's metadata (name from `gmsResourceClaimTemplateName`, the
 * DGD's labels and controller owner reference). Out: the object, or undefined when the main
 * container asks for no GPU (upstream returns the template to delete: a template is only
 * made for a GPU count > 0). Upstream also refuses the pass when the DeviceClass does not
 * exist ("DeviceClass %q not found: ensure the GPU DRA driver is installed and the device
 * class is registered"); this control plane does not read cluster-scoped DeviceClasses (its
 * role has no cluster-wide grant), so such pods stay Pending with the scheduler's reason.
 * Source: upstream `dra.GenerateResourceClaimTemplate` (`TestGenerateResourceClaimTemplate_Enabled`,
 * `_CustomDeviceClass`), `dynamographdeployment_controller.go` (`SyncResource` of the template
 * per GMS component, controlled by the DGD). Pure.
 */
export function gmsResourceClaimTemplate(component: Component, metadata: Json): Json | undefined {
  const { deviceClassName, count } = gmsResourceClaimTemplateSpec(component);
  if (count <= 0) return undefined;
  return {
    apiVersion: RESOURCE_API_VERSION,
    kind: RESOURCE_CLAIM_TEMPLATE_KIND,
    metadata,
    spec: { spec: { devices: { requests: [{ name: 'gpus', exactly: { deviceClassName, allocationMode: 'ExactCount', count } }] } } },
  };
}

/** Replaces (or appends) one env var by name, keeping the others in order. Pure. */
function setEnv(env: readonly EnvVar[] | undefined, variable: EnvVar): EnvVar[] {
  const list = env ?? [];
  return list.some((e) => e.name === variable.name) ? list.map((e) => (e.name === variable.name ? variable : e)) : [...list, variable];
}

// ── Inter-pod GMS: a weight-server clique per rank beside the engine clique ──────────────────
// Source: upstream `dynamo/graph.go` (`expandSingleNodeGMSRoles`, `generatePodSpecForRole`,
// `buildCliqueForRole`, `applyCliqueStartupDependencies`, `buildGroveScalingGroupConfig`) and the
// `failover.go` revision whose `augmentEngineForGMS(podSpec, rank, isInterPodFailover)` that
// graph.go calls (`gmsWeightServerPodSpec`, `applyGMSSharedResources`, `gmsSharedVolume`,
// `gmsPermFixInitContainer`, `gmsResourceClaimTemplateConfigs`, `gmsResourceSharingEntries`);
// values cross-checked with `failover_test.go` (`TestGmsWeightServerPodSpec`,
// `TestGmsResourceSharingEntries_SingleNode`, `TestGmsResourceClaimTemplateConfigs_*`).

/** The hostPath volume the inter-pod GMS sockets live in (upstream `gmsSharedVolumeName`, `gmsHostPathBase`, `gmsSharedMountPath`). */
export const GMS_INTER_POD_VOLUME = 'gms-shared';
export const GMS_INTER_POD_HOST_PATH = '/run/gms';
export const GMS_INTER_POD_MOUNT_PATH = '/run/gms/shared';
/** The root init container that opens the hostPath directory to the non-root processes (upstream `gmsPermFixInitName`). */
export const GMS_PERM_FIX_CONTAINER_NAME = 'fix-gms-perms';

/** One clique of a component's inter-pod GMS layout (upstream `ServiceRole`). */
export interface GmsRole {
  /** The clique name (lower-cased). */
  readonly name: string;
  /** `gms` for the weight server, `main` for the engine clique. */
  readonly role: 'gms' | 'main';
  readonly replicas: number;
  /** The static node rank (single node: 0). */
  readonly rank: number;
}

/** Whether a component lays out GMS across pods (`gpuMemoryService.mode: InterPod`; upstream `IsInterPodGMSEnabled`). Pure. */
export function isInterPodGms(component: Component): boolean {
  return gpuMemoryServiceMode(component) === 'InterPod';
}

/**
 * The cliques of a single-node inter-pod GMS component: `<name>-gms-0` (1 weight server,
 * rank 0), then `<name>` with `enginePods` engine pods (1, or 1 + shadows with inter-pod
 * failover). Source: upstream `expandSingleNodeGMSRoles`. Pure.
 */
export function singleNodeGmsRoles(component: Component, enginePods: number): GmsRole[] {
  const base = component.name.toLowerCase();
  return [
    { name: `${base}-gms-0`, role: 'gms', replicas: 1, rank: 0 },
    { name: base, role: 'main', replicas: enginePods, rank: 0 },
  ];
}

/** The per-rank ResourceClaimTemplate of an inter-pod component: `<lower(name), dots as hyphens>-gpu-rank-<rank>` (upstream `gmsRCTName`). Pure. */
export function gmsRankResourceClaimTemplateName(componentName: string, rank: number): string {
  return `${componentName.toLowerCase().replace(/\./g, '-')}-gpu-rank-${rank}`;
}

/**
 * The PodCliqueSet `template.resourceClaimTemplates` of an inter-pod component: one per rank,
 * a request `gpu` for exactly `count` devices of `deviceClassName`. Source: upstream
 * `gmsResourceClaimTemplateConfigs`. Pure.
 */
export function gmsResourceClaimTemplateConfigs(component: Component, roles: readonly GmsRole[]): Json[] {
  const { deviceClassName, count } = gmsResourceClaimTemplateSpec(component);
  const ranks = [...new Set(roles.map((r) => r.rank))];
  return ranks.map((rank) => ({
    name: gmsRankResourceClaimTemplateName(component.name, rank),
    templateSpec: { spec: { devices: { requests: [{ name: 'gpu', exactly: { deviceClassName, allocationMode: 'ExactCount', count } }] } } },
  }));
}

/**
 * The scaling group's `resourceSharing`: per rank, that rank's claim template shared
 * `PerReplica` by only that rank's weight-server and engine cliques. Source: upstream
 * `gmsResourceSharingEntries`. Pure.
 */
export function gmsResourceSharingEntries(component: Component, roles: readonly GmsRole[]): Json[] {
  const ranks = [...new Set(roles.map((r) => r.rank))];
  return ranks.map((rank) => ({
    name: gmsRankResourceClaimTemplateName(component.name, rank),
    scope: 'PerReplica',
    filter: { childCliqueNames: roles.filter((r) => r.rank === rank).map((r) => r.name) },
  }));
}

/** The rank-isolated hostPath volume and its mount (`subPathExpr` `$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)/rank-<r>`; upstream `gmsSharedVolume`). Pure. */
export function gmsInterPodVolume(rank: number): { volume: Json; mount: Json } {
  return {
    volume: { name: GMS_INTER_POD_VOLUME, hostPath: { path: GMS_INTER_POD_HOST_PATH, type: 'DirectoryOrCreate' } },
    mount: { name: GMS_INTER_POD_VOLUME, mountPath: GMS_INTER_POD_MOUNT_PATH, subPathExpr: `$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)/rank-${rank}` },
  };
}

/** The root init container that runs `chmod 1777` on the rank's socket directory (upstream `gmsPermFixInitContainer`). Pure. */
export function gmsPermFixInitContainer(rank: number, image: string | undefined): Container {
  return {
    name: GMS_PERM_FIX_CONTAINER_NAME,
    ...(image === undefined ? {} : { image }),
    command: ['sh', '-c', `chmod 1777 ${GMS_INTER_POD_MOUNT_PATH}`],
    securityContext: { runAsUser: 0, runAsNonRoot: false },
    volumeMounts: [gmsInterPodVolume(rank).mount],
  };
}

/** What weight-server and engine pods share: no scalar GPUs on the container, the GPU toleration, the rank's volume and mount, the permission-fix init container (upstream `applyGMSSharedResources`). Mutates both. */
function applyGmsSharedResources(podSpec: GmsPodSpec, container: Container, rank: number): void {
  const resources = { ...((container.resources ?? {}) as Json) };
  for (const key of ['limits', 'requests'] as const) {
    const kept = withoutGpuResources(resources[key]);
    if (kept === undefined) delete resources[key];
    else resources[key] = kept;
  }
  if (Object.keys(resources).length > 0) container.resources = resources;
  else delete container.resources;
  const tolerations = podSpec.tolerations ?? [];
  if (!tolerations.some((t) => t['key'] === GPU_TOLERATION_KEY && t['effect'] === 'NoSchedule')) podSpec.tolerations = [...tolerations, { key: GPU_TOLERATION_KEY, operator: 'Exists', effect: 'NoSchedule' }];
  const { volume, mount } = gmsInterPodVolume(rank);
  podSpec.volumes = [...(podSpec.volumes ?? []), volume];
  (container as Json)['volumeMounts'] = [...(((container as Json)['volumeMounts'] as Json[] | undefined) ?? []), mount];
  podSpec.initContainers = [...(podSpec.initContainers ?? []), gmsPermFixInitContainer(rank, container.image)];
}

/** The weight server's launch script: clear stale sockets, run the GMS server, forward signals, exit with its code (upstream `gmsWrapperScript`). Pure. */
export function gmsWeightServerScript(): string {
  return [
    `rm -f ${GMS_INTER_POD_MOUNT_PATH}/gms_*.sock`,
    'rc=1',
    'cleanup() { kill -- -$$ 2>/dev/null; exit "$rc"; }',
    'trap cleanup SIGTERM SIGINT',
    `python3 -m ${GMS_SERVER_MODULE} &`,
    'echo "Started GMS server pid=$!"',
    'wait -n',
    'rc=$?',
    'echo "GMS server exited (code=$rc), shutting down"',
    'cleanup',
  ].join('\n');
}

/**
 * The weight-server pod of one rank, from the engine's pod spec: the main container runs
 * `bash -c <gmsWeightServerScript>`, keeps no liveness or readiness probe, and starts once
 * both sockets of every GPU exist (`test $(ls /run/gms/shared/gms_*.sock ...) -ge 2*GPUs`,
 * period 2 s, timeout 2 s, 150 failures = 5 min); GMS_SOCKET_DIR=/run/gms/shared; then the
 * shared resources. Source: upstream `gmsWeightServerPodSpec`, `gmsStartupProbeCommand`. Pure:
 * returns a new pod spec.
 */
export function gmsWeightServerPodSpec(base: GmsPodSpec, rank: number, gpuCount: number): GmsPodSpec {
  const podSpec = cloneJson(base);
  const main = podSpec.containers?.[0];
  if (main === undefined) return podSpec;
  main.command = ['bash', '-c'];
  main.args = [gmsWeightServerScript()];
  const json = main as Json;
  json['startupProbe'] = { exec: { command: ['sh', '-c', `test $(ls ${GMS_INTER_POD_MOUNT_PATH}/gms_*.sock 2>/dev/null | wc -l) -ge ${2 * gpuCount}`] }, periodSeconds: 2, timeoutSeconds: 2, failureThreshold: 150 };
  delete json['livenessProbe'];
  delete json['readinessProbe'];
  main.env = [...(main.env ?? []), { name: ENV_GMS_SOCKET_DIR, value: GMS_INTER_POD_MOUNT_PATH }];
  applyGmsSharedResources(podSpec, main, rank);
  return podSpec;
}

/**
 * An engine pod of the inter-pod layout: ENGINE_ID from the `grove.io/podclique-pod-index`
 * label, GMS_SOCKET_DIR and FAILOVER_LOCK_PATH under /run/gms/shared,
 * DYN_SYSTEM_STARTING_HEALTH_STATUS=notready, no DYN_SYSTEM_USE_ENDPOINT_HEALTH_STATUS, the
 * shared resources; with inter-pod failover `restartPolicy: Never` (the cohort is recreated
 * whole). Source: upstream `augmentEngineForGMS`, `gmsEngineEnvVars`. Pure: returns a new pod spec.
 */
export function gmsEnginePodSpec(base: GmsPodSpec, rank: number, isFailover: boolean): GmsPodSpec {
  const podSpec = cloneJson(base);
  const main = podSpec.containers?.[0];
  if (main === undefined) return podSpec;
  main.env = [
    ...(main.env ?? []),
    { name: 'ENGINE_ID', valueFrom: { fieldRef: { fieldPath: "metadata.labels['grove.io/podclique-pod-index']" } } },
    { name: ENV_GMS_SOCKET_DIR, value: GMS_INTER_POD_MOUNT_PATH },
    { name: 'FAILOVER_LOCK_PATH', value: `${GMS_INTER_POD_MOUNT_PATH}/failover.lock` },
    { name: 'DYN_SYSTEM_STARTING_HEALTH_STATUS', value: 'notready' },
  ].filter((e) => e.name !== 'DYN_SYSTEM_USE_ENDPOINT_HEALTH_STATUS');
  applyGmsSharedResources(podSpec, main, rank);
  if (isFailover) podSpec['restartPolicy'] = 'Never';
  return podSpec;
}
