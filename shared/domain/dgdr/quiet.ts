/**
 * A quiet pass of the DGDR v1beta1 lifecycle: what each phase's decision reads, and the
 * no-write wrapper around `decideDgdr`. Kept apart from ./lifecycle.ts so the lifecycle's rules
 * stay where they are; these only narrow the reads and drop a status write that changes nothing.
 * Source: issue 17 item 3 ("a quiet resync writes nothing and reads in bulk").
 * @module
 */
import type { DgdrPhase, DgdrStatus } from '../../api/index.js';
import { decideStatusWrite } from '../status-write.js';
import type { DgdrDesired } from './lifecycle.js';

/** Which children a phase's decision reads (./lifecycle.ts: decidePending reads the Job; decideProfiling the Job, its pods and the output; decideDeploying and decideDeployed the DGD and the tracking-labelled ConfigMaps). */
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
 * The reads a phase needs; Ready and Failed read nothing but the request (decideReady,
 * decideFailed). In: the phase (absent is Pending). Pure.
 */
export function dgdrReadsOf(phase: DgdrPhase): DgdrReads {
  switch (phase) {
    case 'Pending':
      return { job: true, jobPods: false, output: false, dgd: false };
    case 'Profiling':
      return { job: true, jobPods: true, output: true, dgd: false };
    case 'Deploying':
    case 'Deployed':
      return { job: false, jobPods: false, output: false, dgd: true };
    case 'Ready':
    case 'Failed':
      return { job: false, jobPods: false, output: false, dgd: false };
    default: {
      const unreachable: never = phase;
      return unreachable;
    }
  }
}

/**
 * The decision's writes without a status write that would change nothing: the status the
 * decision computed is compared with the stored one (the whole status is the profile
 * function's; conditions by type, lastTransitionTime ignored). Every other write is kept as
 * decided. In: the decision's output and the stored status. Out: the writes. Pure.
 */
export function withoutUnchangedStatus(desired: DgdrDesired, stored: DgdrStatus | undefined): DgdrDesired {
  if (desired.status === undefined) return desired;
  const write = decideStatusWrite(stored, desired.status);
  return write.kind === 'Unchanged' ? { ...desired, status: undefined } : desired;
}
