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
 * `applyLPUWorkerContainerBase`), `runtime_agent.go` (`configureDirectHybridAgentRuntime`,
 * `configureNodeLocalAgentRuntime`, `configureNodeLocalAgentWorkerContainer`,
 * `configureNodeLocalConductorRuntime`, `setNodeLocalPodIPEnv`), `conductor_runtime.go`
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
 * chips. HX Agents are left undefined: their per-pod device count is not in the fixtures
 * covered here, so no LPU resource is set for them. Pure.
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
 * `lpu.nvidia.com/lpu: <chips>` plus the above (the fixture drops the authored
 * `lpu.nvidia.com/devices`); without, the authored limits and requests are kept under them.
 * `claims` are kept. Pure.
 */
export function withAgentResources(container: Container, chipsPerPod: number | undefined): Container {
  const authored = (container.resources ?? {}) as Resources;
  const cpuLimit = authored.limits?.['cpu'];
  const cpu = cpuLimit !== undefined && cpuQuantity(cpuLimit) < LPX_AGENT_CPUS ? cpuLimit : String(LPX_AGENT_CPUS);
  const devices = chipsPerPod === undefined ? undefined : { [LPU_RESOURCE_NAME]: String(chipsPerPod) };
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
 * identity. An HX Agent's LP30 contract (upstream's `/bin/quasar-entrypoint`, the
 * `prepare-lp30` init container, the LP30 env and its `nvidia.com/lpu` devices) is not rendered
 * here. The caller then binds the runtime ConfigMap (it addresses `main`) and renames `main` to
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
  if (input.build !== undefined && input.build.family !== 'xt8888') return withWorkerHostNamespaces(withIp);
  const chips = input.build === undefined ? undefined : lpxAgentChipsPerPod(input.build);
  const isLpuOnly = input.pipeline !== undefined && !isHybrid;
  const withRuntimeEnv = (c: Container) => (isLpuOnly ? withSystemInit(c) : isHybrid ? withDirectHybridAgentEnv(c) : c);
  let spec = mapContainer(withIp, MAIN_CONTAINER_NAME, (c) => withPrivilegedRoot(withAgentResources(withRuntimeEnv(c), chips)));
  spec = withHugepagesMount(spec);
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
