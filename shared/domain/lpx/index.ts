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
/*
 * The compiler contracts' decoders (manifest-common, manifest-v2, deployment-v1, their capnp-es
 * schemas, build-contract) are not re-exported: they are imported from their modules, so a
 * function reaches them only where an LPX build is read (functions/reconcile/lpx-build.ts loads
 * build-contract.js on first use) and a bundle without LPX never evaluates capnp-es.
 */
export * from './model-download.js';
export * from './workloads.js';
export * from './derive.js';
export * from './materialization.js';
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
