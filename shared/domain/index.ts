/**
 * Public entry of `shared/domain`: pure decisions (render, hash, names, availability).
 * @module
 */
export * from './names.js';
export * from './availability.js';
export * from './worker-hash.js';
export * from './pod-template.js';
export * from './render.js';
export * from './reconcile-dgd.js';
export * from './apply-drift.js';
export * from './reconcile-writes.js';
export * from './admission/index.js';
export * from './grove-scaling.js';
export * from './grove-coherent.js';
export * from './ownership.js';
export * from './lpx/index.js';
export * from './v1beta2/index.js';
export * from './dgdsa.js';
export * from './dgdr/index.js';
export { toKubeTime } from './time.js';
export * from './k8s-discovery.js';
export { RESOURCE_API_VERSION, RESOURCE_CLAIM_TEMPLATE_KIND, gmsResourceClaimTemplate, gmsResourceClaimTemplateName, gpuMemoryServiceMode } from './gms.js';
export * from './alpha-pvcs.js';
export { cloneJson } from './clone.js';
export * from './status-write.js';
