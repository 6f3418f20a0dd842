/**
 * Fixture builders for the v1beta2 API: a Run with a trace or static workload, a claim, a Job,
 * so each test states only what it is about.
 * @module
 */
import { RunSchema, type DgdrV1Beta2Spec, type Run, type RunStatus } from '../../shared/api/index.js';
import type { ClaimState, JobState } from '../../shared/domain/index.js';

export const RUN_UID = '7d1f0a52-0000-4000-8000-000000000001';

/** A trace Run `qwen3-trace-replay-1` in `inference` reading claim `request-traces` (the reference's example). */
export function aRun(overrides: { spec?: Partial<DgdrV1Beta2Spec>; status?: RunStatus; metadata?: Partial<Run['metadata']> } = {}): Run {
  return RunSchema.parse({
    apiVersion: 'nvidia.com/v1beta2',
    kind: 'DynamoGraphDeploymentRun',
    metadata: { name: 'qwen3-trace-replay-1', namespace: 'inference', uid: RUN_UID, generation: 1, ...overrides.metadata },
    spec: {
      model: { name: 'Qwen/Qwen3-0.6B' },
      hardware: { gpu: { sku: 'h200_sxm', budget: 8, numGpusPerNode: 8 } },
      workload: { trace: { source: { persistentVolumeClaim: { claimName: 'request-traces', subPath: 'windows/2026-10-27T10-00.jsonl.gz' } } } },
      ...overrides.spec,
    },
    ...(overrides.status === undefined ? {} : { status: overrides.status }),
  });
}

/** A Bound filesystem claim `request-traces` carrying the Run's finalizer unless told otherwise. */
export function aClaim(overrides: Partial<ClaimState> = {}): ClaimState {
  return { name: 'request-traces', isDeleting: false, volumeMode: 'Filesystem', phase: 'Bound', finalizers: [`nvidia.com/dgdr-run-${RUN_UID}`], ...overrides };
}

/** The Run's active Job. */
export function aJob(overrides: Partial<JobState> = {}): JobState {
  return { name: 'qwen3-trace-replay-1-aisimulate', uid: 'job-uid-1', isDeleting: false, outcome: 'Active', failureMessage: undefined, ...overrides };
}
