/**
 * v1beta2 decisions (DGDR v1beta2, Runs, Candidates, trace claims): AISimulate input lowering
 * and validation, the Run decision table, the Run's Job, trace-claim release, Run retention.
 * @module
 */
export * from './aisimulate-input.js';
export * from './observed.js';
export * from './run-output.js';
export * from './run-lifecycle.js';
export * from './run-job.js';
export * from './trace-claim.js';
export * from './retention.js';
export * from './candidate.js';
export * from './recommendation.js';
export * from './request-runs.js';
export * from './admission.js';
export * from './request-admission.js';
export * from './quiet.js';
