/**
 * The LPX decisions: workloads, names, input revision, the LPX PodCliqueSet, pipeline requests,
 * readiness and its merge into the DGD, scheduling deadlines, the model registry, the build snapshot
 * and its decoded compiler manifest.
 * @module
 */
export * from './model-registry.js';
export * from './build.js';
export * from './build-snapshot.js';
export * from './topology.js';
/** The rules both compiler contracts share (the helpers `ok`/`fail`/`read` stay module-local). */
export {
  HX_TOPOLOGY_FAMILY,
  buildCompilationMode,
  buildHXPartition,
  buildXTPartition,
  classifyManifestPartitions,
  cleanManifestRelativeBuildPath,
  isSupportedHxExtent,
  positiveManifestUInt32,
  validateManifestBatchSize,
  validateManifestPartitionNodeCount,
  validateRuntimeEmbeddingsAsset,
  validateSelectedLPUPartitions,
  type PartitionNodeCounts,
} from './manifest-common.js';
export * from './manifest-v2.js';
/** The capnp-es schema classes of `manifest.v2.capnp.bin` (encoders in tests write real manifests with them). */
export * as gbuildManifestV2 from './manifest-v2-schema.js';
export * from './deployment-v1.js';
/** The capnp-es schema classes of `deployment.v1.capnp.bin` (encoders in tests write real deployments with them). */
export * as gbuildDeploymentV1 from './deployment-v1-schema.js';
export * from './build-contract.js';
export * from './model-download.js';
export * from './workloads.js';
export * from './derive.js';
export * from './names.js';
export * from './input-revision.js';
export * from './render-pcs.js';
export * from './runtime-configmaps.js';
export * from './pipeline-requests.js';
export * from './readiness.js';
export * from './handoff.js';
export * from './deadline.js';
export * from './decide.js';
export * from './dgd-part.js';
