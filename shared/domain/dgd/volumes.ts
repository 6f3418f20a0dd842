/**
 * Volumes of a rendered pod spec, so that every mount has its volume: shared memory, the
 * compilation cache, PVC volumes for mounts that name none, and the KV-transfer topology
 * projection (`spec.experimental.kvTransferPolicy`).
 *
 * Source: upstream `deploy/operator/internal/dynamo/graph.go` (`appendMissingPVCVolumesForMounts`,
 * `applyCompilationCache`, `applyCompilationCacheVolume`, `workerKvTransferPolicyEnvVars`,
 * `applyKvTransferPolicyTopologyAnnotations`, `appendTopologyLabelVolumeMount`),
 * `component_worker.go` (`TopologyLabelVolume`, volume `topology-labels` at
 * `/etc/dynamo/topology`), `internal/consts/consts.go` (env and annotation names). Pure.
 * @module
 */
import type { Container, EnvVar } from '../../api/index.js';

type Json = Record<string, unknown>;
type Mount = Json & { name?: string; mountPath?: string; readOnly?: boolean };
type Volume = Json & { name?: string };

export const SHARED_MEMORY_VOLUME = 'shared-memory';
export const SHARED_MEMORY_MOUNT_PATH = '/dev/shm';
export const TOPOLOGY_VOLUME = 'topology-labels';
export const TOPOLOGY_MOUNT_PATH = '/etc/dynamo/topology';
export const ANNOTATION_TOPOLOGY_LABEL_KEY = 'nvidia.com/topology-label-key';
export const ANNOTATION_TOPOLOGY_CLUSTER_TOPOLOGY_NAME = 'nvidia.com/topology-cluster-topology-name';
export const LABEL_DYNAMO_TOPOLOGY_PREFIX = 'nvidia.com/dynamo-topology.';
/** vLLM's default compilation cache mount (upstream `DefaultVLLMCacheMountPoint`). */
export const DEFAULT_VLLM_CACHE_MOUNT_PATH = '/root/.cache/vllm';

/** `spec.experimental.kvTransferPolicy` as rendering reads it. */
export interface KvTransferPolicy {
  readonly clusterTopologyName?: string;
  readonly labelKey?: string;
  readonly domain?: string;
  readonly enforcement?: string;
  readonly preferredWeight?: number;
}

/** The policy when it selects a topology source (labelKey or clusterTopologyName), else undefined. Pure. */
export function activeKvTransferPolicy(experimental: Record<string, unknown> | undefined): KvTransferPolicy | undefined {
  const policy = experimental?.['kvTransferPolicy'];
  if (typeof policy !== 'object' || policy === null) return undefined;
  const p = policy as KvTransferPolicy;
  return (p.labelKey ?? '') !== '' || (p.clusterTopologyName ?? '') !== '' ? p : undefined;
}

/**
 * Worker env of a KV-transfer policy: DYN_KV_TRANSFER_DOMAIN, DYN_KV_TRANSFER_ENFORCEMENT
 * (default `required`), DYN_TOPOLOGY_ENABLED=true, DYN_TOPOLOGY_MOUNT_PATH, and
 * DYN_KV_TRANSFER_PREFERRED_WEIGHT only under `preferred` enforcement: upstream sets no
 * preferred weight with required enforcement (its admission refuses "preferredWeight must not be
 * set when enforcement is \"required\"", and its router docs: "Set
 * DYN_KV_TRANSFER_PREFERRED_WEIGHT only when enforcement is preferred"). Operator-owned: they
 * replace authored values. Source: upstream `workerKvTransferPolicyEnvVars`. Pure.
 */
export function kvTransferPolicyEnv(policy: KvTransferPolicy): EnvVar[] {
  const env: EnvVar[] = [
    { name: 'DYN_KV_TRANSFER_DOMAIN', value: policy.domain ?? '' },
    { name: 'DYN_KV_TRANSFER_ENFORCEMENT', value: policy.enforcement ?? 'required' },
    { name: 'DYN_TOPOLOGY_ENABLED', value: 'true' },
    { name: 'DYN_TOPOLOGY_MOUNT_PATH', value: TOPOLOGY_MOUNT_PATH },
  ];
  if (policy.preferredWeight !== undefined && policy.enforcement === 'preferred') env.push({ name: 'DYN_KV_TRANSFER_PREFERRED_WEIGHT', value: String(policy.preferredWeight) });
  return env;
}

/**
 * The downward-API volume projecting the topology label into `<domain>`: from
 * `metadata.labels['<labelKey>']`, or for a cluster topology from
 * `metadata.labels['nvidia.com/dynamo-topology.<domain>']`. Upstream projects every domain of
 * the ClusterTopologyBinding, which it reads from the cluster; a pure render knows only the
 * policy's domain, so that one is projected. Source: upstream `TopologyLabelVolume`. Pure.
 */
export function topologyLabelVolume(policy: KvTransferPolicy): Volume {
  const domain = policy.domain ?? '';
  const label = (policy.labelKey ?? '') !== '' ? (policy.labelKey ?? '') : `${LABEL_DYNAMO_TOPOLOGY_PREFIX}${domain}`;
  return { name: TOPOLOGY_VOLUME, downwardAPI: { items: [{ path: domain, fieldRef: { fieldPath: `metadata.labels['${label}']` } }] } };
}

/** The clique annotations naming the topology source for the topology label controller. Pure. */
export function topologyAnnotations(policy: KvTransferPolicy): Record<string, string> {
  const out: Record<string, string> = {};
  if ((policy.labelKey ?? '') !== '') out[ANNOTATION_TOPOLOGY_LABEL_KEY] = policy.labelKey ?? '';
  if ((policy.clusterTopologyName ?? '') !== '') out[ANNOTATION_TOPOLOGY_CLUSTER_TOPOLOGY_NAME] = policy.clusterTopologyName ?? '';
  return out;
}

/**
 * Applies a KV-transfer policy to a worker main container and pod spec: policy env, the
 * read-only `topology-labels` mount at `/etc/dynamo/topology` (replacing a mount of the same
 * name or path) and its volume (replacing a volume of the same name). Mutates both arguments.
 */
export function applyKvTransferPolicy(main: Container, podSpec: { volumes?: Json[] }, policy: KvTransferPolicy, mergeEnv: (...lists: readonly (readonly EnvVar[] | undefined)[]) => EnvVar[]): void {
  main.env = mergeEnv(main.env, kvTransferPolicyEnv(policy));
  const mounts = ((main as Json)['volumeMounts'] as Mount[] | undefined) ?? [];
  (main as Json)['volumeMounts'] = [...mounts.filter((m) => m.name !== TOPOLOGY_VOLUME && m.mountPath !== TOPOLOGY_MOUNT_PATH), { name: TOPOLOGY_VOLUME, mountPath: TOPOLOGY_MOUNT_PATH, readOnly: true }];
  podSpec.volumes = [...(podSpec.volumes ?? []).filter((v) => v['name'] !== TOPOLOGY_VOLUME), topologyLabelVolume(policy)];
}

/**
 * Shared memory: an in-memory `emptyDir` volume `shared-memory` of `size` mounted at
 * `/dev/shm`, unless the size is "0" or something is already mounted there. Mutates both. */
export function applySharedMemory(size: string, podSpec: { volumes?: Json[] }, main: Container): void {
  if (size === '0') return;
  const mounts = ((main as Json)['volumeMounts'] as Mount[] | undefined) ?? [];
  if (mounts.some((m) => m.mountPath === SHARED_MEMORY_MOUNT_PATH)) return;
  const volumes = podSpec.volumes ?? [];
  if (!volumes.some((v) => v['name'] === SHARED_MEMORY_VOLUME)) podSpec.volumes = [...volumes, { name: SHARED_MEMORY_VOLUME, emptyDir: { medium: 'Memory', sizeLimit: size } }];
  (main as Json)['volumeMounts'] = [...mounts, { name: SHARED_MEMORY_VOLUME, mountPath: SHARED_MEMORY_MOUNT_PATH }];
}

/**
 * The compilation cache: a writable mount of PVC `pvcName` at `mountPath` (vLLM default
 * `/root/.cache/vllm`) and its PVC volume; for vLLM also VLLM_CACHE_ROOT. Without a mount path
 * and without a backend default nothing is mounted (admission reports it). Mutates both.
 */
export function applyCompilationCache(cache: { pvcName: string; mountPath?: string | undefined } | undefined, backend: string | undefined, podSpec: { volumes?: Json[] }, main: Container): void {
  if (cache === undefined || cache.pvcName === '') return;
  const mountPath = cache.mountPath ?? (backend === 'vllm' ? DEFAULT_VLLM_CACHE_MOUNT_PATH : undefined);
  if (mountPath === undefined) return;
  const mounts = ((main as Json)['volumeMounts'] as Mount[] | undefined) ?? [];
  if (!mounts.some((m) => m.mountPath === mountPath)) (main as Json)['volumeMounts'] = [...mounts, { name: cache.pvcName, mountPath }];
  const volumes = podSpec.volumes ?? [];
  if (!volumes.some((v) => v['name'] === cache.pvcName)) podSpec.volumes = [...volumes, { name: cache.pvcName, persistentVolumeClaim: { claimName: cache.pvcName } }];
  if (backend === 'vllm') main.env = [...(main.env ?? []), { name: 'VLLM_CACHE_ROOT', value: mountPath }];
}

/**
 * Volumes in mount order, with a PVC volume (claim named after the mount) for every main
 * container mount that names no volume, then the remaining volumes. Source: upstream
 * `appendMissingPVCVolumesForMounts` (a v1alpha1 `volumeMounts`/`pvc` entry names a PVC). Pure.
 */
export function withMissingPvcVolumes(volumes: readonly Volume[], mounts: readonly Mount[]): Volume[] {
  const byName = new Map(volumes.map((v) => [v.name, v]));
  const seen = new Set<string>();
  const ordered: Volume[] = [];
  for (const mount of mounts) {
    const name = mount.name ?? '';
    if (name === '' || seen.has(name)) continue;
    seen.add(name);
    ordered.push(byName.get(name) ?? { name, persistentVolumeClaim: { claimName: name } });
  }
  for (const volume of volumes) if (!seen.has(volume.name ?? '')) ordered.push(volume);
  return ordered;
}
