/**
 * Which of a DGD decision's writes a pass must send: a pass that finds nothing to change writes
 * nothing (no apply, no status write, no Event). Decided from what the pass already observed,
 * never by sending an apply to find out. No I/O.
 *
 * Source: issue 17 item 3 ("A pass that finds nothing to change writes nothing ... compare the
 * fields this function owns on the stored object with the rendered ones, so a hand edit to one
 * of them is still put back"); DESIGN.md "Scale" (a pass that changes nothing writes nothing).
 * @module
 */
import { DGD_KIND, DGD_V1BETA1, FIELD_MANAGER_RECONCILE, LPXGD_KIND } from '../../api/index.js';
import { describeApplyDrift } from './apply-drift.js';
import type { RenderedObject } from './render.js';
import type { DgdDesired, DgdEventIntent, DgdObserved, DgdStatusIntent, ObservedObject } from './reconcile-dgd.js';

/** One object the pass writes, and why (for the log). */
export interface WriteReason {
  readonly kind: string;
  readonly name: string;
  /** Where the stored object differs from the intent (`absent`, `spec.replicas: changed`, ...). */
  readonly drift: string;
}

export interface DgdWrites {
  /** The decision's applies whose object differs from the stored one, each whole (an apply of part of an intent would drop the rest: server-side apply removes fields a manager stops setting). */
  readonly apply: readonly RenderedObject[];
  /** The status to write, or undefined when the stored status already is it. */
  readonly status: DgdStatusIntent | undefined;
  /** The decision's Events, only with a status write (each is a Ready transition, which is a status change). */
  readonly events: readonly DgdEventIntent[];
  /** Why each write is made: the applies', then the status's (`kind` DynamoGraphDeployment). */
  readonly reasons: readonly WriteReason[];
}

/** The status subresource apply the shell sends for a status intent (absent fields left out). */
export function dgdStatusApply(parent: ObservedObject, status: DgdStatusIntent): RenderedObject {
  const metadata = (parent['metadata'] ?? {}) as { name?: unknown; namespace?: unknown };
  return {
    apiVersion: DGD_V1BETA1,
    kind: DGD_KIND,
    metadata: { name: typeof metadata.name === 'string' ? metadata.name : '', namespace: typeof metadata.namespace === 'string' ? metadata.namespace : '' },
    status: Object.fromEntries(Object.entries(status).filter(([, value]) => value !== undefined)),
  };
}

/**
 * Narrows a DGD decision to the writes that change something.
 * In: the observed DGD and children (with their `metadata.managedFields`), the decision, our
 * field manager (default `dynamo-reconcile`). Out: {@link DgdWrites}: each apply whose stored
 * object is absent or differs in a field we set or own ({@link describeApplyDrift}: a hand edit
 * of such a field, or a field we no longer render, is a difference; fields the API server
 * defaulted or others own are not); the status when the stored status differs from the
 * decided one (conditions keep their `lastTransitionTime` while their status holds, so an
 * unchanged status compares equal); the Events with the status. Pure.
 */
export function decideDgdWrites(observed: DgdObserved, desired: Pick<DgdDesired, 'apply' | 'status' | 'events'>, fieldManager: string = FIELD_MANAGER_RECONCILE): DgdWrites {
  const apply: RenderedObject[] = [];
  const reasons: WriteReason[] = [];
  for (const intent of desired.apply) {
    const drift = describeApplyDrift(intent, storedChild(observed, intent), fieldManager);
    if (drift === undefined) continue;
    apply.push(intent);
    reasons.push({ kind: intent.kind, name: intent.metadata.name, drift });
  }
  const statusDrift = describeApplyDrift(dgdStatusApply(observed.parent, desired.status), observed.parent, fieldManager, 'status');
  if (statusDrift === undefined) return { apply, status: undefined, events: [], reasons };
  const name = (observed.parent['metadata'] as { name?: unknown } | undefined)?.name;
  reasons.push({ kind: DGD_KIND, name: typeof name === 'string' ? name : '', drift: `status: ${statusDrift}` });
  return { apply, status: desired.status, events: desired.events, reasons };
}

/** The observed object of an intent's kind and name (the LPXGraphDeployment is observed alone). */
function storedChild(observed: DgdObserved, intent: RenderedObject): ObservedObject | undefined {
  if (intent.kind === LPXGD_KIND) {
    const lpxgd = observed.children.LPXGraphDeployment;
    return (lpxgd?.['metadata'] as { name?: unknown } | undefined)?.name === intent.metadata.name ? lpxgd : undefined;
  }
  const byName = (observed.children as unknown as Record<string, ReadonlyMap<string, ObservedObject> | undefined>)[intent.kind];
  return byName instanceof Map ? byName.get(intent.metadata.name) : undefined;
}
