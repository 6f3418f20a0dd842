/**
 * DGDR v1beta1 decisions: admission, hardware discovery, the profiling Job, the lifecycle.
 * (`overrides.ts`, the `spec.overrides.dgd` merge engine, belongs to the profiler work.)
 * @module
 */
export * from './image-version.js';
export * from './admission.js';
export * from './discovery.js';
export * from './dcgm.js';
export * from './intel-xpu.js';
export * from './output-copier.js';
export * from './profiling-job.js';
export * from './profiler-output.js';
export * from './lifecycle.js';
export * from './quiet.js';
