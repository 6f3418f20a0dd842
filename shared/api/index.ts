/**
 * Public entry of `shared/api`: schemas, types and API constants.
 * @module
 */
export * from './constants.js';
export * from './core.js';
export * from './issues.js';
export * from './dgd.js';
export * from './dgd-v1alpha1.js';
export * from './dgdsa.js';
export * from './dgd-conversion.js';
export * from './grove.js';
export * from './parse.js';
export * from './dgd-exact.js';
export * from './crd.js';
export * from './lpx.js';
export * from './lpx-local-partitions.js';
export * from './lpx-crd.js';
export * from './dgdr-v1beta2.js';
export * from './dgdr-v1beta2-conversion.js';
export * from './dgdr-v1beta2-crd.js';
export * from './dgdr.js';
export * from './dgdr-crd.js';
export * from './dgdr-v1alpha1.js';
export * from './descriptions.js';
export * from './chart-wiring.js';
