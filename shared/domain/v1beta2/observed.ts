/**
 * What the v1beta2 decisions read of a trace claim, a Job and its pods, reduced from the
 * objects as stored. The trace-claim rules decide "from structured state only: the claim's
 * deletionTimestamp, volumeMode, and phase, the Job's conditions, and the request's spec. It
 * copies container status messages into the Run but never interprets them" (reference "Trace
 * claim lifecycle"); these readers are exactly that list.
 * @module
 */
import { TRACE_CLAIM_FINALIZER_PREFIX } from '../../api/index.js';

/** A trace claim as the rules see it; `undefined` where it is used means the claim does not exist. */
export interface ClaimState {
  readonly name: string;
  readonly isDeleting: boolean;
  /** `Filesystem` (the default) or `Block`. */
  readonly volumeMode: string;
  /** `Pending`, `Bound`, `Lost`, or undefined before the first status. */
  readonly phase: string | undefined;
  readonly finalizers: readonly string[];
}

/** A Job's outcome from its conditions: `Complete`/`SuccessCriteriaMet` True, `Failed`/`FailureTarget` True, else Active. */
export type JobOutcome = 'Active' | 'Complete' | 'Failed';

export interface JobState {
  readonly name: string;
  readonly uid: string | undefined;
  readonly isDeleting: boolean;
  readonly outcome: JobOutcome;
  /** The Failed condition's message, when the Job failed. */
  readonly failureMessage: string | undefined;
}

/** A container waiting with a reason, as `kubectl describe pod` shows it. */
export interface WaitingContainer {
  readonly name: string;
  readonly reason: string;
  readonly message: string;
}

function record(value: unknown): Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function array(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value : [];
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** The finalizer a Run puts on its trace claim: `nvidia.com/dgdr-run-<run-uid>` (reference "Trace claim lifecycle"). Pure. */
export function traceClaimFinalizer(runUid: string): string {
  return `${TRACE_CLAIM_FINALIZER_PREFIX}${runUid}`;
}

/** The Run uid a claim finalizer names, or undefined for other finalizers. Pure. */
export function runUidOfFinalizer(finalizer: string): string | undefined {
  return finalizer.startsWith(TRACE_CLAIM_FINALIZER_PREFIX) && finalizer.length > TRACE_CLAIM_FINALIZER_PREFIX.length
    ? finalizer.slice(TRACE_CLAIM_FINALIZER_PREFIX.length)
    : undefined;
}

/**
 * Reads a PersistentVolumeClaim: deletionTimestamp, `spec.volumeMode` (default Filesystem,
 * Kubernetes core/v1 PersistentVolumeClaimSpec), `status.phase`, finalizers. Pure.
 */
export function claimStateOf(claim: Readonly<Record<string, unknown>>): ClaimState {
  const metadata = record(claim['metadata']);
  return {
    name: text(metadata['name']) ?? '',
    isDeleting: metadata['deletionTimestamp'] !== undefined && metadata['deletionTimestamp'] !== null,
    volumeMode: text(record(claim['spec'])['volumeMode']) ?? 'Filesystem',
    phase: text(record(claim['status'])['phase']),
    finalizers: array(metadata['finalizers']).filter((f): f is string => typeof f === 'string'),
  };
}

/**
 * Reads a batch/v1 Job: Failed when a `Failed` or `FailureTarget` condition is True, Complete
 * when `Complete` or `SuccessCriteriaMet` is True, else Active (the job controller's terminal
 * conditions, Kubernetes 1.31+ adds the *Target/SuccessCriteriaMet interim ones). Pure.
 */
export function jobStateOf(job: Readonly<Record<string, unknown>>): JobState {
  const metadata = record(job['metadata']);
  const conditions = array(record(job['status'])['conditions']).map(record);
  const isTrue = (type: string) => conditions.find((c) => c['type'] === type && c['status'] === 'True');
  const failed = isTrue('Failed') ?? isTrue('FailureTarget');
  const complete = isTrue('Complete') ?? isTrue('SuccessCriteriaMet');
  return {
    name: text(metadata['name']) ?? '',
    uid: text(metadata['uid']),
    isDeleting: metadata['deletionTimestamp'] !== undefined && metadata['deletionTimestamp'] !== null,
    outcome: failed !== undefined ? 'Failed' : complete !== undefined ? 'Complete' : 'Active',
    failureMessage: failed === undefined ? undefined : (text(failed['message']) ?? text(failed['reason'])),
  };
}

/** Waiting reasons that are normal start-up, not reported (reference "Trace claim lifecycle"). */
const START_UP_WAITING_REASONS: ReadonlySet<string> = new Set(['ContainerCreating', 'PodInitializing']);

/**
 * The containers of the Job's pods that wait on an error: `state.waiting` with a reason other
 * than ContainerCreating or PodInitializing, init containers first, in pod then status order.
 * Reason and message are copied, never interpreted.
 * Source: reference "Trace claim lifecycle" ("A waiting container is a diagnostic"). Pure.
 */
export function waitingContainersOf(pods: readonly Readonly<Record<string, unknown>>[]): WaitingContainer[] {
  const out: WaitingContainer[] = [];
  for (const pod of pods) {
    const status = record(pod['status']);
    for (const container of [...array(status['initContainerStatuses']), ...array(status['containerStatuses'])].map(record)) {
      const waiting = record(record(container['state'])['waiting']);
      const reason = text(waiting['reason']);
      if (reason === undefined || START_UP_WAITING_REASONS.has(reason)) continue;
      out.push({ name: text(container['name']) ?? '', reason, message: text(waiting['message']) ?? '' });
    }
  }
  return out;
}

/** `container "<name>" is waiting: <reason>: <message>` (reference "Trace claim lifecycle"). Pure. */
export function containerWaitingMessage(container: WaitingContainer): string {
  return `container "${container.name}" is waiting: ${container.reason}: ${container.message}`;
}

/** The uid of the object's controller owner reference (`controller: true`), if any. Pure. */
export function controllerUidOf(object: Readonly<Record<string, unknown>>): string | undefined {
  const owners = array(record(object['metadata'])['ownerReferences']).map(record);
  return text(owners.find((o) => o['controller'] === true)?.['uid']);
}

/** The controller owner reference itself (kind, name, uid), if any. Pure. */
export function controllerOf(object: Readonly<Record<string, unknown>>): { readonly kind: string; readonly name: string; readonly uid: string } | undefined {
  const owner = array(record(object['metadata'])['ownerReferences']).map(record).find((o) => o['controller'] === true);
  if (owner === undefined) return undefined;
  return { kind: text(owner['kind']) ?? '', name: text(owner['name']) ?? '', uid: text(owner['uid']) ?? '' };
}
