/**
 * The LPX runtime ConfigMaps: per workload the immutable LPU partition table its Agents (and an
 * LPU-only conductor) mount at `/configs`, and for an XT hybrid build the Cyborg's `lpu_servers`;
 * each named from its content hash, owned by the LPXGraphDeployment, and the cliques that mount
 * it stamped with that hash.
 *
 * Source: upstream `internal/dynamo/lpx/lpu_configmap.go` @274172b2 (`renderRuntimeConfigMap`,
 * `LPUConfigMapName`, `LPUConfigMapHash`, `resolvedPartitionData`, `withLPUConfigVolume`),
 * `render.go` @274172b2 (`RenderNodeLocal`: which cliques mount which map, the
 * `nvidia.com/extra-resources-hash` annotation), `renderCyborgConfigMap` (the `lpu_servers`
 * list), `internal/controller_common/resource.go` (`GetSpecHash`: sha256 of the sorted-key JSON
 * of a spec-less object's content fields), `internal/controller/lpx/render.go`
 * (`stampDeploymentIdentity`: the identity labels and annotations) and `controller.go`
 * (`reconcileRuntimeResources`, `deleteUnusedConfigMaps`); the expected outputs
 * `testdata/from_dgd_yaml/node-local-v2-{hybrid,lpu-only,specdecode}.yaml` and
 * `node-local-v3-hx-hybrid.yaml` @274172b2; ../shared/upstream-notes/lpx.md §2.3 ("The LPXGD
 * owns ... the runtime ConfigMaps"; `lpx.nvidia.com/deployment-uid` "a label on ConfigMaps"),
 * §5.3 steps 12 and 19.
 *
 * The partitions rendered are upstream's configured build (derive.ts `lpxRuntimePartitions`):
 * the decoded build's partitions less those `lpx.localPartitions` moves to the Cyborg GPU; for an
 * XT LPU-only runtime only its selected prop-sync chain, without a standalone CPU embedding
 * partition; for an XT hybrid runtime each selected prop-sync chain collapsed into one runtime
 * partition of its root that keeps the sum of its members' Agent endpoints.
 * @module
 */
import { createHash } from 'node:crypto';
import {
  ANNOTATION_LPX_DEPLOYMENT_NAME,
  ANNOTATION_LPX_EXTRA_RESOURCES_HASH,
  ANNOTATION_LPX_RUNTIME_DGD_UID,
  LABEL_LPX_DEPLOYMENT_UID,
  LPXGD_API_VERSION,
  LPXGD_KIND,
  LPX_CONFIG_MOUNT_PATH,
  LPX_CONFIG_VOLUME_NAME,
  LPX_MAX_CONFIGMAP_DATA_BYTES,
  MAIN_CONTAINER_NAME,
  type PodCliqueTemplateSpec,
} from '../../api/index.js';
import type { RenderedObject } from '../dgd/render.js';
import type { LpxBuild, LpxBuildPartition } from './build.js';
import { effectiveNodeCount, lpxRuntimePartitions, selectLpxPipeline, type LpxPipeline } from './derive.js';
import { sortedKeysJson } from './input-revision.js';
import type { LpxIdentity } from './names.js';
import type { LpxWorkload } from './workloads.js';

/** One rendered runtime ConfigMap: its name, data and content hash (64 hex). */
export interface LpxRuntimeConfigMap {
  readonly name: string;
  readonly data: Readonly<Record<string, string>>;
  readonly hash: string;
}

/** A ConfigMap a clique mounts at `/configs`; `hash` is stamped as `nvidia.com/extra-resources-hash` when set. */
export interface LpxConfigBinding {
  readonly configMapName: string;
  readonly hash: string | undefined;
}

/** A workload's runtime ConfigMaps and what its cliques mount. */
export interface LpxWorkloadRuntimeConfig {
  readonly configMaps: readonly LpxRuntimeConfigMap[];
  readonly agents: LpxConfigBinding;
  /** The conductor's map; undefined: the conductor mounts none. */
  readonly conductor: LpxConfigBinding | undefined;
}

/** The runtime configuration of every workload whose builds are decoded, by scaling group. */
export type LpxRuntimeConfigs = ReadonlyMap<string, LpxWorkloadRuntimeConfig>;

/**
 * runtimeConfigMapHash (upstream `LPUConfigMapHash`): sha256 hex of the hex `GetSpecHash` of
 * the ConfigMap, which for a spec-less object is the sha256 of the sorted-key JSON of its content
 * fields, here `{"data": {...}, "immutable": true}` (Go's encoder, so `<`, `>`, `&`, U+2028 and
 * U+2029 escaped). In: the data. Out: 64 hex. Pure.
 */
export function runtimeConfigMapHash(data: Readonly<Record<string, string>>): string {
  const content = goJsonEscape(sortedKeysJson({ data, immutable: true }));
  const specHash = createHash('sha256').update(content).digest('hex');
  return createHash('sha256').update(specHash).digest('hex');
}

/** Go's `encoding/json` HTML-safe escapes, applied to JSON text (they occur only inside strings). */
function goJsonEscape(json: string): string {
  return json.replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * runtimeConfigMapName (upstream `renderRuntimeConfigMap`): `<prefix>-<first 16 hex of the
 * content hash>`, so a changed content gets a new name and an existing map is never updated.
 * The prefix is at most 31 (the LPX PodCliqueSet, names.ts) + 5 (`-lpx9`) + 7 (`-decode`)
 * characters, so the name stays far inside the 253-character DNS subdomain limit of ConfigMap
 * names. Pure.
 */
export function runtimeConfigMapName(prefix: string, hash: string): string {
  return `${prefix}-${hash.slice(0, 16)}`;
}

/**
 * The name root of a workload's ConfigMaps (upstream `MaterializationPlan.ResourcePrefix`): the
 * LPX PodCliqueSet's name; with several workloads, `-` and the workload's scaling group
 * (upstream scopes it by group, whose multi-workload names it does not record; ours follow the
 * scaling-group names of workloads.ts). Pure.
 */
export function lpxResourcePrefix(pcsName: string, workload: Pick<LpxWorkload, 'scalingGroup'>, workloadCount: number): string {
  return workloadCount > 1 ? `${pcsName}-${workload.scalingGroup}` : pcsName;
}

/** One model's runtime partitions (those left on LPUs), in build order. */
export interface LpxModelPartitions {
  readonly model: string;
  readonly build: Pick<LpxBuild, 'family'>;
  readonly partitions: readonly LpxBuildPartition[];
}

/**
 * resolvedPartitionData (upstream): the LPU runtime's partition table, one line per partition
 * of each model in model order, joined by newlines: `nodes_per_partition` (an XT partition's
 * scheduler endpoints, an HX one's extent[1]*extent[2]*extent[3]), `partition_ids` (the
 * compiler partition id), `partition_node_offsets` (the endpoints before it, from 0 per model;
 * a collapsed XT chain counts all its members' endpoints, upstream `effectiveNodeCount`),
 * `partition_paths`, `topologies` (the raw topology name) and, except for an XT `single`
 * workload whose runtime never reads them, `partition_indices` (the position in its model) and
 * `partition_models`. In: the models' builds, the pipeline. Out: the data keys. Pure.
 */
export function resolvedPartitionData(models: readonly LpxModelPartitions[], pipeline: LpxPipeline): Record<string, string> {
  const first = models[0];
  const hasModelColumns = first === undefined || first.build.family !== 'xt8888' || pipeline !== 'single';
  const columns: Record<string, string[]> = { nodes_per_partition: [], partition_ids: [], partition_node_offsets: [], partition_paths: [], topologies: [] };
  if (hasModelColumns) Object.assign(columns, { partition_indices: [], partition_models: [] });
  for (const { model, build, partitions } of models) {
    let offset = 0;
    partitions.forEach((partition, index) => {
      const extent = partition.hxExtent;
      const nodes = build.family === 'xt8888' || extent === undefined ? effectiveNodeCount(partition) : (extent[1] ?? 1) * (extent[2] ?? 1) * (extent[3] ?? 1);
      columns['nodes_per_partition']?.push(String(nodes));
      columns['partition_ids']?.push(String(partition.sourcePartitionId >>> 0));
      columns['partition_node_offsets']?.push(String(offset));
      columns['partition_paths']?.push(partition.partPath);
      columns['topologies']?.push(partition.topology.raw);
      columns['partition_indices']?.push(String(index));
      columns['partition_models']?.push(model);
      offset += nodes;
    });
  }
  return Object.fromEntries(Object.entries(columns).map(([key, lines]) => [key, lines.join('\n')]));
}

/**
 * cyborgServersData (upstream `renderCyborgConfigMap`): the XT hybrid Cyborg's Agent endpoints,
 * `lpu_servers` (empty when every partition is local): per remote partition `<scaling group>-${GROVE_PCSG_INDEX}-<Agent clique>-<offset>`
 * (the Agent pod at the partition's first endpoint, a collapsed chain counting all its members'
 * endpoints; Cyborg supplies the PodCliqueSet prefix and
 * startup the engine's Grove index), joined by newlines. Pure.
 */
export function cyborgServersData(partitions: readonly LpxBuildPartition[], scalingGroup: string, agentClique: string): Record<string, string> {
  const servers: string[] = [];
  let offset = 0;
  for (const partition of partitions) {
    servers.push(`${scalingGroup}-\${GROVE_PCSG_INDEX}-${agentClique}-${offset}`);
    offset += effectiveNodeCount(partition);
  }
  return { lpu_servers: servers.join('\n') };
}

/**
 * renderRuntimeConfigMap (upstream): the map named {@link runtimeConfigMapName} from
 * `<prefix>` and its content hash; refused when its values exceed 1 MiB of UTF-8 bytes (keys
 * not counted): "rendered LPX ConfigMap %q data is %d bytes; maximum is %d". Pure.
 */
export function renderRuntimeConfigMap(prefix: string, data: Record<string, string>): { readonly ok: true; readonly configMap: LpxRuntimeConfigMap } | { readonly ok: false; readonly error: string } {
  const hash = runtimeConfigMapHash(data);
  const name = runtimeConfigMapName(prefix, hash);
  const size = Object.values(data).reduce((sum, value) => sum + Buffer.byteLength(value, 'utf8'), 0);
  if (size > LPX_MAX_CONFIGMAP_DATA_BYTES) return { ok: false, error: `rendered LPX ConfigMap ${JSON.stringify(name)} data is ${size} bytes; maximum is ${LPX_MAX_CONFIGMAP_DATA_BYTES}` };
  return { ok: true, configMap: { name, data, hash } };
}

function hasAuthoredConfigMount(workload: LpxWorkload): boolean {
  const containers = (workload.conductorRole?.podTemplate?.spec?.['containers'] ?? []) as readonly { name?: string; volumeMounts?: readonly { name?: string }[] }[];
  return (containers.find((c) => c.name === MAIN_CONTAINER_NAME)?.volumeMounts ?? []).some((m) => m.name === LPX_CONFIG_VOLUME_NAME);
}

/**
 * renderLpxRuntimeConfigs: per workload whose every model's component has a decoded build (in
 * `builds`, by component name; a workload without one gets nothing, as before the decoder):
 * - the LPU map `<prefix>-lpu-<hash16>` ({@link resolvedPartitionData}), mounted by every Agent
 *   clique and stamped with its hash; an LPU-only (or shared-pair) conductor mounts it too;
 * - an XT hybrid build also gets the Cyborg map `<prefix>-decode-<hash16>`
 *   ({@link cyborgServersData}), mounted by the conductor (Cyborg) and stamped with its hash;
 * - an HX hybrid conductor mounts the LPU map only when its main container already mounts
 *   `config` (upstream: "Bind the authored HX Cyborg configuration mount"), unstamped.
 * In: the LPXGD's PodCliqueSet name, workloads, builds. Out: by scaling group, or the first
 * oversized map ("rendered LPX ConfigMap %q data is %d bytes; maximum is %d"). Pure.
 */
export function renderLpxRuntimeConfigs(
  pcsName: string,
  workloads: readonly LpxWorkload[],
  builds: ReadonlyMap<string, LpxBuild>,
): { readonly ok: true; readonly configs: LpxRuntimeConfigs } | { readonly ok: false; readonly error: string } {
  const configs = new Map<string, LpxWorkloadRuntimeConfig>();
  for (const workload of workloads) {
    const firstBuild = builds.get(workload.models[0]?.component.name ?? '');
    const agentClique = workload.models[0]?.agentClique;
    if (firstBuild === undefined || agentClique === undefined || workload.models.some((m) => !builds.has(m.component.name))) continue;
    const pipeline = selectLpxPipeline(workload.components.length, firstBuild);
    const decoded: LpxModelPartitions[] = [];
    for (const m of workload.models) {
      const build = builds.get(m.component.name) ?? firstBuild;
      const runtime = lpxRuntimePartitions(m.component, build, pipeline);
      if (!runtime.ok) return { ok: false, error: runtime.error };
      decoded.push({ model: m.model, build, partitions: runtime.value });
    }
    const first = { ...decoded[0], build: firstBuild, partitions: decoded[0]?.partitions ?? [] };
    const prefix = lpxResourcePrefix(pcsName, workload, workloads.length);
    const lpu = renderRuntimeConfigMap(`${prefix}-lpu`, resolvedPartitionData(decoded, pipeline));
    if (!lpu.ok) return lpu;
    const agents = { configMapName: lpu.configMap.name, hash: lpu.configMap.hash };
    if (pipeline !== 'hybrid') {
      configs.set(workload.scalingGroup, { configMaps: [lpu.configMap], agents, conductor: workload.conductorClique === undefined ? undefined : agents });
    } else if (first.build.family === 'xt8888') {
      const decode = renderRuntimeConfigMap(`${prefix}-decode`, cyborgServersData(first.partitions, workload.scalingGroup, agentClique));
      if (!decode.ok) return decode;
      configs.set(workload.scalingGroup, { configMaps: [decode.configMap, lpu.configMap], agents, conductor: { configMapName: decode.configMap.name, hash: decode.configMap.hash } });
    } else {
      configs.set(workload.scalingGroup, { configMaps: [lpu.configMap], agents, conductor: hasAuthoredConfigMount(workload) ? { configMapName: lpu.configMap.name, hash: undefined } : undefined });
    }
  }
  return { ok: true, configs };
}

/**
 * renderLpxRuntimeConfigMaps: the ConfigMap objects of {@link renderLpxRuntimeConfigs}, sorted by
 * name: `immutable: true`, the data, label `lpx.nvidia.com/deployment-uid`, annotations
 * `lpx.nvidia.com/deployment-name`, `lpx.nvidia.com/deployment-uid` and
 * `scheduling.lpu.nvidia.com/dgd-uid` (upstream `stampDeploymentIdentity`), and the LPXGD as
 * controller owner with `blockOwnerDeletion` (lpx.md §2.3: the LPXGD owns them, so they outlive a
 * PodCliqueSet replacement). In: the LPXGD identity, the owning DGD's uid. Pure.
 */
export function renderLpxRuntimeConfigMaps(id: LpxIdentity, dgdUid: string, configs: LpxRuntimeConfigs): RenderedObject[] {
  const maps = [...configs.values()].flatMap((c) => c.configMaps);
  return maps
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((configMap) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: configMap.name,
        namespace: id.namespace,
        labels: { [LABEL_LPX_DEPLOYMENT_UID]: id.uid },
        annotations: { [ANNOTATION_LPX_DEPLOYMENT_NAME]: id.name, [LABEL_LPX_DEPLOYMENT_UID]: id.uid, [ANNOTATION_LPX_RUNTIME_DGD_UID]: dgdUid },
        ownerReferences: [{ apiVersion: LPXGD_API_VERSION, kind: LPXGD_KIND, name: id.name, uid: id.uid, controller: true, blockOwnerDeletion: true }],
      },
      immutable: true,
      data: { ...configMap.data },
    }));
}

/** An observed ConfigMap: the fields the decisions read. */
export interface ObservedConfigMap {
  readonly metadata: { readonly name?: string; readonly resourceVersion?: string; readonly deletionTimestamp?: string; readonly ownerReferences?: readonly Readonly<Record<string, unknown>>[] };
}

function isControlledBy(configMap: ObservedConfigMap, lpxgdUid: string): boolean {
  return (configMap.metadata.ownerReferences ?? []).some((ref) => ref['controller'] === true && ref['uid'] === lpxgdUid);
}

/**
 * decideRuntimeConfigMapCreates (upstream `reconcileRuntimeResources`, lpx.md §5.3 step 12): the
 * desired maps not stored yet, to be created (an existing one is immutable, so never updated);
 * a stored map at a desired name that the LPXGD does not control is never adopted (lpx.md §2.3
 * "Foreign objects at the expected names are never adopted"): "ConfigMap %q is not controlled by
 * this LPXGraphDeployment". In: the desired objects, the observed maps by name, the LPXGD uid. Pure.
 */
export function decideRuntimeConfigMapCreates(
  desired: readonly RenderedObject[],
  observed: ReadonlyMap<string, ObservedConfigMap>,
  lpxgdUid: string,
): { readonly ok: true; readonly create: RenderedObject[] } | { readonly ok: false; readonly error: string } {
  for (const configMap of desired) {
    const stored = observed.get(configMap.metadata.name);
    if (stored !== undefined && !isControlledBy(stored, lpxgdUid)) return { ok: false, error: `ConfigMap ${JSON.stringify(configMap.metadata.name)} is not controlled by this LPXGraphDeployment` };
  }
  return { ok: true, create: desired.filter((c) => !observed.has(c.metadata.name)) };
}

/**
 * obsoleteRuntimeConfigMaps (upstream `deleteUnusedConfigMaps`, lpx.md §5.3 step 19): the
 * observed maps the LPXGD controls, not being deleted and not desired, with their
 * resourceVersion (the delete precondition), sorted by name. The caller deletes them only once
 * the LPXGD is Ready ("Old configmaps remain available until all workloads are Ready"). Pure.
 */
export function obsoleteRuntimeConfigMaps(desired: readonly RenderedObject[], observed: ReadonlyMap<string, ObservedConfigMap>, lpxgdUid: string): { name: string; resourceVersion: string | undefined }[] {
  const desiredNames = new Set(desired.map((c) => c.metadata.name));
  return [...observed.entries()]
    .filter(([name, c]) => isControlledBy(c, lpxgdUid) && c.metadata.deletionTimestamp === undefined && !desiredNames.has(name))
    .map(([name, c]) => ({ name, resourceVersion: c.metadata.resourceVersion }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

type Volume = Readonly<Record<string, unknown>> & { readonly name?: string };
type Mount = Readonly<Record<string, unknown>> & { readonly name?: string; readonly mountPath?: string };
type Container = Readonly<Record<string, unknown>> & { readonly name?: string; readonly volumeMounts?: readonly Mount[] };

/**
 * bindRuntimeConfig (upstream `withLPUConfigVolume`, XT form, and `render.go`): the clique with
 * volume `config` (the ConfigMap) unless its pod already declares a `config` volume, the main
 * container mounting it at `/configs` unless it already mounts that name or path (an authored
 * binding is kept), and, with a hash, `nvidia.com/extra-resources-hash`, so a new map rolls the
 * clique. Annotations stay sorted. Pure.
 */
export function bindRuntimeConfig(clique: PodCliqueTemplateSpec, binding: LpxConfigBinding | undefined): PodCliqueTemplateSpec {
  if (binding === undefined) return clique;
  const podSpec = clique.spec.podSpec as Readonly<Record<string, unknown>>;
  const volumes = (podSpec['volumes'] ?? []) as readonly Volume[];
  const containers = (podSpec['containers'] ?? []) as readonly Container[];
  const withVolume = volumes.some((v) => v.name === LPX_CONFIG_VOLUME_NAME) ? volumes : [...volumes, { name: LPX_CONFIG_VOLUME_NAME, configMap: { name: binding.configMapName } }];
  const withMount = containers.map((c) => {
    if (c.name !== MAIN_CONTAINER_NAME) return c;
    const mounts = c.volumeMounts ?? [];
    if (mounts.some((m) => m.name === LPX_CONFIG_VOLUME_NAME || m.mountPath === LPX_CONFIG_MOUNT_PATH)) return c;
    return { ...c, volumeMounts: [...mounts, { name: LPX_CONFIG_VOLUME_NAME, mountPath: LPX_CONFIG_MOUNT_PATH }] };
  });
  const annotations = binding.hash === undefined ? clique.annotations : Object.fromEntries(Object.entries({ ...(clique.annotations ?? {}), [ANNOTATION_LPX_EXTRA_RESOURCES_HASH]: binding.hash }).sort(([a], [b]) => (a < b ? -1 : 1)));
  return { ...clique, ...(annotations === undefined ? {} : { annotations }), spec: { ...clique.spec, podSpec: { ...podSpec, containers: withMount, volumes: withVolume } } };
}

/**
 * runtimeConfigVolumeIssue (upstream `withLPUConfigVolume` with `allowOverrides` false, the HX
 * form; upstream test `TestLPUConfigVolumeRejectsAuthoredSourceMismatch`): an HX workload's
 * Agent (or LPU-bound conductor) template declaring its own `config` volume, other than exactly
 * the generated ConfigMap, is refused: "selected LPX podTemplate volume %q is reserved for
 * ConfigMap %q". XT templates keep an authored volume (upstream allows overrides for XT), and an
 * authored `config` mount is kept in both. Out: the message, or undefined. Pure.
 */
export function runtimeConfigVolumeIssue(workload: LpxWorkload, build: Pick<LpxBuild, 'family'>, config: LpxWorkloadRuntimeConfig): string | undefined {
  if (build.family === 'xt8888') return undefined;
  const templates = [...workload.models.map((m) => ({ spec: m.agentRole?.podTemplate?.spec, binding: config.agents })), { spec: workload.conductorRole?.podTemplate?.spec, binding: config.conductor }];
  for (const { spec, binding } of templates) {
    // An HX hybrid conductor binds only its authored mount, with overrides allowed (render.go).
    if (binding === undefined || binding.hash === undefined || spec === undefined) continue;
    const authored = ((spec['volumes'] ?? []) as readonly Volume[]).filter((v) => v.name === LPX_CONFIG_VOLUME_NAME);
    const isExactlyOurs = (v: Volume) => Object.keys(v).length === 2 && sortedKeysJson(v['configMap']) === sortedKeysJson({ name: binding.configMapName });
    if (authored.length > 1 || authored.some((v) => !isExactlyOurs(v))) {
      return `selected LPX podTemplate volume ${JSON.stringify(LPX_CONFIG_VOLUME_NAME)} is reserved for ConfigMap ${JSON.stringify(binding.configMapName)}`;
    }
  }
  return undefined;
}
