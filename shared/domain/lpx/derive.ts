/**
 * What upstream derives from a compiled LPX build (the normalized {@link LpxBuild}) for one LPX
 * component: the runtime pipeline, the scheduler workload mode and target family, the partitions
 * left on LPUs after `lpx.localPartitions`, the Agent pods per engine replica, and the
 * LpuPipelineRequest's build-derived fields (partitions, prop-sync connectors, allocation
 * metadata), and the runtime partitions the LPU runtime ConfigMaps list (XT hybrid chains
 * collapsed; the scheduler always gets the physical partitions).
 *
 * Source: upstream `internal/dynamo/lpx/resolve_selected_workload.go` (`ResolveSelectedWorkload`,
 * `validateSelectedConductor`, the agent-count check), `model_projection.go`
 * (`appendModelProjections`, `RequestSpec`, `schedulerWorkloadMode`), the V2 (XT) projection
 * (`appendV2ModelProjections`, `xtShape`, `v2Connectors`), the V3 (HX) projection
 * (`appendV3ModelProjections`, `projectV3PropSync`), `selected_prop_sync.go`
 * (`validateSelectedPropSyncGraph`, `consumeRuntimeSelectedPropSyncChain`,
 * `collapseSelectedPropSyncChain`), `build.go` (`omitStandaloneEmbeddingPartition`,
 * `effectiveNodeCount`), `runtime_settings.go` (`resolveBuildSettings`, its only caller), the topology parser (`compatibleWith`),
 * `local_partitions.go` (`selectRemotePartitions`); ../shared/upstream-notes/lpx.md §1.1
 * (`localPartitions`, "Agent replicas are derived from the build (and localPartitions). An
 * explicit agent count must equal the derived count."), §3.1 (the request spec).
 * Every function here is pure.
 * @module
 */
import { formatIssue, LPX_ROLE_AGENT, LPX_ROLE_CONDUCTOR, LpxConfigSchema, type Component } from '../../api/index.js';
import type { LpxBuild, LpxBuildFamily, LpxBuildPartition } from './build.js';
import { parseTopology } from './topology.js';

/** Prefix of a runtime the supported LPX runtimes cannot materialize (upstream `ErrUnsupportedRuntime`). */
export const UNSUPPORTED_LPX_RUNTIME = 'unsupported LPX runtime';
/** Largest number of partitions in one component's build (upstream `maxLPXPartitions`). */
export const MAX_LPX_PARTITIONS = 256;
/** Logical HX devices a prop-sync connector links (upstream `v3HXLogicalDeviceCount`). */
const HX_LOGICAL_DEVICE_COUNT = 16;
/** Lane multiplicities an HX prop-sync connector accepts, in preference order (upstream `projectV3PropSync`). */
const HX_ACCEPTABLE_LANE_MULTIPLICITIES = [4, 2, 1] as const;

/**
 * The runtime shape of a workload (upstream `Pipeline`): one LPU-only model, a shared
 * speculative-decoding pair, or a hybrid engine whose conductor is the Cyborg GPU runtime.
 */
export type LpxPipeline = 'single' | 'specDecode' | 'hybrid';

/** The scheduler's workload mode (lpx.md §3.1 `workloadMode`). */
export type LpxWorkloadMode = 'v2LpuOnly' | 'v2StrictHybrid' | 'v3HxLpuOnly' | 'v3HxStrictHybrid';

/** One requested LPU partition (lpx.md §3.1 `partitions[]`). */
export interface LpxPartitionRequest {
  /** `partition-%03d` of its ordinal. */
  readonly id: string;
  readonly ordinal: number;
  /** The compiler partition id, as an unsigned 32-bit value. */
  readonly compilerPartitionId: number;
  /** HX only: the four-dimensional extent. */
  readonly extent?: readonly number[];
  /** XT only: the whole-node shape, `c8`..`c128`. */
  readonly xtShape?: string;
}

/** One prop-sync connector between two requested partitions (lpx.md §3.1 `propSyncConnectors[]`). */
export interface LpxPropSyncConnector {
  readonly fromPartitionId: string;
  readonly toPartitionId: string;
  readonly requirement: {
    readonly kind: 'xt8888Gap' | 'hxPropSyncV1';
    readonly maxInterPartitionOffset?: number;
    readonly connections?: readonly { readonly fromLogicalDevice: number; readonly toLogicalDevice: number }[];
    readonly acceptableLaneMultiplicities?: readonly number[];
  };
}

/** Everything derived from one component's build, shared by the component's models. */
export interface LpxModelDerivation {
  readonly pipeline: LpxPipeline;
  readonly targetFamily: LpxBuildFamily;
  readonly workloadMode: LpxWorkloadMode;
  /** Agent pods per engine replica: the scheduler endpoints of the partitions left on LPUs (0 when all are local). */
  readonly agentReplicas: number;
  /** The partitions requested from the scheduler, in build order. */
  readonly partitions: readonly LpxPartitionRequest[];
  readonly propSyncConnectors: readonly LpxPropSyncConnector[];
  /** The request's `allocationMetadata`: `{}` for XT, the V3 allocation envelope for HX. */
  readonly allocationMetadata: Readonly<Record<string, unknown>>;
  /** Compiler partition ids that run on the Cyborg GPU, sorted (`LPX_LOCAL_PARTITION_IDS`). */
  readonly localPartitionIds: readonly number[];
}

export type Derived<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: string };

const ok = <T>(value: T): Derived<T> => ({ ok: true, value });
const fail = <T>(error: string): Derived<T> => ({ ok: false, error });

/** `partition-%03d` (upstream `RequestSpec`). */
function partitionId(ordinal: number): string {
  return `partition-${String(ordinal).padStart(3, '0')}`;
}

/** A compiler partition id as Go's `uint32(id)` prints it. */
function uint32(id: number): number {
  return id >>> 0;
}

/**
 * selectLpxPipeline (upstream `ResolveSelectedWorkload`): a workload of two components (a shared
 * draft/target pair) is `specDecode`; a single component is `hybrid` when its build was compiled
 * for LPX (`compilationMode: lpx`), else `single`.
 * In: the workload's component count and the first component's build. Pure.
 */
export function selectLpxPipeline(componentCount: number, build: Pick<LpxBuild, 'compilationMode'>): LpxPipeline {
  if (componentCount === 2) return 'specDecode';
  return build.compilationMode === 'lpx' ? 'hybrid' : 'single';
}

/**
 * lpxWorkloadMode (upstream `schedulerWorkloadMode`): HX and XT have separate wire values for the
 * same two runtime shapes, strict hybrid (a Cyborg conductor) or LPU only. Pure.
 */
export function lpxWorkloadMode(family: LpxBuildFamily, pipeline: LpxPipeline): LpxWorkloadMode {
  if (family === 'hx16x8x2x3') return pipeline === 'hybrid' ? 'v3HxStrictHybrid' : 'v3HxLpuOnly';
  return pipeline === 'hybrid' ? 'v2StrictHybrid' : 'v2LpuOnly';
}

/**
 * validateSelectedConductor (upstream `validateSelectedConductor`, a build-dependent role rule):
 * an LPU-only serving conductor is a singleton ("unsupported LPX runtime: component %q conductor
 * replicas must be one for LPU-only execution"), even when the engine replica count is larger.
 * The hybrid conductor's GPU check is cyborg-gpu.ts `validateHybridConductorDevices`.
 * In: the component, whether it is the workload's serving component, the pipeline. Out: the
 * error text, or undefined. Pure.
 */
export function validateSelectedConductor(component: Pick<Component, 'name' | 'roles'>, isServing: boolean, pipeline: LpxPipeline): string | undefined {
  if (pipeline === 'hybrid' || !isServing) return undefined;
  const conductor = (component.roles ?? []).find((r) => r.name === LPX_ROLE_CONDUCTOR);
  if (conductor !== undefined && (conductor.replicas ?? 1) !== 1) {
    return `${UNSUPPORTED_LPX_RUNTIME}: component ${JSON.stringify(component.name)} conductor replicas must be one for LPU-only execution`;
  }
  return undefined;
}

/**
 * validateHybridPair (upstream `validateSelectedConductor`): a hybrid-compiled build cannot back
 * a shared speculative pair ("unsupported LPX runtime: the shared speculative runtime requires
 * LPU-only builds"). In: the pipeline and one component's build. Pure.
 */
export function validateHybridPair(pipeline: LpxPipeline, build: Pick<LpxBuild, 'compilationMode'>): string | undefined {
  return pipeline === 'specDecode' && build.compilationMode === 'lpx' ? `${UNSUPPORTED_LPX_RUNTIME}: the shared speculative runtime requires LPU-only builds` : undefined;
}

/**
 * consumeRuntimeSelectedPropSyncChain (upstream, same name): an LPU-only XT runtime runs exactly
 * the one selected prop-sync chain, so its partitions are that chain's members, which must be
 * contiguous ids present in build order. Errors (chain printed `[a,b]`): "LPU-only runtime
 * requires exactly one selected prop-sync chain, got %d", "LPU-only selected prop-sync chain %s, "LPU-only selected prop-sync chain %s
 * contains duplicate partition id %d", "... is not contiguous at partition id %d", "...
 * references missing partition id %d". No chain: the partitions unchanged. Pure.
 */
export function consumeRuntimeSelectedPropSyncChain(partitions: readonly LpxBuildPartition[], chains: readonly (readonly number[])[]): Derived<readonly LpxBuildPartition[]> {
  if (chains.length === 0) return ok(partitions);
  if (chains.length !== 1) return fail(`LPU-only runtime requires exactly one selected prop-sync chain, got ${chains.length}`);
  const chain = chains[0] ?? [];
  const root = chain[0] ?? 0;
  const shown = `[${chain.join(',')}]`;
  const first = partitions.findIndex((p) => p.sourcePartitionId >= root);
  const start = first === -1 ? partitions.length : first;
  for (let member = 0; member < chain.length; member += 1) {
    const id = chain[member] ?? 0;
    // Upstream compares unsigned: an id below the root is caught by the contiguity check instead.
    if (id >= root && id - root < member) return fail(`LPU-only selected prop-sync chain ${shown} contains duplicate partition id ${id}`);
    if (member > 0 && id !== (chain[member - 1] ?? 0) + 1) return fail(`LPU-only selected prop-sync chain ${shown} is not contiguous at partition id ${id}`);
    if (partitions[start + member]?.sourcePartitionId !== id) return fail(`LPU-only selected prop-sync chain ${shown} references missing partition id ${id}`);
  }
  return ok(partitions.slice(start, start + chain.length));
}

/**
 * omitStandaloneEmbeddingPartition (upstream `build.go`): host-only token embeddings (a
 * standalone embedding partition that may run on the CPU) are not placed on LPUs: when the build
 * says both and partition 0 leads a build of more than one partition, it is dropped. Pure.
 */
export function omitStandaloneEmbeddingPartition(build: Pick<LpxBuild, 'supportsCpuEmbeddings' | 'standaloneTokenEmbeddings'>, partitions: readonly LpxBuildPartition[]): readonly LpxBuildPartition[] {
  if (!build.supportsCpuEmbeddings || !build.standaloneTokenEmbeddings) return partitions;
  return partitions.length > 1 && partitions[0]?.sourcePartitionId === 0 ? partitions.slice(1) : partitions;
}

/** `lpx.localPartitions` of a component (design D: `all: true` or `ids`), or undefined. Pure. */
export function localPartitionSelection(component: Pick<Component, 'lpx'>): { readonly all: boolean; readonly ids: readonly number[] } | undefined {
  const selection = LpxConfigSchema.safeParse(component.lpx ?? {}).data?.localPartitions;
  if (selection === undefined) return undefined;
  return { all: selection.all === true, ids: selection.ids ?? [] };
}

/**
 * selectRemotePartitions (upstream `local_partitions.go`): splits a hybrid build's partitions
 * into those that stay on LPUs and the sorted compiler ids that run on the Cyborg GPU. A selected
 * prop-sync chain is one runtime partition owned by its first member. No selection keeps every
 * partition on LPUs. Errors: a non-hybrid pipeline, "unsupported LPX runtime: localPartitions
 * requires a hybrid build with a Cyborg conductor"; "localPartitions references partition %d,
 * which the build does not contain"; "localPartitions references partition %d of the prop-sync
 * chain that starts at partition %d; select %d". Pure.
 */
export function selectRemotePartitions(
  selection: { readonly all: boolean; readonly ids: readonly number[] } | undefined,
  pipeline: LpxPipeline,
  partitions: readonly LpxBuildPartition[],
  chains: readonly (readonly number[])[],
): Derived<{ readonly remote: readonly LpxBuildPartition[]; readonly localIds: readonly number[] }> {
  if (selection === undefined) return ok({ remote: partitions, localIds: [] });
  if (pipeline !== 'hybrid') return fail(`${UNSUPPORTED_LPX_RUNTIME}: localPartitions requires a hybrid build with a Cyborg conductor`);
  const owner = new Map(partitions.map((p) => [p.sourcePartitionId, p.sourcePartitionId]));
  for (const chain of chains) for (const member of chain) owner.set(member, chain[0] ?? member);
  const local = new Set<number>();
  if (selection.all) for (const id of owner.values()) local.add(id);
  for (const id of selection.ids) {
    const root = owner.get(id);
    if (root === undefined) return fail(`localPartitions references partition ${id}, which the build does not contain`);
    if (root !== id) return fail(`localPartitions references partition ${id} of the prop-sync chain that starts at partition ${root}; select ${root}`);
    local.add(id);
  }
  const remote = partitions.filter((p) => !local.has(owner.get(p.sourcePartitionId) ?? p.sourcePartitionId));
  return ok({ remote, localIds: [...local].sort((a, b) => a - b) });
}

/**
 * xtShape (upstream V2 projection): the whole-node XT8888 reservation of a partition and its
 * scheduler endpoints (Agent pods). Fewer than 8 chips reserve one host (`c8`, 1); otherwise a
 * multiple of 8 up to 64, or 96 or 128, is `c<chips>` with chips/8 endpoints. Error: "chip count
 * %d is not a registered XT8888 partition shape". Pure.
 */
export function xtShape(chipCount: number): Derived<{ readonly shape: string; readonly endpoints: number }> {
  if (chipCount > 0 && chipCount < 8) return ok({ shape: 'c8', endpoints: 1 });
  if (chipCount < 8 || chipCount % 8 !== 0 || (chipCount > 64 && chipCount !== 96 && chipCount !== 128)) {
    return fail(`chip count ${chipCount} is not a registered XT8888 partition shape`);
  }
  return ok({ shape: `c${chipCount}`, endpoints: chipCount / 8 });
}

/**
 * xtTopologyCompatibilityKey (upstream topology parser `compatibilityKey`): the raw topology
 * without its chip count, so partitions of one prop-sync chain may differ only in size; a legacy
 * name (no `__`) has an empty key. The parse is the manifest decoder's (./topology.ts). Pure.
 */
export function xtTopologyCompatibilityKey(raw: string): string {
  const parsed = parseTopology(raw);
  return parsed.ok ? (parsed.topology.compatibilityKey ?? '') : '';
}

/**
 * validateSelectedPropSyncGraph (upstream `selected_prop_sync.go`): every chain member exists
 * ("%s %d references missing partition ID %d"), chains are disjoint ("%s %d overlaps partition
 * ID %d"), optionally share the root's topology ("%s %d has incompatible topology at partition ID
 * %d") and are forward-adjacent in build order ("%s %d is not forward-adjacent at partition ID
 * %d"). Out: the build position of each edge's source, in chain order. Pure.
 */
export function validateSelectedPropSyncGraph(
  partitions: readonly LpxBuildPartition[],
  chains: readonly (readonly number[])[],
  subject: string,
  requireCompatibleTopology: boolean,
): Derived<readonly number[]> {
  const positions = new Map(partitions.map((p, i) => [p.sourcePartitionId, i]));
  for (const [chainIndex, chain] of chains.entries()) {
    for (const id of chain) if (!positions.has(id)) return fail(`${subject} ${chainIndex} references missing partition ID ${id}`);
  }
  const edges: number[] = [];
  for (const [chainIndex, chain] of chains.entries()) {
    const rootPosition = positions.get(chain[0] ?? -1) ?? 0;
    let previous = rootPosition;
    for (const [member, id] of chain.entries()) {
      const position = positions.get(id);
      if (position === undefined) return fail(`${subject} ${chainIndex} overlaps partition ID ${id}`);
      positions.delete(id);
      const rootRaw = partitions[rootPosition]?.topology.raw ?? '';
      if (requireCompatibleTopology && xtTopologyCompatibilityKey(rootRaw) !== xtTopologyCompatibilityKey(partitions[position]?.topology.raw ?? '')) {
        return fail(`${subject} ${chainIndex} has incompatible topology at partition ID ${id}`);
      }
      if (member === 0) continue;
      if (position !== previous + 1) return fail(`${subject} ${chainIndex} is not forward-adjacent at partition ID ${id}`);
      edges.push(previous);
      previous = position;
    }
  }
  return ok(edges);
}

/**
 * xtPropSyncConnectors (upstream `v2Connectors`): one `xt8888Gap` connector (offset 0) per
 * selected chain edge whose both ends stay requested, between their request ids, in build order.
 * No selected chain: none. In: the whole build (its chains are validated, topology-compatible)
 * and the requested partitions. Pure.
 */
export function xtPropSyncConnectors(build: Pick<LpxBuild, 'partitions' | 'selectedPropSyncChains'>, requested: readonly LpxBuildPartition[]): Derived<readonly LpxPropSyncConnector[]> {
  if (build.selectedPropSyncChains.length === 0) return ok([]);
  const edges = validateSelectedPropSyncGraph(build.partitions, build.selectedPropSyncChains, 'selected prop-sync chain', true);
  if (!edges.ok) return edges;
  const ordinal = new Map(requested.map((p, i) => [p.sourcePartitionId, i]));
  const connectors: LpxPropSyncConnector[] = [];
  for (const position of [...edges.value].sort((a, b) => a - b)) {
    const from = ordinal.get(build.partitions[position]?.sourcePartitionId ?? -1);
    const to = ordinal.get(build.partitions[position + 1]?.sourcePartitionId ?? -1);
    if (from === undefined || to === undefined) continue;
    connectors.push({ fromPartitionId: partitionId(from), toPartitionId: partitionId(to), requirement: { kind: 'xt8888Gap', maxInterPartitionOffset: 0 } });
  }
  return ok(connectors);
}

/** Scheduler endpoints of an HX partition: the product of extent dimensions 1..3 (upstream V3 projection). */
function hxEndpoints(partition: LpxBuildPartition): number {
  const extent = partition.hxExtent;
  return extent === undefined ? partition.topology.nodeCount : (extent[1] ?? 1) * (extent[2] ?? 1) * (extent[3] ?? 1);
}

/**
 * hxPropSync (upstream `projectV3PropSync`): validates the selected chains (subject "selected V3
 * prop-sync chain", topology not compared); an LPU-only HX workload needs one complete adjacent
 * chain ("V3 LPU-only workloads require a complete adjacent prop-sync connector chain"). Out:
 * the allocation metadata `{arch: lp30, topology: lyra, metadata_version: 1, partition_info:
 * {num_partitions, <compiler id>: {device: lpu, allocation: extent}}, prop_sync_info: {version:
 * 1, prop_sync_pairs}}` and one `hxPropSyncV1` connector per edge linking the source's last 16
 * logical devices to the destination's first 16, lane multiplicities [4, 2, 1]. Pure.
 */
export function hxPropSync(partitions: readonly LpxBuildPartition[], chains: readonly (readonly number[])[], pipeline: LpxPipeline): Derived<{ readonly allocationMetadata: Record<string, unknown>; readonly connectors: readonly LpxPropSyncConnector[] }> {
  const edges = validateSelectedPropSyncGraph(partitions, chains, 'selected V3 prop-sync chain', false);
  if (!edges.ok) return edges;
  if (pipeline !== 'hybrid' && edges.value.length !== partitions.length - 1) return fail('V3 LPU-only workloads require a complete adjacent prop-sync connector chain');
  const partitionInfo: Record<string, unknown> = { num_partitions: partitions.length };
  for (const p of partitions) partitionInfo[String(uint32(p.sourcePartitionId))] = { device: 'lpu', allocation: p.hxExtent === undefined ? null : [...p.hxExtent] };
  const pairs: Record<string, unknown>[] = [];
  const connectors: LpxPropSyncConnector[] = [];
  for (const from of edges.value) {
    const source = partitions[from];
    const destination = partitions[from + 1];
    if (source === undefined || destination === undefined) continue;
    const offset = (source.hxExtent?.[0] ?? 0) * hxEndpoints(source) - HX_LOGICAL_DEVICE_COUNT;
    const links = Array.from({ length: HX_LOGICAL_DEVICE_COUNT }, (_, device) => ({ fromLogicalDevice: offset + device, toLogicalDevice: device }));
    pairs.push({
      source_partition: source.sourcePartitionId,
      dest_partition: destination.sourcePartitionId,
      connections: links.map((l) => [l.fromLogicalDevice, l.toLogicalDevice]),
      num_supported_lanes: [...HX_ACCEPTABLE_LANE_MULTIPLICITIES],
    });
    connectors.push({ fromPartitionId: partitionId(from), toPartitionId: partitionId(from + 1), requirement: { kind: 'hxPropSyncV1', connections: links, acceptableLaneMultiplicities: [...HX_ACCEPTABLE_LANE_MULTIPLICITIES] } });
  }
  const allocationMetadata = { arch: 'lp30', topology: 'lyra', metadata_version: 1, partition_info: partitionInfo, prop_sync_info: { version: 1, prop_sync_pairs: pairs } };
  return ok({ allocationMetadata, connectors });
}

/** The request partitions of the requested build partitions (upstream `RequestSpec`): XT with its shape, HX with its extent. */
function partitionRequests(family: LpxBuildFamily, requested: readonly LpxBuildPartition[]): LpxPartitionRequest[] {
  return requested.map((p, ordinal) => {
    const shape = family === 'xt8888' ? xtShape(p.topology.chipCount) : undefined;
    return {
      id: partitionId(ordinal),
      ordinal,
      compilerPartitionId: uint32(p.sourcePartitionId),
      ...(p.hxExtent === undefined ? {} : { extent: [...p.hxExtent] }),
      ...(shape?.ok === true ? { xtShape: shape.value.shape } : {}),
    };
  });
}

/**
 * xtScheduledPartitions (upstream `appendV2ModelProjections`, first steps): an LPU-only runtime
 * first keeps only its selected prop-sync chain ("resolving configured V2 build: ...", upstream
 * `resolveBuildSettings` -> `consumeRuntimeSelectedPropSyncChain`) and drops a host-only
 * embedding partition ({@link omitStandaloneEmbeddingPartition}; a hybrid runtime keeps it, as
 * upstream calls it only for the Single and SpecDecode pipelines); then local partitions are
 * removed. Out: the physical partitions the scheduler places, the chains left, the local ids. Pure.
 */
function xtScheduledPartitions(build: LpxBuild, pipeline: LpxPipeline, selection: ReturnType<typeof localPartitionSelection>): Derived<{ readonly remote: readonly LpxBuildPartition[]; readonly chains: readonly (readonly number[])[]; readonly localIds: readonly number[] }> {
  let partitions: readonly LpxBuildPartition[] = build.partitions;
  let chains = build.selectedPropSyncChains;
  if (pipeline !== 'hybrid') {
    const consumed = consumeRuntimeSelectedPropSyncChain(partitions, chains);
    if (!consumed.ok) return fail(`resolving configured V2 build: ${consumed.error}`);
    partitions = omitStandaloneEmbeddingPartition(build, consumed.value);
    chains = [];
  }
  const split = selectRemotePartitions(selection, pipeline, partitions, chains);
  if (!split.ok) return split;
  return ok({ remote: split.value.remote, chains, localIds: split.value.localIds });
}

/**
 * deriveXtComponent (upstream `appendV2ModelProjections`): the scheduled partitions
 * ({@link xtScheduledPartitions}); each needs an XT shape ("V2 compiler partition %d: ...") and
 * its endpoints add up to the Agent count; connectors follow the build's selected chains.
 * Allocation metadata is `{}`. Chains are collapsed only in the runtime view
 * ({@link lpxRuntimePartitions}), never here. Pure.
 */
function deriveXtComponent(build: LpxBuild, pipeline: LpxPipeline, selection: ReturnType<typeof localPartitionSelection>): Derived<Omit<LpxModelDerivation, 'targetFamily' | 'workloadMode' | 'pipeline'>> {
  const split = xtScheduledPartitions(build, pipeline, selection);
  if (!split.ok) return split;
  let agentReplicas = 0;
  for (const p of split.value.remote) {
    const shape = xtShape(p.topology.chipCount);
    if (!shape.ok) return fail(`V2 compiler partition ${uint32(p.sourcePartitionId)}: ${shape.error}`);
    agentReplicas += shape.value.endpoints;
  }
  const connectors = xtPropSyncConnectors(build, split.value.remote);
  if (!connectors.ok) return connectors;
  return ok({ agentReplicas, partitions: partitionRequests('xt8888', split.value.remote), propSyncConnectors: connectors.value, allocationMetadata: {}, localPartitionIds: split.value.localIds });
}

/**
 * effectiveNodeCount (upstream `BuildPartition.effectiveNodeCount`): the Agent endpoints of a
 * partition: "collapsed runtime partitions preserve the sum of their physical scheduler
 * endpoints", a decoded one has its topology's node count. Pure.
 */
export function effectiveNodeCount(partition: Pick<LpxBuildPartition, 'topology' | 'runtimeNodeCount'>): number {
  return partition.runtimeNodeCount !== undefined && partition.runtimeNodeCount > 0 ? partition.runtimeNodeCount : partition.topology.nodeCount;
}

/**
 * collapseSelectedPropSyncChain (upstream `selected_prop_sync.go`, "projects validated nonempty
 * contiguous physical partitions onto their runtime root"): one runtime partition with the
 * root's id, path and topology (upstream TestProjectModelV2PreservesAgentReplicasWhenCollapsingSubHostPartitions:
 * "Keep both physical Agent endpoints and the original root topology") and, as
 * `runtimeNodeCount`, the sum of the members' Agent endpoints ({@link effectiveNodeCount}).
 * In: the chain's members in build order (nonempty). Pure.
 */
export function collapseSelectedPropSyncChain(members: readonly [LpxBuildPartition, ...LpxBuildPartition[]]): LpxBuildPartition {
  const [root] = members;
  const runtimeNodeCount = members.reduce((sum, p) => sum + effectiveNodeCount(p), 0);
  return { sourcePartitionId: root.sourcePartitionId, partPath: root.partPath, topology: root.topology, hxExtent: root.hxExtent, runtimeNodeCount };
}

/**
 * collapseRuntimePropSyncChains (upstream `appendV2ModelProjections`: "Preserve physical
 * scheduler partitions while collapsing selected chains only in LPU runtime state"): each
 * selected chain whose root is among the partitions becomes one runtime partition
 * ({@link collapseSelectedPropSyncChain}); other partitions are kept, in build order. In: the
 * scheduled partitions (validated chains are forward-adjacent and a local selection moves a chain
 * whole, so a chain's members follow its root) and the build's chains. Pure.
 */
export function collapseRuntimePropSyncChains(partitions: readonly LpxBuildPartition[], chains: readonly (readonly number[])[]): LpxBuildPartition[] {
  const chainLengthByRoot = new Map(chains.map((chain) => [chain[0] ?? -1, chain.length]));
  const collapsed: LpxBuildPartition[] = [];
  for (let index = 0; index < partitions.length; ) {
    const root = partitions[index];
    if (root === undefined) break;
    const length = chainLengthByRoot.get(root.sourcePartitionId) ?? 1;
    collapsed.push(length === 1 ? root : collapseSelectedPropSyncChain([root, ...partitions.slice(index + 1, index + length)]));
    index += length;
  }
  return collapsed;
}

/**
 * lpxRuntimePartitions (upstream `ModelProjection.configuredBuild.Partitions`, which
 * `resolvedPartitionData` and `renderCyborgConfigMap` read): the partitions the LPU runtime is
 * configured with. XT: the scheduled partitions ({@link xtScheduledPartitions}: an LPU-only
 * runtime's one chain without a host-only embedding partition, local partitions removed), with
 * a hybrid runtime's selected chains collapsed ({@link collapseRuntimePropSyncChains}). HX: the
 * partitions left after local ones are removed (upstream collapses only V2). Errors: those of
 * the steps, unwrapped (the derivation reports them first, wrapped). In: the component's
 * `lpx.localPartitions`, its build, the pipeline. Pure.
 */
export function lpxRuntimePartitions(component: Pick<Component, 'lpx'>, build: LpxBuild, pipeline: LpxPipeline): Derived<readonly LpxBuildPartition[]> {
  const selection = localPartitionSelection(component);
  if (build.family !== 'xt8888') {
    const split = selectRemotePartitions(selection, pipeline, build.partitions, build.selectedPropSyncChains);
    return split.ok ? ok(split.value.remote) : split;
  }
  const scheduled = xtScheduledPartitions(build, pipeline, selection);
  if (!scheduled.ok) return scheduled;
  return ok(pipeline === 'hybrid' ? collapseRuntimePropSyncChains(scheduled.value.remote, scheduled.value.chains) : scheduled.value.remote);
}

/**
 * deriveHxComponent (upstream `appendV3ModelProjections`, newest: TestProjectModelV3LocalPartitions):
 * local partitions are removed first (a selected chain moves as a whole); every remaining
 * partition is requested with its extent; the Agent count is the sum of their endpoints; the
 * allocation metadata and connectors come from {@link hxPropSync} over the remaining partitions
 * and the chains they still hold, so connectors are rebased onto their ordinals. Pure.
 */
function deriveHxComponent(build: LpxBuild, pipeline: LpxPipeline, selection: ReturnType<typeof localPartitionSelection>): Derived<Omit<LpxModelDerivation, 'targetFamily' | 'workloadMode' | 'pipeline'>> {
  const split = selectRemotePartitions(selection, pipeline, build.partitions, build.selectedPropSyncChains);
  if (!split.ok) return split;
  const remote = split.value.remote;
  const remoteIds = new Set(remote.map((p) => p.sourcePartitionId));
  const chains = build.selectedPropSyncChains.filter((chain) => chain.every((id) => remoteIds.has(id)));
  const propSync = hxPropSync(remote, chains, pipeline);
  if (!propSync.ok) return propSync;
  const agentReplicas = remote.reduce((sum, p) => sum + hxEndpoints(p), 0);
  return ok({ agentReplicas, partitions: partitionRequests('hx16x8x2x3', remote), propSyncConnectors: propSync.value.connectors, allocationMetadata: propSync.value.allocationMetadata, localPartitionIds: split.value.localIds });
}

/**
 * deriveLpxComponent (upstream `appendModelProjections`): the family's projection, then the
 * partition bound "LPX projection has %d partitions, limit is 1..256" (with local partitions the
 * whole build is bounded, and none may remain on LPUs). Errors are returned as upstream's
 * `ResolveSelectedWorkload` wraps them: "project LPX model %q from build %q: <error>".
 * In: the component (its `lpx.localPartitions`), its build and `lpx.buildId`, the pipeline, the
 * component's first model name. Pure.
 */
export function deriveLpxComponent(component: Pick<Component, 'lpx'>, build: LpxBuild, buildId: string, pipeline: LpxPipeline, firstModel: string): Derived<LpxModelDerivation> {
  const selection = localPartitionSelection(component);
  const projected = build.family === 'xt8888' ? deriveXtComponent(build, pipeline, selection) : deriveHxComponent(build, pipeline, selection);
  const wrap = (error: string) => `project LPX model ${JSON.stringify(firstModel)} from build ${JSON.stringify(buildId)}: ${error}`;
  if (!projected.ok) return fail(wrap(projected.error));
  const bounded = projected.value.localPartitionIds.length > 0 ? build.partitions.length : projected.value.partitions.length;
  if ((projected.value.localPartitionIds.length === 0 && bounded < 1) || bounded > MAX_LPX_PARTITIONS) {
    return fail(wrap(`LPX projection has ${bounded} partitions, limit is 1..${MAX_LPX_PARTITIONS}`));
  }
  return ok({ ...projected.value, pipeline, targetFamily: build.family, workloadMode: lpxWorkloadMode(build.family, pipeline) });
}

/**
 * validateAgentReplicas (upstream `ResolveSelectedWorkload`: "Component geometry fixes the Agent
 * count"; lpx.md §1.1 "An explicit agent count must equal the derived count"): an explicit
 * `replicas` on the component's agent role must equal the compiled count. The error names the
 * field: `spec.components[i].roles[j].replicas: Invalid value: N: component %q agent replicas %d
 * must match the compiled count %d` (upstream's text after the path).
 * In: the component and its index in `spec.components`, the derived count. Pure.
 */
export function validateAgentReplicas(component: Pick<Component, 'name' | 'roles'>, componentIndex: number, derived: number): string | undefined {
  const roleIndex = (component.roles ?? []).findIndex((r) => r.name === LPX_ROLE_AGENT);
  const explicit = component.roles?.[roleIndex]?.replicas;
  if (explicit === undefined || explicit === derived) return undefined;
  return formatIssue({
    path: `spec.components[${componentIndex}].roles[${roleIndex}].replicas`,
    type: 'Invalid',
    value: explicit,
    detail: `component ${JSON.stringify(component.name)} agent replicas ${explicit} must match the compiled count ${derived}`,
  });
}

/** `LPX_LOCAL_PARTITION_IDS` (upstream `localPartitionIDsEnv`). */
export const LPX_LOCAL_PARTITION_IDS_ENV = 'LPX_LOCAL_PARTITION_IDS';

interface EnvVar {
  readonly name: string;
  readonly value?: string;
  readonly valueFrom?: unknown;
}

/**
 * applyLocalPartitionIds (upstream `applyLocalPartitionIDs`): the operator owns
 * `LPX_LOCAL_PARTITION_IDS` on the Cyborg `main` container: any authored value is removed; with
 * local partitions it is set to their comma-separated ids; without, it is set empty only when the
 * container has `envFrom` sources that could otherwise supply one (Cyborg reads empty as none).
 * In: the container's env and envFrom, the ids. Out: the new env list. Pure.
 */
export function applyLocalPartitionIds(env: readonly EnvVar[], hasEnvFrom: boolean, ids: readonly number[]): EnvVar[] {
  const kept = env.filter((e) => e.name !== LPX_LOCAL_PARTITION_IDS_ENV);
  if (ids.length === 0) return hasEnvFrom ? [...kept, { name: LPX_LOCAL_PARTITION_IDS_ENV }] : kept;
  return [...kept, { name: LPX_LOCAL_PARTITION_IDS_ENV, value: ids.join(',') }];
}
