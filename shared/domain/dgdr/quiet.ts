/**
 * A quiet pass of the DGDR v1beta1 lifecycle: what each phase's decision reads, and the
 * no-write wrapper around `decideDgdr`. Kept apart from ./lifecycle.ts so the lifecycle's rules
 * stay where they are; these only narrow the reads and drop a status write that changes nothing.
 * Source: issue 17 item 3 ("a quiet resync writes nothing and reads in bulk").
 * @module
 */
import type { DgdrPhase, DgdrStatus } from '../../api/index.js';
import { decideStatusWrite } from '../status-write.js';
import { isFailedBeforeItsDgd, type DgdrDesired } from './lifecycle.js';

/** Which children a phase's decision reads (./lifecycle.ts: decidePending reads the Job and the output; decideProfiling the Job, its pods and the output; decideDeploying and decideDeployed the DGD and the tracking-labelled ConfigMaps). */
export interface DgdrReads {
  /** The Job `profile-<name>`. */
  readonly job: boolean;
  /** The Job's pods, when it failed (failure details). */
  readonly jobPods: boolean;
  /** The ConfigMap `dgdr-output-<name>`. */
  readonly output: boolean;
  /** The DGD `status.dgdName` and the ConfigMaps with the request's tracking labels. */
  readonly dgd: boolean;
}

/**
 * The reads a phase needs; Failed reads nothing but the request (decideFailed), except a request
 * failed `PlannerConfigMapConflict` or `DeploymentRejected`, which reads its DGD and ConfigMaps to
 * delete what it half-wrote ({@link isFailedBeforeItsDgd}); Ready reads the DGD `status.dgdName`
 * (decideReady). In: the stored status (absent, or without a phase: Pending). Pure.
 */
export function dgdrReadsOf(status: DgdrStatus | undefined): DgdrReads {
  const phase: DgdrPhase = status?.phase ?? 'Pending';
  switch (phase) {
    case 'Pending':
      // The output too (issue 20): a stale one this request controls is deleted before the Job, a foreign one refused.
      return { job: true, jobPods: false, output: true, dgd: false };
    case 'Profiling':
      return { job: true, jobPods: true, output: true, dgd: false };
    case 'Deploying':
    case 'Deployed':
      return { job: false, jobPods: false, output: false, dgd: true };
    case 'Ready':
      // decideReady follows a DGD the user created by hand from the stored spec (dgdr-reference "status.deploymentInfo").
      return { job: false, jobPods: false, output: false, dgd: true };
    case 'Failed':
      return { job: false, jobPods: false, output: false, dgd: isFailedBeforeItsDgd(status) };
    default: {
      const unreachable: never = phase;
      return unreachable;
    }
  }
}

/**
 * The decision's writes without a status write that would change nothing: the status the
 * decision computed is compared with the stored one (the whole status is the profile
 * function's; conditions by type, lastTransitionTime ignored), except beside a DGD to create.
 * Every other write is kept as decided. In: the decision's output and the stored status. Out: the writes. Pure.
 */
export function withoutUnchangedStatus(desired: DgdrDesired, stored: DgdrStatus | undefined): DgdrDesired {
  // Kept when a DGD is to be created: its resourceVersion precondition proves the request still
  // reads as the decision read it (not failed meanwhile by another pass) before the DGD is created.
  if (desired.status === undefined || desired.dgd !== undefined) return desired;
  const write = decideStatusWrite(stored, desired.status);
  return write.kind === 'Unchanged' ? { ...desired, status: undefined } : desired;
}
