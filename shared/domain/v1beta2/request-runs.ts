/**
 * A v1beta2 request's Runs: one Run per `metadata.generation`, its spec an exact frozen copy
 * of the request's; a spec change stops the old Run (it fails `Superseded`, see
 * run-lifecycle.ts) before the replacement Run is created. No I/O.
 *
 * Source: ../shared/reference/dgdr-reference.txt "Trace claim lifecycle" ("The request starts one
 * Run per metadata.generation"; the example Run `qwen3-trace-replay-1`), "v1beta2 DGD Overrides"
 * ("Changing the request's spec stops the old Run and its publisher before starting the
 * replacement Run"); upstream-notes/dgdr.md §5 (status `activeRunRef`, `recentRunRefs` newest first).
 * @module
 */
import {
  CONDITION_ACCEPTED,
  DGDR_V1BETA2,
  DGDR_V1BETA2_KIND,
  LABEL_DGDR_GENERATION,
  REASON_RUN_CONFLICT,
  REASON_RUN_CREATED,
  REASON_STOPPING_PREVIOUS_RUN,
  RUN_KIND,
  type Condition,
  type DgdrV1Beta2Spec,
} from '../../api/index.js';
import { shortenName } from '../dgd/names.js';

/** One Run of the request, as observed. */
export interface RequestRun {
  readonly name: string;
  readonly uid: string | undefined;
  /** The request generation it evaluates (its `nvidia.com/dgdr-generation` label). */
  readonly generation: number;
  readonly isComplete: boolean;
}

export interface RequestObserved {
  readonly request: { readonly name: string; readonly namespace: string; readonly uid: string; readonly generation: number; readonly spec: DgdrV1Beta2Spec };
  /** The Runs the request controls. */
  readonly runs: readonly RequestRun[];
  /** An object named like the current generation's Run that the request does not control (never adopted). */
  readonly foreignRunName?: string;
}

export interface RequestRunsDesired {
  /** The Run to create for the current generation, when it may start now. */
  readonly createRun: Record<string, unknown> | undefined;
  readonly activeRunRef: { readonly name: string; readonly uid?: string } | undefined;
  /** Finished Runs, newest generation first. */
  readonly recentRunRefs: readonly { readonly name: string; readonly uid?: string }[];
  /** Open Runs of older generations: each is reconciled so it stops (Superseded). */
  readonly supersededRuns: readonly string[];
}

/**
 * Which API a stored request is native to, from its spec as read: read at v1beta2, a native
 * v1beta1 request carries the read-only view `spec.v1beta1`; read at v1beta1, a native v1beta2
 * request carries `spec.v1beta2` (reference "Conversion views"). In: the `spec` as read.
 * Out: whether that spec holds the other version's view. Pure.
 */
export function hasConversionView(spec: unknown, view: 'v1beta1' | 'v1beta2'): boolean {
  return typeof spec === 'object' && spec !== null && !Array.isArray(spec) && (spec as Record<string, unknown>)[view] !== undefined;
}

/** Object names are DNS subdomains: at most 253 characters. */
const MAX_NAME_LENGTH = 253;

/** The Run of one generation: `<request>-<generation>` (the reference's `qwen3-trace-replay-1`). Pure. */
export function runNameFor(requestName: string, generation: number): string {
  return shortenName(`${requestName}-${generation}`, MAX_NAME_LENGTH);
}

const ref = (run: RequestRun) => ({ name: run.name, ...(run.uid === undefined ? {} : { uid: run.uid }) });

/**
 * Decides the request's Runs: the current generation's Run is created once no older Run is
 * still open (an open older Run is being stopped as Superseded first); it carries the request's
 * spec unchanged, the generation label and a controller reference to the request. A Run of that
 * name the request does not control is never adopted: nothing is created.
 * In: the request and its Runs. Out: RequestRunsDesired. Pure.
 */
export function decideRequestRuns(observed: RequestObserved): RequestRunsDesired {
  const { request, runs } = observed;
  const current = runs.find((run) => run.generation === request.generation);
  const olderOpen = runs.filter((run) => run.generation < request.generation && !run.isComplete).sort((a, b) => b.generation - a.generation);
  const recent = runs.filter((run) => run.isComplete).sort((a, b) => b.generation - a.generation).map(ref);
  const supersededRuns = olderOpen.map((run) => run.name);
  if (current !== undefined) return { createRun: undefined, activeRunRef: current.isComplete ? undefined : ref(current), recentRunRefs: recent, supersededRuns };
  const stopping = olderOpen[0];
  if (stopping !== undefined) return { createRun: undefined, activeRunRef: ref(stopping), recentRunRefs: recent, supersededRuns };
  if (observed.foreignRunName !== undefined) return { createRun: undefined, activeRunRef: undefined, recentRunRefs: recent, supersededRuns };
  const name = runNameFor(request.name, request.generation);
  return {
    createRun: {
      apiVersion: DGDR_V1BETA2,
      kind: RUN_KIND,
      metadata: {
        name,
        namespace: request.namespace,
        labels: { [LABEL_DGDR_GENERATION]: String(request.generation) },
        ownerReferences: [{ apiVersion: DGDR_V1BETA2, kind: DGDR_V1BETA2_KIND, name: request.name, uid: request.uid, controller: true, blockOwnerDeletion: true }],
      },
      spec: request.spec,
    },
    activeRunRef: { name },
    recentRunRefs: recent,
    supersededRuns,
  };
}

/**
 * The request's `Accepted` condition: True `RunCreated` once the current generation has its Run;
 * False `StoppingPreviousRun` while an older Run is being stopped (reference "v1beta2 DGD
 * Overrides": "Changing the request's spec stops the old Run and its publisher before starting
 * the replacement Run"); False `RunConflict` when the Run's name is taken by an object the
 * request does not control (DESIGN.md "Writes": never adopt; the parent reports the conflict).
 * `observedGeneration` is the request's generation. In: observed and the decision. Pure.
 */
export function decideRequestAccepted(observed: RequestObserved, desired: RequestRunsDesired): Omit<Condition, 'lastTransitionTime'> {
  const { request } = observed;
  const generation = { observedGeneration: request.generation };
  const runName = runNameFor(request.name, request.generation);
  const [stopping] = desired.supersededRuns;
  const hasCurrent = observed.runs.some((run) => run.generation === request.generation) || desired.createRun !== undefined;
  if (hasCurrent) return { type: CONDITION_ACCEPTED, status: 'True', reason: REASON_RUN_CREATED, message: `DynamoGraphDeploymentRun ${runName} evaluates generation ${request.generation}`, ...generation };
  if (stopping !== undefined) return { type: CONDITION_ACCEPTED, status: 'False', reason: REASON_STOPPING_PREVIOUS_RUN, message: `waiting for DynamoGraphDeploymentRun ${stopping} to stop (Superseded) before starting generation ${request.generation}`, ...generation };
  return { type: CONDITION_ACCEPTED, status: 'False', reason: REASON_RUN_CONFLICT, message: `${observed.foreignRunName ?? runName} exists and is not controlled by this request; it is left untouched`, ...generation };
}
