/**
 * DGD admission: defaulting (`defaultDgd`), validation (`validateDgd`) and the named rules they
 * are built from. Pure decisions; the webhook shell is functions/admission.
 * @module
 */
export * from './common.js';
export * from './defaulting.js';
export * from './graph.js';
export * from './components.js';
export * from './provider-override.js';
export * from './min-available.js';
export * from './rollout-budget.js';
export * from './lpx.js';
export * from './scaling-adapter.js';
export * from './metadata-annotations.js';
export * from './validate.js';
export * from './storable-size.js';
export * from './topology.js';
