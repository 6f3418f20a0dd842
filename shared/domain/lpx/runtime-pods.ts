/**
 * The LPX pod runtime contract: what upstream's operator injects into the Agent pods, the hybrid
 * Cyborg (conductor) pods and the LPU-only Nova conductor pods on top of the authored role
 * templates, after the ordinary DGD
 * pod rules (`buildPodSpec`: the DYN_* and pod-identity env, the base pod spec's
 * `terminationGracePeriodSeconds: 60` and `restartPolicy: Always`, the default `fsGroup: 1000`,
 * the `shared-memory` emptyDir at `/dev/shm`) have run.
 *
 * Source: upstream `internal/dynamo/lpx/lpu_pod.go` (`lpuAgentContainerName`,
 * `defaultLPUAgentCPUs`, `updateWorkerPodSpec`, `ensureLPUNodeTolerations`,
 * `applyLPUWorkerContainerBase`, `applyLPUHostDeviceVolumes`, `addLPUHostDeviceVolumeMounts`),
 * `runtime_agent.go` (`configureDirectHybridAgentRuntime`, `configureNodeLocalAgentRuntime`,
 * `configureNodeLocalAgentWorkerContainer`, `addLP30InitContainer`, `lp30WorkerEnvironment`,
 * `configureNodeLocalConductorRuntime`, `setNodeLocalPodIPEnv`), `configureAgentScheduling` and
 * `stripLPUResources` (the HX `nvidia.com/lpu: 16`), `conductor_runtime.go`
 * (`updateLPUConductorContainer`), `runtime_selection.go` (`applyModelPaths`), `cyborg_runtime.go`
 * (`CyborgBatchSizeEnv`, `cyborgFpgaGpiIOFPGACountEnv`, `cyborgFpgaGpiReplicaIndexEnv`,
 * `cyborgSwaCacheIDsEnv`, `applyCyborgManifestPath`), `build.go` (`buildRuntimePath`); the
 * expected fixtures under `internal/dynamo/lpx/testdata/from_dgd_yaml/`: node-local-v2-hybrid,
 * node-local-v2-lpu-only, node-local-v2-specdecode, node-local-v3-hx-lpu-only. Upstream's
 * fixtures and code come from several revisions that differ in details; where they disagree the
 * newest code is followed and the tests say where a fixture differs.
 * Every function here is pure: it returns new objects and never changes its input.
 * @module
 */
import { MAIN_CONTAINER_NAME, type Component, type Container, type EnvVar } from '../../api/index.js';
import { MPI_RUN_SSH_PORT } from '../dgd/multinode.js';
import { LPU_CHIPS_PER_NODE, type LpxBuild } from './build.js';
import { GBUILD_MANIFEST_V2_FILE } from './build-snapshot.js';
import type { LpxPipeline } from './derive.js';

/** The Agent's runtime container name (upstream `lpuAgentContainerName`). */
export const LPX_AGENT_CONTAINER_NAME = 'agent';
/** CPUs an Agent requests (upstream `defaultLPUAgentCPUs`), unless its CPU limit is lower. */
export const LPX_AGENT_CPUS = 62;
/** Huge pages (2 MiB pages) an Agent requests and is limited to (upstream `applyLPUWorkerContainerBase`: 4096Mi). */
export const LPX_AGENT_HUGEPAGES_2MI = '4Gi';
/** The extended resource of LPU chips (upstream fixture node-local-v2-hybrid.yaml). */
export const LPU_RESOURCE_NAME = 'lpu.nvidia.com/lpu';
/** The LPU node taints every Agent tolerates, in upstream's order (`ensureLPUNodeTolerations`). */
export const LPU_NODE_TAINT_KEYS = ['lpu.nvidia.com/node', 'lpu.nvidia.com/lpu', 'lpu.nvidia.com/node-v2'] as const;
/** The Grove label holding a pod's index in its clique (upstream `grovePodCliquePodIndexPath`). */
export const GROVE_POD_INDEX_FIELD_PATH = "metadata.labels['grove.io/podclique-pod-index']";
/** The scheduler of a hybrid Cyborg pod: a GPU pod placed by the default scheduler (upstream fixture node-local-v2-hybrid.yaml). */
export const CYBORG_SCHEDULER_NAME = 'default-scheduler';

type PodSpec = Record<string, unknown> & { containers?: Container[]; volumes?: Record<string, unknown>[] };
type Resources = { limits?: Record<string, string>; requests?: Record<string, string>; claims?: unknown[] };

function mapContainer(podSpec: Readonly<PodSpec>, name: string, change: (c: Container) => Container): PodSpec {
  return { ...podSpec, containers: (podSpec.containers ?? []).map((c) => (c.name === name ? change(c) : c)) };
}

/**
 * Adds the `entries` whose names the env does not have yet, each at its place in name order
 * (`buildPodSpec` leaves the env sorted by name), without moving any present entry: an
 * operator-owned entry published first (see {@link withLeadingEnv}) stays first.
 */
function withEnvDefaults(env: readonly EnvVar[] | undefined, entries: readonly EnvVar[]): EnvVar[] {
  const out = [...(env ?? [])];
  for (const entry of entries) {
    if (out.some((e) => e.name === entry.name)) continue;
    const at = out.findIndex((e) => e.name > entry.name);
    out.splice(at === -1 ? out.length : at, 0, entry);
  }
  return out;
}

/** The volume holding the runtime's models (upstream `commonconsts.ModelStorageVolumeName`). */
export const MODEL_STORAGE_VOLUME_NAME = 'model-storage';

/**
 * lpxBuildRuntimePath (upstream `buildRuntimePath`): where the runtime finds a build: a
 * `file://` build at its URL path; a `gs://bucket/object` build, downloaded by Model Express,
 * at `<model storage>/gcs/<bucket>/<object>`, the model storage being the container's
 * `model-storage` mount path (undefined without one, or with an empty, `.` or `..` object
 * segment). Anything else, or a reference the URL parser refuses, has no path. Pure.
 */
export function lpxBuildRuntimePath(build: Pick<LpxBuild, 'path'>, modelStoragePath?: string): string | undefined {
  let url: URL;
  try {
    url = new URL(build.path);
  } catch {
    // The registry reports an unparsable reference; there is no path to publish.
    return undefined;
  }
  if (url.protocol === 'file:') {
    const path = safeDecode(url.pathname)?.replace(/\/+$/, '');
    return path === '' ? undefined : path;
  }
  if (url.protocol !== 'gs:' || modelStoragePath === undefined || modelStoragePath.trim() === '') return undefined;
  // Segments as written: URL parsing would already have resolved `.` and `..`.
  const object = build.path.slice(`gs://${url.host}`.length).replace(/^\//, '');
  const segments = object.split('/');
  if (object === '' || segments.some((s) => s === '' || s === '.' || s === '..')) return undefined;
  return [modelStoragePath.replace(/\/+$/, ''), 'gcs', url.host, ...segments].join('/');
}

function safeDecode(path: string): string | undefined {
  try {
    return decodeURIComponent(path);
  } catch {
    return undefined;
  }
}

/** The mount path of the container's `model-storage` volume, if it mounts one. Pure. */
export function modelStorageMountPath(container: Container): string | undefined {
  return ((container.volumeMounts ?? []) as { name: string; mountPath: string }[]).find((m) => m.name === MODEL_STORAGE_VOLUME_NAME)?.mountPath;
}

/**
 * lpxAgentChipsPerPod (upstream `lpuChipsPerNode`): an XT Agent pod owns one whole node, 8 LPU
 * chips. HX Agents are left undefined here: their device resource is another one
 * ({@link withHxAgentDevices}). Pure.
 */
export function lpxAgentChipsPerPod(build: Pick<LpxBuild, 'family'>): number | undefined {
  return build.family === 'xt8888' ? LPU_CHIPS_PER_NODE : undefined;
}

/**
 * withAgentContainerName (upstream `configureDirectHybridAgentRuntime`: `agent.Name =
 * lpuAgentContainerName`): the Agent's `main` container is renamed `agent` (admission reserves
 * the name, lpx.md §1.3). Called last: the other rules and the ConfigMap binding address `main`. Pure.
 */
export function withAgentContainerName(podSpec: Readonly<PodSpec>): PodSpec {
  return mapContainer(podSpec, MAIN_CONTAINER_NAME, (c) => ({ ...c, name: LPX_AGENT_CONTAINER_NAME }));
}

/**
 * withPodIpEnv (upstream `setNodeLocalPodIPEnv`, XT form): `POD_IP` from the downward API
 * (`status.podIP`, apiVersion v1) unless the container already sets it. Pure.
 */
export function withPodIpEnv(container: Container): Container {
  return { ...container, env: withEnvDefaults(container.env, [{ name: 'POD_IP', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'status.podIP' } } }]) };
}

/**
 * withLeadingEnv (upstream `applyModelPaths`, `configureNodeLocalConductorRuntime`): the operator
 * owns the named env (`LPX_MODEL_PATH`, the build's runtime path {@link lpxBuildRuntimePath}, and
 * its kin); an authored value is replaced. It goes first in the env, because Kubernetes expands
 * `$(VAR)` only from entries listed earlier and authored entries refer to it (the hybrid
 * fixture's `GAS_DIR: $(LPX_MODEL_PATH)`, the LPU-only one's `NOVA_MODEL_PATH`). Pure.
 */
export function withLeadingEnv(container: Container, name: string, value: string): Container {
  return { ...container, env: [{ name, value }, ...(container.env ?? []).filter((e) => e.name !== name)] };
}

/**
 * withAgentResources (upstream `applyLPUWorkerContainerBase` and the fixture's Agent): requests
 * `cpu` 62 (or the container's CPU limit when lower) and `hugepages-2Mi` 4Gi, limit
 * `hugepages-2Mi` 4Gi. With the chips per pod known ({@link lpxAgentChipsPerPod}, needs a
 * decoded build) the device resources are the scheduler's: limits and requests become exactly
 * `<resourceName>: <chips>` (`lpu.nvidia.com/lpu` unless told; an HX hybrid Agent's
 * `nvidia.com/lpu: 16`, upstream `configureAgentScheduling`) plus the above (the fixture drops the authored
 * `lpu.nvidia.com/devices`); without, the authored limits and requests are kept under them.
 * `claims` are kept. Pure.
 */
export function withAgentResources(container: Container, chipsPerPod: number | undefined, resourceName: string = LPU_RESOURCE_NAME): Container {
  const authored = (container.resources ?? {}) as Resources;
  const cpuLimit = authored.limits?.['cpu'];
  const cpu = cpuLimit !== undefined && cpuQuantity(cpuLimit) < LPX_AGENT_CPUS ? cpuLimit : String(LPX_AGENT_CPUS);
  const devices = chipsPerPod === undefined ? undefined : { [resourceName]: String(chipsPerPod) };
  const limits = { ...(devices ?? authored.limits ?? {}), 'hugepages-2Mi': LPX_AGENT_HUGEPAGES_2MI };
  const requests = { ...(devices ?? authored.requests ?? {}), cpu, 'hugepages-2Mi': LPX_AGENT_HUGEPAGES_2MI };
  const resources: Resources = { limits: sortKeys(limits), requests: sortKeys(requests), ...(authored.claims === undefined ? {} : { claims: authored.claims }) };
  return { ...container, resources } as Container;
}

function cpuQuantity(quantity: string): number {
  return quantity.endsWith('m') ? Number(quantity.slice(0, -1)) / 1000 : Number(quantity);
}

function sortKeys(record: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : 1)));
}

/**
 * withPrivilegedRoot (upstream `applyLPUWorkerContainerBase`): the Agent container runs
 * privileged as root (`privileged: true`, `runAsUser: 0`) to reach the LPU devices; other
 * authored security settings are kept. Pure.
 */
export function withPrivilegedRoot(container: Container): Container {
  const authored = ((container as Record<string, unknown>)['securityContext'] ?? {}) as Record<string, unknown>;
  return { ...container, securityContext: { ...authored, privileged: true, runAsUser: 0 } } as Container;
}

/**
 * withHugepagesMount (upstream `applyLPUWorkerContainerBase`): the container mounts volume
 * `hugepages` at `/dev/hugepages`, and the pod declares it (emptyDir, medium HugePages) unless
 * the template already has a volume of that name. Pure.
 */
export function withHugepagesMount(podSpec: Readonly<PodSpec>): PodSpec {
  const volumes = podSpec.volumes ?? [];
  const withVolume = volumes.some((v) => v['name'] === 'hugepages') ? volumes : [...volumes, { name: 'hugepages', emptyDir: { medium: 'HugePages' } }];
  return mapContainer({ ...podSpec, volumes: withVolume }, MAIN_CONTAINER_NAME, (c) => {
    const mounts = (c.volumeMounts ?? []) as { name: string; mountPath: string }[];
    if (mounts.some((m) => m.name === 'hugepages' || m.mountPath === '/dev/hugepages')) return c;
    return { ...c, volumeMounts: [...mounts, { name: 'hugepages', mountPath: '/dev/hugepages' }] } as Container;
  });
}

/**
 * withWorkerHostNamespaces (upstream `updateWorkerPodSpec`): an Agent shares the node's network
 * and IPC namespaces (`hostNetwork`, `hostIPC`) and resolves cluster names from there
 * (`dnsPolicy: ClusterFirstWithHostNet`). Pure.
 */
export function withWorkerHostNamespaces(podSpec: Readonly<PodSpec>): PodSpec {
  return { ...podSpec, hostNetwork: true, hostIPC: true, dnsPolicy: 'ClusterFirstWithHostNet' };
}

/**
 * withLpuNodeTolerations (upstream `ensureLPUNodeTolerations`): the Agent tolerates the LPU node
 * taints {@link LPU_NODE_TAINT_KEYS} (`operator: Exists`), each appended unless an equal
 * toleration is there. Pure.
 */
export function withLpuNodeTolerations(podSpec: Readonly<PodSpec>): PodSpec {
  const tolerations = [...((podSpec['tolerations'] ?? []) as Record<string, unknown>[])];
  for (const key of LPU_NODE_TAINT_KEYS) {
    const isPresent = tolerations.some((t) => t['key'] === key && t['operator'] === 'Exists' && t['value'] === undefined && t['effect'] === undefined && t['tolerationSeconds'] === undefined);
    if (!isPresent) tolerations.push({ key, operator: 'Exists' });
  }
  return { ...podSpec, tolerations };
}

/**
 * withAgentRootIdentity (upstream `configureDirectHybridAgentRuntime`: "Keep volume permissions
 * and other Pod settings while forcing the Agent's root identity"): the pod security context
 * gets `runAsUser: 0`, `runAsGroup: 0`, `runAsNonRoot: false`; `fsGroup` and the rest stay. Pure.
 */
export function withAgentRootIdentity(podSpec: Readonly<PodSpec>): PodSpec {
  const authored = (podSpec['securityContext'] ?? {}) as Record<string, unknown>;
  return { ...podSpec, securityContext: { ...authored, runAsUser: 0, runAsGroup: 0, runAsNonRoot: false } };
}

/** The LPU RDMA port (upstream `lpuRDMAPort`). */
export const LPU_RDMA_PORT = 19877;
/** The Agent's readiness port (upstream `LPUReadinessPort`). */
export const LPU_READINESS_PORT = 19878;

/**
 * withDirectHybridAgentEnv (upstream `configureDirectHybridAgentRuntime`): the hybrid engine's
 * XT Agent gets the RDMA transport env unless authored: `GLUE_RDMA_PATH_MTU: "1024"`,
 * `NIC_NAME: mlx5_0`, `UCX_TLS: tcp`, `RDMA_PORT: "19877"`, `READINESS_PORT: "19878"`. Pure.
 */
export function withDirectHybridAgentEnv(container: Container): Container {
  return {
    ...container,
    env: withEnvDefaults(container.env, [
      { name: 'GLUE_RDMA_PATH_MTU', value: '1024' },
      { name: 'NIC_NAME', value: 'mlx5_0' },
      { name: 'UCX_TLS', value: 'tcp' },
      { name: 'RDMA_PORT', value: String(LPU_RDMA_PORT) },
      { name: 'READINESS_PORT', value: String(LPU_READINESS_PORT) },
    ]),
  };
}

/** What the Agent contract needs: the decoded build of the Agent's model (when known) and the workload's pipeline. */
export interface LpxAgentRuntimeInput {
  readonly build: LpxBuild | undefined;
  /** Undefined until the builds are decoded. */
  readonly pipeline: LpxPipeline | undefined;
}

/**
 * withSystemInit (upstream `configureNodeLocalAgentWorkerContainer`, XT): an LPU-only XT Agent
 * runs the LPU system initialization, `LPU_RUN_SYSTEM_INIT: "true"` (operator-owned). Pure.
 */
export function withSystemInit(container: Container): Container {
  return { ...container, env: withEnvDefaults((container.env ?? []).filter((e) => e.name !== 'LPU_RUN_SYSTEM_INIT'), [{ name: 'LPU_RUN_SYSTEM_INIT', value: 'true' }]) };
}

/** The extended resource of an HX (LP30) Agent's LPU devices (upstream `v3LPUResourceName`, `configureAgentScheduling`). */
export const HX_LPU_RESOURCE_NAME = 'nvidia.com/lpu';
/** The LPU devices an HX Agent pod requests and is limited to (upstream `configureAgentScheduling`: 16 for `BuildFamilyHX`). */
export const HX_LPU_DEVICES_PER_POD = 16;
/** The HX Agent's LP30 preparation init container (upstream `runtime_agent.go` `lp30InitContainerName`). */
export const LP30_INIT_CONTAINER_NAME = 'prepare-lp30';
/** What the LP30 init container runs, an image-owned executable (upstream `runtime_agent.go` `lp30InitPath`). */
export const LP30_INIT_COMMAND = '/bin/lp30-agent-v2-init';
/** The host device directories an HX Agent pod declares, as [volume, host path] (upstream `applyLPUHostDeviceVolumes`). */
const LPU_HOST_DEVICE_VOLUMES = [['host-dev', '/dev'], ['host-sys', '/sys']] as const;
/** The host device mounts in the order `addLPUHostDeviceVolumeMounts` sets them: `/sys`, then `/dev`. */
const LPU_HOST_DEVICE_MOUNTS = [{ name: 'host-sys', mountPath: '/sys' }, { name: 'host-dev', mountPath: '/dev' }] as const;
/** The LP30 worker env an HX Agent carries, operator-owned (upstream `runtime_agent.go` `lp30WorkerEnvironment`). */
export const LP30_WORKER_ENV: readonly EnvVar[] = [
  { name: 'BMC_SSH_ENABLED', value: 'false' },
  { name: 'GROQ_HAL_V2_BACKGROUND_METRICS', value: 'false' },
  { name: 'GROQ_PG613_PORT_CONFIG', value: 'EB3' },
  { name: 'GROQ_PG613_REQUIRE_ALTAIR_PCIE_GEN2', value: 'false' },
  { name: 'GROQ_PG613_SKIP_HOST_LINK_PROFILE', value: '0' },
  { name: 'GROQ_V2_FPGA_BUS_ADDRESS_ID_0', value: '0000:9a:00.0' },
  { name: 'GROQ_V2_FPGA_BUS_ADDRESS_ID_1', value: '0000:7e:00.0' },
  { name: 'GROQ_V2_HEALTH_CHECK_ON_OPEN', value: '0' },
  { name: 'GROQ_V2_RESET_ON_OPEN', value: '0' },
  { name: 'LPU_FPGA_AUTOMATIC_JTAG_RECOVERY', value: 'false' },
  { name: 'LPU_FPGA_RECONFIGURE_METHOD', value: 'cvp' },
  { name: 'REDFISH_BMC_ENABLED', value: 'false' },
];
/** The privileged root security context of an HX Agent and its init container (upstream `configureNodeLocalAgentWorkerContainer`, `addLP30InitContainer`). */
const LP30_SECURITY_CONTEXT = { privileged: true, runAsUser: 0, runAsGroup: 0, runAsNonRoot: false } as const;

/** Whether a resource name is an LPU device resource (upstream `stripLPUResourceList`: `lpu.nvidia.com/*` or `nvidia.com/lpu`). */
function isLpuResourceName(name: string): boolean {
  return name.startsWith('lpu.nvidia.com/') || name === HX_LPU_RESOURCE_NAME;
}

function withoutLpuResources(list: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(list).filter(([name]) => !isLpuResourceName(name)));
}

/**
 * withHxAgentDevices (upstream `configureAgentScheduling` with `stripLPUResources`, fixture
 * node-local-v3-hx-lpu-only.yaml: limits and requests `nvidia.com/lpu: "16"`, the authored
 * `lpu.nvidia.com/devices` gone): every authored LPU resource (`lpu.nvidia.com/*`,
 * `nvidia.com/lpu`) is dropped from the limits and requests, and both get
 * `nvidia.com/lpu: 16`; other resources and `claims` are kept. Pure.
 */
export function withHxAgentDevices(container: Container): Container {
  const authored = (container.resources ?? {}) as Resources;
  const devices = { [HX_LPU_RESOURCE_NAME]: String(HX_LPU_DEVICES_PER_POD) };
  const resources: Resources = {
    ...authored,
    limits: sortKeys({ ...withoutLpuResources(authored.limits ?? {}), ...devices }),
    requests: sortKeys({ ...withoutLpuResources(authored.requests ?? {}), ...devices }),
  };
  return { ...container, resources } as Container;
}

/**
 * withoutLpuDeviceResources (upstream `stripLPUResources` over the init containers): an init
 * container keeps no LPU device resource; only the Agent's `main` holds the devices. Pure.
 */
export function withoutLpuDeviceResources(container: Container): Container {
  const authored = container.resources as Resources | undefined;
  if (authored === undefined) return container;
  const resources: Resources = {
    ...authored,
    ...(authored.limits === undefined ? {} : { limits: withoutLpuResources(authored.limits) }),
    ...(authored.requests === undefined ? {} : { requests: withoutLpuResources(authored.requests) }),
  };
  return { ...container, resources } as Container;
}

/**
 * withLp30WorkerContainer (upstream `configureNodeLocalAgentWorkerContainer`, HX branch): the HX
 * Agent container runs privileged as root (`privileged`, `runAsUser: 0`, `runAsGroup: 0`,
 * `runAsNonRoot: false`, replacing the authored security context) with the operator-owned
 * {@link LP30_WORKER_ENV} (an authored value of those names is replaced; the env stays in name
 * order). Pure.
 */
export function withLp30WorkerContainer(container: Container): Container {
  const owned = new Set(LP30_WORKER_ENV.map((e) => e.name));
  const env = withEnvDefaults((container.env ?? []).filter((e) => !owned.has(e.name)), LP30_WORKER_ENV);
  return { ...container, env, securityContext: { ...LP30_SECURITY_CONTEXT } } as Container;
}

/**
 * lpuSshProbe (upstream `lpu_commands.go` `lpuSSHProbe`): the Agent is ready when its SSH server
 * (Nova's MPI target, port {@link MPI_RUN_SSH_PORT} 2222) accepts TCP: initial delay 10 s,
 * period 5 s, timeout 1 s, failure threshold 3, success threshold 1. Pure.
 */
export function lpuSshProbe(): Record<string, unknown> {
  return { failureThreshold: 3, initialDelaySeconds: 10, periodSeconds: 5, successThreshold: 1, tcpSocket: { port: MPI_RUN_SSH_PORT }, timeoutSeconds: 1 };
}

/**
 * withLp30Probes (upstream `configureNodeLocalAgentWorkerContainer`, HX branch: "Remove health
 * and lifecycle behavior owned by the source image process"): the HX Agent's liveness and
 * startup probes and its lifecycle hooks are dropped and its readiness probe is
 * {@link lpuSshProbe} (fixture node-local-v3-hx-lpu-only.yaml). Pure.
 */
export function withLp30Probes(container: Container): Container {
  const out: Container = { ...container, readinessProbe: lpuSshProbe() };
  for (const owned of ['livenessProbe', 'startupProbe', 'lifecycle']) delete out[owned];
  return out;
}

/**
 * withLpuHostDeviceMounts (upstream `addLPUHostDeviceVolumeMounts`): the container mounts
 * `host-sys` at `/sys` and `host-dev` at `/dev`; a mount of the same name or mount path is
 * replaced in place, otherwise the mount is appended. Pure.
 */
export function withLpuHostDeviceMounts(container: Container): Container {
  let mounts = [...((container.volumeMounts ?? []) as Record<string, unknown>[])];
  for (const mount of LPU_HOST_DEVICE_MOUNTS) {
    const at = mounts.findIndex((m) => m['name'] === mount.name || m['mountPath'] === mount.mountPath);
    mounts = at === -1 ? [...mounts, { ...mount }] : mounts.map((m, i) => (i === at ? { ...mount } : m));
  }
  return { ...container, volumeMounts: mounts } as Container;
}

/**
 * withLpuHostDeviceVolumes (upstream `applyLPUHostDeviceVolumes` with `replaceExisting` for HX,
 * `lpuHostDeviceVolume`): the pod declares `host-dev` and `host-sys` as `hostPath` volumes of
 * `/dev` and `/sys` (`type: Directory`); an authored volume of that name is replaced in place. Pure.
 */
export function withLpuHostDeviceVolumes(podSpec: Readonly<PodSpec>): PodSpec {
  let volumes = [...(podSpec.volumes ?? [])];
  for (const [name, path] of LPU_HOST_DEVICE_VOLUMES) {
    const volume = { name, hostPath: { path, type: 'Directory' } };
    const at = volumes.findIndex((v) => v['name'] === name);
    volumes = at === -1 ? [...volumes, volume] : volumes.map((v, i) => (i === at ? volume : v));
  }
  return { ...podSpec, volumes };
}

/**
 * lp30InitContainer (upstream `addLP30InitContainer`): the `prepare-lp30` init container runs
 * {@link LP30_INIT_COMMAND} from the Agent's image (and its `imagePullPolicy`, when set) as
 * privileged root, with `NODE_NAME` from the downward API (`spec.nodeName`) and the host
 * device mounts ({@link withLpuHostDeviceMounts}). In: the Agent container. Pure.
 */
export function lp30InitContainer(agent: Container): Container {
  const pullPolicy = (agent as Record<string, unknown>)['imagePullPolicy'];
  return withLpuHostDeviceMounts({
    name: LP30_INIT_CONTAINER_NAME,
    ...(agent.image === undefined ? {} : { image: agent.image }),
    ...(pullPolicy === undefined ? {} : { imagePullPolicy: pullPolicy }),
    command: [LP30_INIT_COMMAND],
    env: [{ name: 'NODE_NAME', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }],
    securityContext: { ...LP30_SECURITY_CONTEXT },
  } as Container);
}

/**
 * withLp30InitContainer (upstream `addLP30InitContainer` with `setContainerByName`,
 * `stripLPUResources`): the pod's `prepare-lp30` init container is {@link lp30InitContainer} of
 * its `main` container, replacing an authored one of that name in place, else appended after
 * the authored init containers, which lose their LPU device resources. Pure.
 */
export function withLp30InitContainer(podSpec: Readonly<PodSpec>): PodSpec {
  const agent = (podSpec.containers ?? []).find((c) => c.name === MAIN_CONTAINER_NAME);
  const authored = ((podSpec['initContainers'] ?? []) as Container[]).map(withoutLpuDeviceResources);
  if (agent === undefined) return { ...podSpec, initContainers: authored };
  const init = lp30InitContainer(agent);
  const at = authored.findIndex((c) => c.name === LP30_INIT_CONTAINER_NAME);
  return { ...podSpec, initContainers: at === -1 ? [...authored, init] : authored.map((c, i) => (i === at ? init : c)) };
}

/**
 * applyLpxHxAgentRuntime (upstream `configureNodeLocalAgentRuntime` for `BuildFamilyHX`, with
 * `configureAgentScheduling`; fixture node-local-v3-hx-lpu-only.yaml): the HX (LP30) Agent's
 * `main` gets the LP30 worker container ({@link withLp30WorkerContainer}), the SSH readiness
 * probe and no liveness/startup probe or lifecycle ({@link withLp30Probes}), `nvidia.com/lpu: 16`
 * ({@link withHxAgentDevices}) and the host device mounts; the pod the `host-dev`/`host-sys`
 * volumes, the `prepare-lp30` init container ({@link withLp30InitContainer}) and the host
 * namespaces. None of the XT worker base (no cpu or huge pages, no added tolerations, as in
 * the fixture). Applied only with a decoded HX build. In: the Agent pod spec after POD_IP.
 * Not rendered here: upstream's generated HX startup (`/bin/bash -c` of its worker script; the
 * newest code refuses an authored command), `tty`/`stdin` and the `/tmp` emptyDir; the
 * authored command and args are kept, as in the fixture. Pure.
 */
export function applyLpxHxAgentRuntime(podSpec: Readonly<PodSpec>): PodSpec {
  const spec = mapContainer(podSpec, MAIN_CONTAINER_NAME, (c) => withLpuHostDeviceMounts(withHxAgentDevices(withLp30Probes(withLp30WorkerContainer(c)))));
  return withWorkerHostNamespaces(withLp30InitContainer(withLpuHostDeviceVolumes(spec)));
}

/**
 * withHybridHostDevices (upstream `configureDirectHybridAgentRuntime`: `addLPUHostDeviceVolumeMounts`,
 * `applyLPUHostDeviceVolumes(podSpec, false)`; fixture node-local-v3-hx-hybrid.yaml): a hybrid
 * engine's HX Agent mounts `host-sys` at `/sys` and `host-dev` at `/dev`
 * ({@link withLpuHostDeviceMounts}), and the pod declares those `hostPath` volumes unless the
 * template already has volumes of those names. Pure.
 */
export function withHybridHostDevices(podSpec: Readonly<PodSpec>): PodSpec {
  const authored = new Set((podSpec.volumes ?? []).map((v) => v['name']));
  const declared = withLpuHostDeviceVolumes(podSpec).volumes ?? [];
  const volumes = [...(podSpec.volumes ?? []), ...declared.filter((v) => !authored.has(v['name']))];
  return mapContainer({ ...podSpec, volumes }, MAIN_CONTAINER_NAME, withLpuHostDeviceMounts);
}

/**
 * applyLpxAgentRuntime: the Agent pod contract, in upstream's order: POD_IP; for a hybrid
 * engine's direct Agent runtime the operator-owned `LPX_MODEL_PATH` (a decoded build's
 * runtime path, {@link lpxBuildRuntimePath}; `configureDirectHybridAgentRuntime`, the Agent's authored `GAS_DIR: $(LPX_MODEL_PATH)`;
 * an LPU-only engine's model path goes to the Nova conductor, {@link applyLpxNovaConductorRuntime});
 * host namespaces. Then the XT worker base (upstream applies it to XT only; also without a
 * decoded build, the family being unknown): for an LPU-only Agent `LPU_RUN_SYSTEM_INIT`, for a
 * hybrid one the RDMA env ({@link withDirectHybridAgentEnv});
 * resources (LPU chips per pod with a decoded build, else the authored devices); privileged
 * root; the huge-pages mount; the LPU node tolerations; for the hybrid runtime the pod's root
 * identity. With a decoded HX build an LPU-only Agent gets the LP30 contract instead of the XT
 * worker base ({@link applyLpxHxAgentRuntime}); a hybrid one keeps the above with
 * `nvidia.com/lpu: 16` for its devices and the host device mounts ({@link withHybridHostDevices}). The caller then binds the runtime ConfigMap (it addresses `main`) and renames `main` to
 * `agent` ({@link withAgentContainerName}).
 * In: the rendered Agent pod spec (after `buildPodSpec`). Out: a new pod spec. The authored
 * command, args, probes and other env are kept (upstream keeps a custom startup and its probes).
 * Not rendered here: the `ETCD_ENDPOINTS`/`NATS_SERVER` of upstream's test configuration. Pure.
 */
export function applyLpxAgentRuntime(podSpec: Readonly<PodSpec>, input: LpxAgentRuntimeInput): PodSpec {
  const isHybrid = input.pipeline === 'hybrid';
  const withIp = mapContainer(podSpec, MAIN_CONTAINER_NAME, (c) => {
    const container = withPodIpEnv(c);
    const runtimePath = input.build === undefined || !isHybrid ? undefined : lpxBuildRuntimePath(input.build, modelStorageMountPath(c));
    return runtimePath === undefined ? container : withLeadingEnv(container, 'LPX_MODEL_PATH', runtimePath);
  });
  const isHx = input.build !== undefined && input.build.family !== 'xt8888';
  if (isHx && !isHybrid) return applyLpxHxAgentRuntime(withIp);
  const chips = input.build === undefined ? undefined : isHx ? HX_LPU_DEVICES_PER_POD : lpxAgentChipsPerPod(input.build);
  const isLpuOnly = input.pipeline !== undefined && !isHybrid;
  const withRuntimeEnv = (c: Container) => (isLpuOnly ? withSystemInit(c) : isHybrid ? withDirectHybridAgentEnv(c) : c);
  const withDevices = (c: Container) => withAgentResources(withRuntimeEnv(c), chips, isHx ? HX_LPU_RESOURCE_NAME : LPU_RESOURCE_NAME);
  let spec = mapContainer(withIp, MAIN_CONTAINER_NAME, (c) => withPrivilegedRoot(withDevices(c)));
  spec = withHugepagesMount(spec);
  if (isHx) spec = withHybridHostDevices(spec);
  spec = withLpuNodeTolerations(withWorkerHostNamespaces(spec));
  return isHybrid ? withAgentRootIdentity(spec) : spec;
}

/** The Nova conductor's runtime container name (upstream `updateLPUConductorContainer`). */
export const LPX_CONDUCTOR_CONTAINER_NAME = 'conductor';
/** Where Nova finds the Agents (upstream fixture node-local-v2-lpu-only.yaml; the Grove env of the conductor pod). */
export const NOVA_NODE_NAME_TEMPLATE = '${GROVE_PCSG_NAME}-${GROVE_PCSG_INDEX}-{rack}-{node}.${GROVE_HEADLESS_SERVICE}';

/** What the Nova conductor contract needs: the pipeline, and per model (in workload order) its decoded build and Agent clique. */
export interface LpxNovaConductorInput {
  readonly pipeline: LpxPipeline;
  readonly models: readonly { readonly build: LpxBuild | undefined; readonly agentClique: string }[];
}

/**
 * withConductorContainerName (upstream `updateLPUConductorContainer`: `container.Name =
 * "conductor"`): the LPU-only conductor's `main` is renamed `conductor`. Called last. Pure.
 */
export function withConductorContainerName(podSpec: Readonly<PodSpec>): PodSpec {
  return mapContainer(podSpec, MAIN_CONTAINER_NAME, (c) => ({ ...c, name: LPX_CONDUCTOR_CONTAINER_NAME }));
}

/**
 * novaModelEnv (upstream fixtures node-local-v2-lpu-only.yaml, node-local-v2-specdecode.yaml):
 * the Nova conductor's env defaults naming the models and their partition tables: one model
 * `NOVA_MODEL_PATH: $(LPX_MODEL_PATH)` and `NOVA_RESOLVED_PARTITIONS_DIR: /configs`; a shared
 * pair `NOVA_PIPELINE_TYPE: SpecDecode`, `NOVA_DRAFT_MODEL_PATH: $(LPX_DRAFT_MODEL_PATH)`,
 * `NOVA_TARGET_MODEL_PATH: $(LPX_TARGET_MODEL_PATH)` and `NOVA_DRAFT_RESOLVED_PARTITIONS_DIR`,
 * `NOVA_TARGET_RESOLVED_PARTITIONS_DIR` (`/configs`); both `NOVA_NODE_NAME_TEMPLATE`. Pure.
 */
export function novaModelEnv(pipeline: LpxPipeline): EnvVar[] {
  const names = { name: 'NOVA_NODE_NAME_TEMPLATE', value: NOVA_NODE_NAME_TEMPLATE };
  if (pipeline !== 'specDecode') return [names, { name: 'NOVA_MODEL_PATH', value: '$(LPX_MODEL_PATH)' }, { name: 'NOVA_RESOLVED_PARTITIONS_DIR', value: '/configs' }];
  return [
    names,
    { name: 'NOVA_PIPELINE_TYPE', value: 'SpecDecode' },
    { name: 'NOVA_DRAFT_MODEL_PATH', value: '$(LPX_DRAFT_MODEL_PATH)' },
    { name: 'NOVA_TARGET_MODEL_PATH', value: '$(LPX_TARGET_MODEL_PATH)' },
    { name: 'NOVA_DRAFT_RESOLVED_PARTITIONS_DIR', value: '/configs' },
    { name: 'NOVA_TARGET_RESOLVED_PARTITIONS_DIR', value: '/configs' },
  ];
}

/**
 * applyLpxNovaConductorRuntime (upstream `configureNodeLocalConductorRuntime`, `applyModelPaths`,
 * fixtures node-local-v2-lpu-only.yaml, node-local-v2-specdecode.yaml): the LPU-only (Nova)
 * conductor's `main` gets POD_IP (its args use `$(POD_IP)`) and {@link novaModelEnv} unless
 * authored; with every model's build decoded and at a runtime path ({@link lpxBuildRuntimePath}) the operator-owned values, first in the
 * env so authored `$(...)` references expand: the model paths (`LPX_MODEL_PATH` for one model;
 * `LPX_DRAFT_MODEL_PATH` of the first draft and `LPX_TARGET_MODEL_PATH` of the target for a
 * shared pair) and `LPX_ALLOCATION`, the Agent cliques joined by `:` (`agt`, `agt0:agt1:agt2`).
 * The caller binds the runtime ConfigMap, then renames `main` to `conductor`
 * ({@link withConductorContainerName}). Not rendered here: upstream's Nova command wrapper
 * (`wrapRuntimeStartup`) and generated launch arguments (the authored command and args are
 * kept, as in the fixtures) and `NOVA_MODEL_BASE_PATHS` (the model-storage mount, from operator
 * configuration). Pure.
 */
export function applyLpxNovaConductorRuntime(podSpec: Readonly<PodSpec>, input: LpxNovaConductorInput): PodSpec {
  const first = input.models[0];
  const last = input.models[input.models.length - 1];
  const paths: [string, LpxBuild | undefined][] = input.pipeline === 'specDecode' ? [['LPX_DRAFT_MODEL_PATH', first?.build], ['LPX_TARGET_MODEL_PATH', last?.build]] : [['LPX_MODEL_PATH', first?.build]];
  const allocation = input.models.map((m) => m.agentClique).join(':');
  return mapContainer(podSpec, MAIN_CONTAINER_NAME, (c) => {
    const resolved = paths.map(([name, build]) => [name, build === undefined ? undefined : lpxBuildRuntimePath(build, modelStorageMountPath(c))] as const);
    let out = withPodIpEnv(c);
    out = { ...out, env: withEnvDefaults(out.env, novaModelEnv(input.pipeline)) };
    if (resolved.some(([, path]) => path === undefined)) return out;
    out = withLeadingEnv(out, 'LPX_ALLOCATION', allocation);
    for (const [name, path] of [...resolved].reverse()) if (path !== undefined) out = withLeadingEnv(out, name, path);
    return out;
  });
}

/**
 * cyborgWorkerComponent (upstream fixture node-local-v2-hybrid.yaml: the Cyborg `main` carries
 * `DYN_COMPONENT: decode`, the worker ports `system` 9090 and `nixl` 19090, `DYN_SYSTEM_*`,
 * `DYN_HEALTH_CHECK_ENABLED: "false"`, the NIXL telemetry env and `DYN_FORWARDPASS_METRIC_PORT`):
 * a hybrid engine's GPU runtime is rendered with the ordinary decode-worker defaults, so the
 * component is seen as type `decode` by `buildPodSpec` (component-defaults.ts
 * `workerBaseContainer`; decode keeps the canary health check off). Labels keep type `lpx`. Pure.
 */
export function cyborgWorkerComponent(component: Component): Component {
  return { ...component, type: 'decode' };
}

/** What the Cyborg contract needs: the serving component's decoded build (when known) and the conductor replicas. */
export interface LpxCyborgRuntimeInput {
  readonly build: LpxBuild | undefined;
  readonly conductorReplicas: number;
}

/**
 * applyLpxCyborgRuntime (upstream `cyborg_runtime.go`, fixture node-local-v2-hybrid.yaml): on
 * the hybrid conductor's `main`, unless authored: `CYBORG_FPGA_GPI_REPLICA_INDEX` from the
 * Grove pod index label and `TOTAL_REPLICAS` (the conductor replicas); with a decoded build
 * also `CYBORG_BATCH_SIZE` (`deployment.program.batchSize`), `CYBORG_FPGA_GPI_IO_FPGA_COUNT`
 * (the I/O FPGA count), for XT `RDMA_PORT: "19877"` and, for batch size 1, `CYBORG_SWA_CACHE_IDS` from the pod index (larger
 * batches need upstream's command wrapper `wrapCyborgDecodeForSwaBatch`, not rendered here); and
 * the operator-owned `GBUILD_MANIFEST_PATH` (`<runtime path>/manifest.v2.capnp.bin`,
 * `applyCyborgManifestPath`; a decoded build's runtime path). The pod uses the
 * `default-scheduler`: it is a GPU pod. Not rendered here: `TOKENIZER_DIR`, whose ConfigMap key
 * our runtime ConfigMaps do not carry. Pure.
 */
export function applyLpxCyborgRuntime(podSpec: Readonly<PodSpec>, input: LpxCyborgRuntimeInput): PodSpec {
  const podIndex = { valueFrom: { fieldRef: { fieldPath: GROVE_POD_INDEX_FIELD_PATH } } };
  const defaults: EnvVar[] = [
    { name: 'CYBORG_FPGA_GPI_REPLICA_INDEX', ...podIndex },
    { name: 'TOTAL_REPLICAS', value: String(input.conductorReplicas) },
  ];
  const build = input.build;
  if (build !== undefined) {
    defaults.push({ name: 'CYBORG_BATCH_SIZE', value: String(build.batchSize) }, { name: 'CYBORG_FPGA_GPI_IO_FPGA_COUNT', value: String(build.ioFpgaCount) });
    if (build.family === 'xt8888') defaults.push({ name: 'RDMA_PORT', value: String(LPU_RDMA_PORT) });
    if (build.batchSize === 1) defaults.push({ name: 'CYBORG_SWA_CACHE_IDS', ...podIndex });
  }
  const spec = mapContainer(podSpec, MAIN_CONTAINER_NAME, (c) => {
    const env = withEnvDefaults(c.env, defaults);
    const runtimePath = build === undefined ? undefined : lpxBuildRuntimePath(build, modelStorageMountPath(c));
    if (runtimePath === undefined) return { ...c, env };
    const manifest: EnvVar = { name: 'GBUILD_MANIFEST_PATH', value: `${runtimePath}/${GBUILD_MANIFEST_V2_FILE}` };
    return { ...c, env: withEnvDefaults(env.filter((e) => e.name !== manifest.name), [manifest]) };
  });
  return { ...spec, schedulerName: CYBORG_SCHEDULER_NAME };
}

/**
 * withoutSynthesizedConfigVolume: `buildPodSpec` gives every main-container mount without a
 * volume a PVC of the same name (the ordinary DGD rule); for an LPX pod whose `config` mount is
 * bound to the generated runtime ConfigMap (runtime-configmaps.ts `bindRuntimeConfig`, upstream
 * `withLPUConfigVolume`), that PVC must not stand in for it. The `config` volume is dropped
 * unless the authored template declares it. In: the rendered pod spec, the authored template
 * spec. Pure.
 */
export function withoutSynthesizedConfigVolume(podSpec: Readonly<PodSpec>, authored: Readonly<Record<string, unknown>> | undefined, volumeName: string): PodSpec {
  const isAuthored = ((authored?.['volumes'] ?? []) as Record<string, unknown>[]).some((v) => v['name'] === volumeName);
  if (isAuthored) return { ...podSpec };
  return { ...podSpec, volumes: (podSpec.volumes ?? []).filter((v) => v['name'] !== volumeName) };
}
