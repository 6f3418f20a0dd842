/**
 * The DGD reconcile decision: given the DGD as stored and the Grove children observed now,
 * what to apply, what status to report and which Events to emit. No I/O.
 *
 * Source: ../shared/reference/dgd-reference.txt (LPX disabled status); upstream-notes/dgd.md
 * §4.7 (readiness table, reasons, `Ready` condition, state); STYLE.md §4-§9.
 * @module
 */
import {
  CONDITION_READY,
  REASON_ALL_RESOURCES_READY,
  REASON_INVALID_SPEC,
  REASON_LPX_DISABLED,
  REASON_RESOURCES_NOT_READY,
  formatIssues,
  parseDgd,
  type Condition,
  type Dgd,
  type FieldIssue,
  type PodClique,
  type PodCliqueScalingGroup,
} from '../api/index.js';
import { componentBaseName, podCliqueSetName, usesScalingGroup } from './names.js';
import { renderDgd, type RenderConfig, type RenderedObject } from './render.js';
import { toKubeTime } from './time.js';
import { combineReadiness } from './lpx/readiness.js';
import { decideDgdLpx } from './lpx/dgd-part.js';

/** What the reconcile function observed: the DGD as stored and its Grove children by name. */
export interface DgdObserved {
  /** The DGD object as read from the API server (unparsed). */
  readonly parent: Readonly<Record<string, unknown>>;
  readonly children: {
    readonly PodClique: ReadonlyMap<string, PodClique>;
    readonly PodCliqueScalingGroup: ReadonlyMap<string, PodCliqueScalingGroup>;
    /** The DGD's LPXGraphDeployment as stored, when LPX is enabled and it exists (issue 11). */
    readonly LPXGraphDeployment?: Readonly<Record<string, unknown>> | undefined;
  };
}

/** An Event about the DGD (the shell fills in the reporting fields). */
export interface DgdEventIntent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly note: string;
}

export interface DgdStatusIntent {
  readonly observedGeneration: number | undefined;
  readonly state: 'initializing' | 'pending' | 'successful' | 'failed';
  readonly conditions: Condition[];
  readonly components?: Record<string, Record<string, unknown>>;
}

export interface DgdDesired {
  /** Objects to server-side apply, sorted by kind then name. */
  readonly apply: readonly RenderedObject[];
  readonly status: DgdStatusIntent;
  readonly events: readonly DgdEventIntent[];
  /** Set when the spec itself is invalid: report on status, do not retry. */
  readonly permanentFailure?: { readonly reason: string; readonly message: string };
}

/**
 * Decides one DGD reconcile.
 * In: the observed DGD and children, the render config, the current time.
 * Out: {@link DgdDesired}. A DGD that cannot be parsed or rendered gets `Ready=False`,
 * reason `InvalidSpec`, the field errors as message, state `failed`, nothing to apply.
 * A DGD with LPX components while `lpx.enabled=false` gets `Ready=False`, reason
 * `LPXDisabled`, and no workload reconciliation ("Existing LPX DGDs report a disabled status
 * without further workload reconciliation", dgd-reference). Otherwise the rendered objects,
 * and `Ready` from the observed children (upstream-notes/dgd.md §4.7 step 5).
 * Events are emitted only when the Ready condition changes. Pure.
 */
export function decideDgd(observed: DgdObserved, config: RenderConfig, now: Date): DgdDesired {
  const generation = readGeneration(observed.parent);
  const previous = readConditions(observed.parent);
  const parsed = parseDgd(observed.parent);
  if (!parsed.ok) return invalid(parsed.issues, generation, previous, now);
  const dgd = parsed.dgd;
  const hasLpx = dgd.spec.components.some((c) => c.type === 'lpx');
  if (hasLpx && !config.lpxEnabled) {
    const message = 'LPX components require lpx.enabled=true; workload reconciliation is paused and existing workloads are preserved';
    return finish([], generation, previous, now, { status: 'False', reason: REASON_LPX_DISABLED, message }, 'pending', undefined, 'Warning');
  }
  const rendered = renderDgd(dgd, { config });
  if (!rendered.ok) return invalid(rendered.issues, generation, previous, now);

  const readiness = evaluateReadiness(dgd, observed);
  const ready = readiness.notReady.length === 0;
  const ordinary = ready
    ? { isReady: true, reason: REASON_ALL_RESOURCES_READY, message: 'All resources are ready' }
    : { isReady: false, reason: REASON_RESOURCES_NOT_READY, message: readiness.notReady.join('; ') };
  // The LPX part (its own PodCliqueSet through the LPXGraphDeployment): a DGD is not Ready while it is not.
  const lpx = hasLpx ? decideDgdLpx(dgd, observed.children.LPXGraphDeployment) : undefined;
  const combined = lpx === undefined ? { ...ordinary, isFailed: false } : combineReadiness(ordinary, lpx.verdict);
  const condition = { status: combined.isReady ? ('True' as const) : ('False' as const), reason: combined.reason, message: combined.message };
  const state = combined.isReady ? 'successful' : combined.isFailed ? 'failed' : 'pending';
  const objects = lpx === undefined ? rendered.objects : [...rendered.objects, ...lpx.apply];
  const components = lpx === undefined ? readiness.components : { ...readiness.components, ...lpx.components };
  return finish(objects, generation, previous, now, condition, state, components, combined.isFailed ? 'Warning' : 'Normal');
}

/**
 * Ready=False reason when the API server refuses what was rendered: upstream's value, kept
 * snake_case because users match on it (deploy/operator/internal/controller/
 * dynamographdeployment_controller.go `reasonFailedToReconcileResources`).
 */
export const REASON_FAILED_TO_RECONCILE = 'failed_to_reconcile_the_resources';

/**
 * The status to report when applying the rendered objects failed permanently (the API
 * server rejected them): `Ready=False`, reason `failed_to_reconcile_the_resources`, the error as
 * message, state `failed`, nothing to apply; an Event only on a change. Pure.
 */
export function decideApplyFailure(observed: DgdObserved, message: string, now: Date): DgdDesired {
  const text = `cannot apply rendered resources: ${message}`;
  const desired = finish([], readGeneration(observed.parent), readConditions(observed.parent), now, { status: 'False', reason: REASON_FAILED_TO_RECONCILE, message: text }, 'failed', undefined, 'Warning');
  return { ...desired, permanentFailure: { reason: REASON_FAILED_TO_RECONCILE, message: text } };
}

function invalid(issues: readonly FieldIssue[], generation: number | undefined, previous: readonly Condition[], now: Date): DgdDesired {
  const message = formatIssues(issues);
  const desired = finish([], generation, previous, now, { status: 'False', reason: REASON_INVALID_SPEC, message }, 'failed', undefined, 'Warning');
  return { ...desired, permanentFailure: { reason: REASON_INVALID_SPEC, message } };
}

function finish(
  apply: readonly RenderedObject[],
  generation: number | undefined,
  previous: readonly Condition[],
  now: Date,
  ready: Pick<Condition, 'status' | 'reason' | 'message'>,
  state: DgdStatusIntent['state'],
  components: Record<string, Record<string, unknown>> | undefined,
  eventType: 'Normal' | 'Warning',
): DgdDesired {
  const before = previous.find((c) => c.type === CONDITION_READY);
  const changed = before === undefined || before.status !== ready.status || before.reason !== ready.reason || before.message !== ready.message;
  const transitioned = before === undefined || before.status !== ready.status;
  const condition: Condition = {
    type: CONDITION_READY,
    status: ready.status,
    reason: ready.reason,
    message: ready.message,
    // Keep the time of the last status flip, so re-deciding the same state writes nothing new.
    lastTransitionTime: transitioned || before === undefined ? toKubeTime(now) : before.lastTransitionTime,
    ...(generation === undefined ? {} : { observedGeneration: generation }),
  };
  const status: DgdStatusIntent = { observedGeneration: generation, state, conditions: [condition], ...(components === undefined ? {} : { components }) };
  const events: DgdEventIntent[] = changed ? [{ type: eventType, reason: ready.reason, note: ready.message.slice(0, 1024) }] : [];
  return { apply, status, events };
}

/**
 * Per component, the Grove child that carries it (`<pcs>-0-<lower(component)>`, a PodClique
 * or a PodCliqueScalingGroup) judged by upstream's table: not found -> not ready; observed
 * generation behind -> not ready; desired 0 -> ready; PodClique ready iff
 * replicas = updated = ready = desired; scaling group uses available instead of ready. Pure.
 */
export function evaluateReadiness(dgd: Dgd, observed: DgdObserved): { notReady: string[]; components: Record<string, Record<string, unknown>> } {
  const ordinary = dgd.spec.components.filter((c) => c.type !== 'lpx');
  const pcsName = podCliqueSetName(dgd.metadata.name ?? '', ordinary);
  const notReady: string[] = [];
  const components: Record<string, Record<string, unknown>> = {};
  for (const component of ordinary) {
    const childName = `${pcsName}-0-${componentBaseName(component)}`;
    const desired = component.replicas ?? 1;
    const isGroup = usesScalingGroup(component);
    const child = isGroup ? observed.children.PodCliqueScalingGroup.get(childName) : observed.children.PodClique.get(childName);
    const kind = isGroup ? 'PodCliqueScalingGroup' : 'PodClique';
    if (child === undefined) {
      notReady.push(`${component.name}: resource not found`);
      components[component.name] = { componentKind: kind, componentNames: [childName], replicas: 0, updatedReplicas: 0 };
      continue;
    }
    const status = child.status ?? {};
    const replicas = status.replicas ?? 0;
    const updated = status.updatedReplicas ?? 0;
    const readyCount = isGroup ? ((status as { availableReplicas?: number }).availableReplicas ?? 0) : ((status as { readyReplicas?: number }).readyReplicas ?? 0);
    components[component.name] = {
      componentKind: kind,
      componentNames: [childName],
      replicas,
      updatedReplicas: updated,
      ...(isGroup ? { availableReplicas: readyCount } : { readyReplicas: readyCount }),
    };
    const generationBehind = status.observedGeneration === undefined || status.observedGeneration < (child.metadata.generation ?? 0);
    if (generationBehind) notReady.push(`${component.name}: updating`);
    else if (desired === 0) continue;
    else if (!(replicas === desired && updated === desired && readyCount === desired)) notReady.push(`${component.name}: pods_not_ready`);
  }
  return { notReady, components };
}

function readGeneration(parent: Readonly<Record<string, unknown>>): number | undefined {
  const generation = (parent['metadata'] as { generation?: unknown } | undefined)?.generation;
  return typeof generation === 'number' ? generation : undefined;
}

function readConditions(parent: Readonly<Record<string, unknown>>): readonly Condition[] {
  const conditions = (parent['status'] as { conditions?: unknown } | undefined)?.conditions;
  return Array.isArray(conditions) ? (conditions as Condition[]) : [];
}
