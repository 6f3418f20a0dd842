/**
 * The normalized LPX build: the source-independent view of one compiled LPU build, as upstream's
 * registry produces it from either compiler contract (the version 2 Cap'n Proto manifest
 * `manifest.v2.capnp.bin`, or the split `deployment.v1.capnp.bin`) before deployment code derives
 * placement, replica counts and runtime overrides.
 *
 * Source: upstream `internal/dynamo/lpx/build.go` (`Build`, `BuildPartition`,
 * `BuildCompilationMode`, `BuildFamily`, `lpuChipsPerNode`), `model_manifest_v2.go`
 * (`buildFromGbuildManifestV2`) and `model_manifest_common.go` (`classifyManifestPartitions`,
 * `buildXTPartition`, `buildHXPartition`). The decoders that fill this shape live in
 * `manifest-v2.ts` and `deployment-v1.ts`; the rules that read it (Agent counts, local partitions, workload modes,
 * pipeline-request partitions, runtime ConfigMaps) live in their own modules.
 * @module
 */

/** LPU devices (chips) per XT node (upstream `lpuChipsPerNode`). */
export const LPU_CHIPS_PER_NODE = 8;

/** The compiler-authored execution mode (upstream `BuildCompilationMode`): `lpuOnly`, or `lpx` (hybrid; the manifest's historical value). */
export type LpxBuildCompilationMode = 'lpuOnly' | 'lpx';

/** The physical LPU target family (upstream `BuildFamily`): XT8888 or HX16x8x2x3. */
export type LpxBuildFamily = 'xt8888' | 'hx16x8x2x3';

/** A partition's scheduler-facing node shape (upstream `Topology`). */
export interface LpxTopology {
  /** The compiler's topology name, trimmed (XT: a parsed name such as `URSA_V2__Q8__16C__...`; HX: opaque). */
  readonly raw: string;
  /** LPU chips of the partition (> 0). */
  readonly chipCount: number;
  /**
   * Scheduler endpoints (Agent pods) the partition occupies (upstream `Topology.Replicas()`;
   * for HX the product of extent dimensions 1..3, see `classifyManifestPartitions`).
   */
  readonly nodeCount: number;
  /**
   * XT `__` names only: the name without its chip count (upstream `Topology.compatibilityKey`;
   * partitions whose keys are equal may share a prop-sync chain). Added by the manifest decoder.
   */
  readonly compatibilityKey?: string;
}

/** One normalized physical compiler partition (upstream `BuildPartition`). */
export interface LpxBuildPartition {
  /** The compiler partition id used in artifacts and prop-sync chains (not a slice index). */
  readonly sourcePartitionId: number;
  /** The nonempty, cleaned relative gas-dir fragment under the build payload. */
  readonly partPath: string;
  readonly topology: LpxTopology;
  /** HX only: the four-dimensional allocation `[16, 1..8, 1|2, 1|2]`; undefined for XT. */
  readonly hxExtent: readonly number[] | undefined;
  /**
   * A collapsed runtime partition only (upstream `runtimeNodeCount`, set by
   * `collapseSelectedPropSyncChain` in derive.ts): the Agent endpoints of all its physical members,
   * since sub-host members still occupy one endpoint each. Absent on a decoded partition.
   */
  readonly runtimeNodeCount?: number;
}

/** The normalized build (upstream `Build`). Partitions of an XT build are sorted by source id. */
export interface LpxBuild {
  /** The absolute `file://` or `gs://` reference of the build payload. */
  readonly path: string;
  readonly family: LpxBuildFamily;
  readonly compilationMode: LpxBuildCompilationMode;
  /** The LPU partitions only (CUDA/CPU partitions of a hybrid build are not listed). */
  readonly partitions: readonly LpxBuildPartition[];
  /** Source partition ids grouped into selected prop-sync chains (each >= 2 ids), in manifest order. */
  readonly selectedPropSyncChains: readonly (readonly number[])[];
  /** Token embeddings occupy a standalone partition. */
  readonly standaloneTokenEmbeddings: boolean;
  /** Standalone token embeddings may run on the CPU. */
  readonly supportsCpuEmbeddings: boolean;
  /** I/O FPGA endpoints (>= 1). */
  readonly ioFpgaCount: number;
  /** Clients per I/O FPGA transaction (>= 1). */
  readonly ioFanoutFactor: number;
  /** `deployment.program.batchSize` (>= 1). */
  readonly batchSize: number;
  /** `artifacts.runtimeAssets.tokenEmbeddingsPath`, cleaned; undefined when absent. */
  readonly tokenEmbeddingsPath: string | undefined;
}
