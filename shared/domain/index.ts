/**
 * Public entry of `shared/domain`: pure decisions, one folder per family (`dgd/`: the DGD and
 * DGDSA; `dgdr/`, `v1beta2/`, `lpx/`, `admission/`), and what they share (ownership, status writes).
 * @module
 */
export * from './dgd/names.js';
export * from './dgd/availability.js';
export * from './dgd/worker-hash.js';
export * from './dgd/worker-hash-suffix.js';
export * from './dgd/checkpoints.js';
export * from './dgd/pod-template.js';
export * from './dgd/render.js';
export * from './dgd/reconcile-dgd.js';
export * from './dgd/apply-drift.js';
export * from './dgd/reconcile-writes.js';
export * from './dgd/quiet-pass.js';
export * from './admission/index.js';
export * from './dgd/grove-scaling.js';
export * from './dgd/grove-coherent.js';
export * from './ownership.js';
export * from './lpx/index.js';
export * from './v1beta2/index.js';
export * from './dgd/dgdsa.js';
export * from './dgdr/index.js';
export { toKubeTime } from './time.js';
export * from './dgd/k8s-discovery.js';
export { RESOURCE_API_VERSION, RESOURCE_CLAIM_TEMPLATE_KIND, gmsResourceClaimTemplate, gmsResourceClaimTemplateName, gpuMemoryServiceMode } from './dgd/gms.js';
export * from './dgd/alpha-pvcs.js';
export { cloneJson } from './clone.js';
export * from './status-write.js';
