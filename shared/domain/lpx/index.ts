/**
 * The LPX decisions: workloads, names, input revision, the LPX PodCliqueSet, pipeline requests,
 * readiness and its merge into the DGD, scheduling deadlines, the model registry and the build snapshot.
 * @module
 */
export * from './model-registry.js';
export * from './build.js';
export * from './build-snapshot.js';
export * from './model-download.js';
export * from './workloads.js';
export * from './derive.js';
export * from './names.js';
export * from './input-revision.js';
export * from './render-pcs.js';
export * from './pipeline-requests.js';
export * from './readiness.js';
export * from './handoff.js';
export * from './deadline.js';
export * from './decide.js';
export * from './dgd-part.js';
