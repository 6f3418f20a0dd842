/**
 * The DGD reconcile decision: given the DGD as stored and the children observed now, what to
 * apply, which Grove children to scale, what status to report and which Events to emit. No I/O.
 *
 * Source: ../shared/reference/dgd-reference.txt ("Coherent capacity and disruption", LPX
 * disabled status, Status); upstream-notes/dgd.md §2.4 (status fields, reasons), §4.7
 * (reconcile sequence, readiness table, ScalingDeferred, observedGeneration); DESIGN.md
 * "Writes" (never adopt); STYLE.md §4-§9.
 * @module
 */
import {
  CONDITION_READY,
  CONDITION_SCALING_DEFERRED,
  MESSAGE_COHERENT_UPDATE_IN_PROGRESS,
  MESSAGE_SCALING_ALLOWED,
  PODCLIQUESET_KIND,
  REASON_ALL_RESOURCES_READY,
  REASON_COHERENT_UPDATE_IN_PROGRESS,
  REASON_INSUFFICIENT_CAPACITY,
  REASON_INVALID_SPEC,
  REASON_MIXED_NOT_READY,
  REASON_PODS_NOT_READY,
  REASON_UPDATING,
  REASON_LPX_DISABLED,
  REASON_OWNERSHIP_CONFLICT,
  REASON_RESOURCES_NOT_READY,
  REASON_SCALING_ALLOWED,
  REASON_SCALING_DEFERRED,
  PERSISTENT_VOLUME_CLAIM_KIND,
  ANNOTATION_CURRENT_WORKER_HASH,
  REASON_WAITING_FOR_CHECKPOINT,
  ANNOTATION_CURRENT_WORKER_HASH_V2,
  LEGACY_WORKER_HASH_SENTINEL,
  MESSAGE_WORKER_HASH_MIGRATED,
  REASON_WORKER_HASH_MIGRATED,
  formatIssues,
  parseDgd,
  type Condition,
  type Dgd,
  type FieldIssue,
  type PodClique,
  type PodCliqueScalingGroup,
  type PodCliqueSet,
} from '../../api/index.js';
import { componentChild, decideScalingGate, isGenerationAcknowledged, isRolloutActive, keepSeededReplicas, keepUpdateStrategyDuringRollout, pendingScaleIntents, readPodCliqueSet, type ScaleIntent } from './grove-scaling.js';
import { fnv32a, podCliqueSetName, usesScalingGroup } from './names.js';
import { describeOwnershipConflicts, findOwnershipConflicts, isControlledByParent, type OwnedObject } from '../ownership.js';
import { renderDgd, type RenderConfig, type RenderedObject } from './render.js';
import { toKubeTime } from '../time.js';
import { resolveUpdateStrategy } from './availability.js';
import { MESSAGE_GROVE_COHERENT_UNSUPPORTED } from './grove-coherent.js';
import { dynamoNamespace, isWorkerClass } from './pod-template.js';
import { computeWorkerHash } from './worker-hash.js';
import { checkpointStatuses, isCheckpointGated, waitingForCheckpointsMessage, type ComponentCheckpointStatus } from './checkpoints.js';
import { isWorkerGenerationChanged, podCliqueSetUsesWorkerHashSuffix, shouldRenderWorkerHashSuffix } from './worker-hash-suffix.js';
import { combineReadiness } from '../lpx/readiness.js';
import { describeMissingAlphaPvcs, providedAlphaPvcNames } from './alpha-pvcs.js';
import { decideDgdLpx } from '../lpx/dgd-part.js';

/** An object as read from the API server (unparsed). */
export type ObservedObject = Readonly<Record<string, unknown>>;

/** What the reconcile function observed: the DGD as stored and its children by name. */
export interface DgdObserved {
  /** The DGD object as read from the API server (unparsed). */
  readonly parent: ObservedObject;
  readonly children: {
    /** The object of the rendered PodCliqueSet name, whoever controls it. */
    readonly PodCliqueSet: ReadonlyMap<string, ObservedObject>;
    /** The objects of the rendered Service names, whoever controls them. */
    readonly Service: ReadonlyMap<string, ObservedObject>;
    /** Grove's PodCliques of that PodCliqueSet (label `app.kubernetes.io/part-of`). */
    readonly PodClique: ReadonlyMap<string, PodClique>;
    readonly PodCliqueScalingGroup: ReadonlyMap<string, PodCliqueScalingGroup>;
    /** The objects of the Kubernetes discovery ServiceAccount, Role and RoleBinding names (k8s-discovery.ts), whoever controls them. */
    readonly ServiceAccount?: ReadonlyMap<string, ObservedObject>;
    readonly Role?: ReadonlyMap<string, ObservedObject>;
    readonly RoleBinding?: ReadonlyMap<string, ObservedObject>;
    /** The claims of the v1alpha1 `spec.pvcs` names to create (alpha-pvcs.ts), whoever made them. */
    readonly PersistentVolumeClaim?: ReadonlyMap<string, ObservedObject>;
    /** The DGD's LPXGraphDeployment as stored, when LPX is enabled and it exists (issue 11). */
    readonly LPXGraphDeployment?: ObservedObject | undefined;
  };
  /**
   * True when this pass's apply changed the PodCliqueSet, so `children.PodCliqueSet` shows the
   * configuration before that write: scaling waits for the write to be observed.
   */
  readonly podCliqueSetWritten?: boolean;
  /**
   * Whether the installed `podcliquesets.grove.io` CRD knows the Coherent strategy
   * (./grove-coherent.ts), read only for a DGD that selects Coherent; undefined: not read.
   */
  readonly groveCoherentSupported?: boolean;
}

/** An Event about the DGD (the shell fills in the reporting fields). */
export interface DgdEventIntent {
  /**
   * Deterministic per Ready transition (`<dgd>.<16 hex>` of the DGD uid, the condition before
   * and the condition after), so two reconciles deciding the same transition create one Event:
   * the second create is answered AlreadyExists.
   */
  readonly name: string;
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly note: string;
}

export interface DgdStatusIntent {
  /** The generation last reconciled without error (upstream: advances only after an error-free run). */
  readonly observedGeneration: number | undefined;
  readonly state: 'initializing' | 'pending' | 'successful' | 'failed';
  /** `Ready`, then `ScalingDeferred` when it is reported. */
  readonly conditions: Condition[];
  readonly components?: Record<string, Record<string, unknown>>;
  /** Per component with a checkpoint: its name (when the spec names one) and whether it is ready (checkpoints.ts). */
  readonly checkpoints?: Record<string, ComponentCheckpointStatus>;
}

export interface DgdDesired {
  /** Objects to server-side apply, sorted by kind then name (never one we do not control). */
  readonly apply: readonly RenderedObject[];
  /**
   * Objects to create only if absent, never applied over (the v1alpha1 PVCs with `create: true`
   * that do not exist yet: an existing claim is used as it is, whoever made it; upstream
   * `reconcilePVC`). Sorted by name.
   */
  readonly create: readonly RenderedObject[];
  /** Scale-subresource writes, after the applies (empty while scaling is gated). */
  readonly scale: readonly ScaleIntent[];
  readonly status: DgdStatusIntent;
  readonly events: readonly DgdEventIntent[];
  /** Set when the failure is permanent (invalid spec, ownership conflict): report on status, do not retry. */
  readonly permanentFailure?: { readonly reason: string; readonly message: string };
  /**
   * DGD metadata annotations to set (server-side apply of `metadata.annotations` only): the
   * worker hash to commit as `nvidia.com/current-worker-hash-v2` once every worker runs it.
   * Absent when nothing changes.
   */
  readonly parentAnnotations?: Readonly<Record<string, string>>;
  /**
   * DGD metadata annotations to remove after `parentAnnotations` are set: the legacy
   * `nvidia.com/current-worker-hash` once a new worker generation is committed (upstream keeps
   * only v2 for a completed v2 generation). Absent when nothing is removed.
   */
  readonly removeParentAnnotations?: readonly string[];
  /** An Event to record once `parentAnnotations` are written (`WorkerHashMigrated`). */
  readonly parentAnnotationsEvent?: DgdEventIntent;
}

/** Ready=False reason when the API server refuses a write (upstream-notes/dgd.md §2.4 failed-to-reconcile-resources). */
export const REASON_FAILED_TO_RECONCILE = 'failed_to_reconcile_the_resources';

type ReadyCondition = Pick<Condition, 'status' | 'reason' | 'message'>;

/**
 * Decides one DGD reconcile.
 * In: the observed DGD and children (and whether this pass already wrote the PodCliqueSet),
 * the render config, the current time. Out: {@link DgdDesired}:
 * - a DGD that cannot be parsed or rendered: `Ready=False`, reason `InvalidSpec`, the field
 *   errors as message, state `failed`, nothing to apply or scale (permanent);
 * - LPX components while `lpx.enabled=false`: `Ready=False`, reason `LPXDisabled`, nothing
 *   applied ("Existing LPX DGDs report a disabled status without further workload
 *   reconciliation", dgd-reference);
 * - a rendered name taken by an object this DGD does not control: that object is left out
 *   of the applies, nothing is scaled, `Ready=False`, reason `OwnershipConflict`, the
 *   message naming each object, state `failed` (permanent);
 * - a v1alpha1 claim the user is to provide (`spec.pvcs[]` without `create`) that does not
 *   exist, when `children.PersistentVolumeClaim` is observed: the rest is applied, nothing
 *   scaled, `Ready=False`, reason `failed_to_reconcile_the_resources`, upstream's message
 *   (permanent, left to the resync);
 * - otherwise the rendered objects (an existing PodCliqueSet keeps its seeded template
 *   replicas; the v1alpha1 PVCs go to `create`, and only those that do not exist yet), the scale writes the Coherent gate allows
 *   (a `WaitForCheckpoint` component's child held at 0 until its checkpoint is ready, then
 *   scaled to its `replicas`), `Ready` from the observed children,
 *   `ScalingDeferred` (True, state pending, Ready reason `scaling_deferred`) while the gate
 *   holds back a pending replica change under Coherent, else False `ScalingAllowed`.
 * `status.observedGeneration` advances only when the pass succeeds (not on a failure).
 * Events only on a Ready transition (status or reason). Pure.
 */
export function decideDgd(observed: DgdObserved, config: RenderConfig, now: Date): DgdDesired {
  const generation = readGeneration(observed.parent);
  const lastReconciled = readObservedGeneration(observed.parent);
  const parsed = parseDgd(observed.parent);
  if (!parsed.ok) return invalid(observed, parsed.issues, lastReconciled, now);
  const dgd = parsed.dgd;
  const hasLpx = dgd.spec.components.some((c) => c.type === 'lpx');
  if (hasLpx && !config.lpxEnabled) {
    const message = 'LPX components require lpx.enabled=true; workload reconciliation is paused and existing workloads are preserved';
    return finish(observed, { apply: [], scale: [], generation, state: 'pending', ready: { status: 'False', reason: REASON_LPX_DISABLED, message }, eventType: 'Warning', scaling: 'keep', components: undefined }, now);
  }
  // The worker hash reaches the worker cliques only as upstream renders it
  // (worker-hash-suffix.ts): a PodCliqueSet an older upstream operator wrote without it keeps
  // its worker templates until the worker generation changes, so switching rolls no worker.
  const existingPcs = observed.children.PodCliqueSet.get(podCliqueSetName(dgd.metadata.name ?? '', dgd.spec.components.filter((c) => c.type !== 'lpx')));
  const workerHash = computeWorkerHash(dgd);
  const workerHashSuffix = shouldRenderWorkerHashSuffix(dgd, existingPcs, isWorkerGenerationChanged(dgd, workerHash));
  const rendered = renderDgd(dgd, { config, workerHash, workerHashSuffix });
  if (!rendered.ok) return invalid(observed, rendered.issues, lastReconciled, now);

  const claims = rendered.objects.filter((o) => o.kind === PERSISTENT_VOLUME_CLAIM_KIND);
  const owned = rendered.objects.filter((o) => o.kind !== PERSISTENT_VOLUME_CLAIM_KIND);
  const create = claims.filter((o) => observed.children.PersistentVolumeClaim?.has(o.metadata.name) !== true);
  const conflicts = findOwnershipConflicts(owned, observed.children as unknown as Record<string, ReadonlyMap<string, OwnedObject>>, readUid(observed.parent));
  const taken = new Set(conflicts.map((c) => `${c.kind}/${c.name}`));
  const ordinary = dgd.spec.components.filter((c) => c.type !== 'lpx');
  const pcsName = podCliqueSetName(dgd.metadata.name ?? '', ordinary);
  const pcs = taken.has(`${PODCLIQUESET_KIND}/${pcsName}`) ? undefined : readPodCliqueSet(observed.children.PodCliqueSet.get(pcsName));
  const apply = owned.filter((o) => !taken.has(`${o.kind}/${o.metadata.name}`)).map((o) => (o.kind === PODCLIQUESET_KIND ? keepUpdateStrategyDuringRollout(keepSeededReplicas(o, pcs), pcs) : o));

  if (conflicts.length > 0) {
    const message = describeOwnershipConflicts(conflicts);
    const desired = finish(observed, { apply, create, scale: [], generation: lastReconciled, state: 'failed', ready: { status: 'False', reason: REASON_OWNERSHIP_CONFLICT, message }, eventType: 'Warning', scaling: 'keep', components: undefined }, now);
    return { ...desired, permanentFailure: { reason: REASON_OWNERSHIP_CONFLICT, message } };
  }
  // A claim the v1alpha1 spec names for the user to provide is missing (upstream reconcilePVC
  // fails the pass). Unlike upstream, the rest is still applied, so the pods start once the
  // claim exists; the resync notices it.
  const claimsObserved = observed.children.PersistentVolumeClaim;
  const missingClaims = claimsObserved === undefined ? undefined : describeMissingAlphaPvcs(providedAlphaPvcNames(dgd), claimsObserved);
  if (missingClaims !== undefined) {
    const desired = finish(observed, { apply, create, scale: [], generation: lastReconciled, state: 'failed', ready: { status: 'False', reason: REASON_FAILED_TO_RECONCILE, message: missingClaims }, eventType: 'Warning', scaling: 'keep', components: undefined }, now);
    return { ...desired, permanentFailure: { reason: REASON_FAILED_TO_RECONCILE, message: missingClaims } };
  }

  // The Coherent capability check comes before the PodCliqueSet is written (upstream
  // grove_coherent_support.go, at render time; the stable resources, Services and the discovery
  // identity, are reconciled before it and still are): Grove without Coherent in its CRD would
  // refuse that PodCliqueSet.
  const selected = resolveUpdateStrategy(dgd);
  if (selected.ok && selected.strategy === 'Coherent' && observed.groveCoherentSupported === false) {
    const message = MESSAGE_GROVE_COHERENT_UNSUPPORTED;
    const withoutPcs = apply.filter((o) => o.kind !== PODCLIQUESET_KIND);
    const desired = finish(observed, { apply: withoutPcs, create, scale: [], generation: lastReconciled, state: 'failed', ready: { status: 'False', reason: REASON_FAILED_TO_RECONCILE, message }, eventType: 'Warning', scaling: 'keep', components: undefined }, now);
    return { ...desired, permanentFailure: { reason: REASON_FAILED_TO_RECONCILE, message } };
  }

  const written = observed.podCliqueSetWritten === true;
  const readiness = evaluateReadiness(dgd, observed, pcs, written);
  const gate = decideScalingGate(pcs, written);
  const pending = pendingScaleIntents(ordinary, pcsName, dgd.metadata.namespace ?? '', observed.children, (c) => isCheckpointGated(dgd, c));
  const deferred = gate.blocked && gate.reason === 'CoherentUpdateInProgress' && pending.length > 0;
  const ordinaryReady = readiness.notReady.length === 0 && !deferred;
  const ordinaryVerdict = deferred
    ? { isReady: false, reason: REASON_SCALING_DEFERRED, message: readiness.notReady.length > 0 ? readiness.notReady.join('; ') : MESSAGE_COHERENT_UPDATE_IN_PROGRESS }
    : ordinaryReady
      ? { isReady: true, reason: REASON_ALL_RESOURCES_READY, message: 'All resources are ready' }
      : { isReady: false, reason: aggregateNotReadyReason(readiness.reasons), message: readiness.notReady.join('; ') };
  // The LPX part (its own PodCliqueSet through the LPXGraphDeployment): a DGD is not Ready while it is not.
  const lpx = hasLpx ? decideDgdLpx(dgd, observed.children.LPXGraphDeployment) : undefined;
  const combined = lpx === undefined ? { ...ordinaryVerdict, isFailed: false } : combineReadiness(ordinaryVerdict, lpx.verdict);
  // A WaitForCheckpoint component waits at 0 replicas, and says so (upstream
  // applyCheckpointStartupReadiness, over any result but a failure; checkpoints.ts: here every
  // checkpoint is absent, as no DynamoCheckpoint controller exists).
  const waitingForCheckpoints = combined.isFailed ? undefined : waitingForCheckpointsMessage(dgd);
  const ready: ReadyCondition =
    waitingForCheckpoints !== undefined
      ? { status: 'False', reason: REASON_WAITING_FOR_CHECKPOINT, message: waitingForCheckpoints }
      : { status: combined.isReady ? 'True' : 'False', reason: combined.reason, message: combined.message };
  const state = waitingForCheckpoints !== undefined ? 'pending' : combined.isReady ? 'successful' : combined.isFailed ? 'failed' : 'pending';
  const commit = decideWorkerHashCommit(dgd, observed, pcs, written, rendered.workerHash);
  // The workers' pods run suffixed once the PodCliqueSet they run from carries the hash: the
  // observed one until this generation has rolled out, then the rendered one.
  const runsSuffixed = commit.rolledOut || existingPcs === undefined ? workerHashSuffix : podCliqueSetUsesWorkerHashSuffix(dgd, existingPcs);
  const withNamespaces = withRuntimeNamespaces(dgd, readiness.components, runsSuffixed ? commit.committed : undefined);
  const components = lpx === undefined ? withNamespaces : { ...withNamespaces, ...lpx.components };
  // The ordinary PodCliqueSet's deferral wins; otherwise the LPX child's own ScalingDeferred=True
  // is the DGD's ("An LPX child's ScalingDeferred propagates to the DGD", upstream-notes/dgd.md §4.7).
  const scaling: Verdict['scaling'] = deferred ? 'deferred' : lpx?.scalingDeferred !== undefined ? { deferredBy: lpx.scalingDeferred } : 'allowed';
  const desired = finish(
    observed,
    { apply: lpx === undefined ? apply : [...apply, ...lpx.apply], create, scale: gate.blocked ? [] : pending, generation, state, ready, eventType: combined.isFailed ? 'Warning' : 'Normal', scaling, components, checkpoints: checkpointStatuses(dgd) },
    now,
  );
  if (commit.annotate === undefined) return desired;
  return {
    ...desired,
    parentAnnotations: { [ANNOTATION_CURRENT_WORKER_HASH_V2]: commit.annotate },
    ...(commit.removeLegacy ? { removeParentAnnotations: [ANNOTATION_CURRENT_WORKER_HASH] } : {}),
    ...(commit.migrated ? { parentAnnotationsEvent: workerHashMigratedEvent(observed.parent, dgd.metadata.annotations?.[ANNOTATION_CURRENT_WORKER_HASH] ?? '', commit.annotate) } : {}),
  };
}

/**
 * The `WorkerHashMigrated` Event (Normal, upstream's note) of recording v2 beside v1, named
 * `<dgd>.<16 hex>` from the DGD uid and both hashes, so a repeated decision names the same Event. Pure.
 */
function workerHashMigratedEvent(parent: ObservedObject, v1: string, v2: string): DgdEventIntent {
  const key = [readUid(parent), REASON_WORKER_HASH_MIGRATED, v1, v2].join('\u0000');
  const hex = fnv32a(key).toString(16).padStart(8, '0') + fnv32a(`${key}\u0001`).toString(16).padStart(8, '0');
  const name = (parent['metadata'] as { name?: unknown } | undefined)?.name;
  return { name: `${(typeof name === 'string' ? name : 'dgd').slice(0, 253 - 17)}.${hex}`, type: 'Normal', reason: REASON_WORKER_HASH_MIGRATED, note: MESSAGE_WORKER_HASH_MIGRATED };
}

/**
 * The worker-hash commit (upstream-notes/dgd.md §4.7 step 3, §4.3 "Where the hash is carried"):
 * the rendered hash becomes the committed one (`nvidia.com/current-worker-hash-v2`) only when
 * this pass did not write the PodCliqueSet, Grove acknowledged it (`status.observedGeneration`
 * = generation), no update is active, and every worker child is observed at its generation
 * with all its desired replicas updated. Until then the committed hash stays the annotated one
 * (v2, else the legacy v1 `nvidia.com/current-worker-hash`, else, on a DGD that has neither, the
 * rendered one: its first workers run it).
 * The legacy v1 annotation, as upstream's `dgd_worker_rollout_reconciler.go` keeps it:
 * - a DGD with v1 only (not the `legacy` sentinel) gets v2 recorded beside it at once, the
 *   rendered hash, v1 kept, without waiting for a rollout (`migrateCurrentWorkerHashIfNeeded`:
 *   "Record the current desired state as v2 without changing the active v1 suffix"), with a
 *   `WorkerHashMigrated` Event;
 * - once a new worker generation is committed (v2 changes), v1 is removed: a completed v2
 *   generation is recorded as v2 alone (`workerHashesForCompletedGeneration`).
 * Out: `committed` (what runtimeNamespace uses), `annotate` (the v2 value to write, when it
 * differs from the stored one), `removeLegacy`, `migrated` and `rolledOut` (the rendered
 * generation runs on every worker). Pure.
 */
export function decideWorkerHashCommit(
  dgd: Dgd,
  observed: DgdObserved,
  pcs: PodCliqueSet | undefined,
  written: boolean,
  rendered: string,
): { committed: string; annotate: string | undefined; removeLegacy: boolean; migrated: boolean; rolledOut: boolean } {
  const stored = dgd.metadata.annotations?.[ANNOTATION_CURRENT_WORKER_HASH_V2];
  const storedV1 = dgd.metadata.annotations?.[ANNOTATION_CURRENT_WORKER_HASH];
  const hasV1 = storedV1 !== undefined && storedV1 !== '';
  const workers = dgd.spec.components.filter((c) => c.type !== 'lpx' && isWorkerClass(c));
  const active = stored ?? (hasV1 && storedV1 !== LEGACY_WORKER_HASH_SENTINEL ? storedV1 : undefined);
  if (workers.length === 0) return { committed: active ?? rendered, annotate: undefined, removeLegacy: false, migrated: false, rolledOut: false };
  if (stored === undefined && hasV1 && storedV1 !== LEGACY_WORKER_HASH_SENTINEL) {
    return { committed: storedV1, annotate: rendered, removeLegacy: false, migrated: true, rolledOut: false };
  }
  const pcsName = podCliqueSetName(dgd.metadata.name ?? '', dgd.spec.components.filter((c) => c.type !== 'lpx'));
  const isRolledOut =
    !written &&
    pcs !== undefined &&
    isGenerationAcknowledged(pcs) &&
    !isRolloutActive(pcs) &&
    workers.every((component) => {
      const target = componentChild(pcsName, component);
      const child = usesScalingGroup(component) ? observed.children.PodCliqueScalingGroup.get(target.name) : observed.children.PodClique.get(target.name);
      if (child === undefined) return false;
      const status = child.status ?? {};
      const desired = component.replicas ?? child.spec.replicas;
      return status.observedGeneration !== undefined && status.observedGeneration >= (child.metadata.generation ?? 0) && (status.updatedReplicas ?? 0) >= desired;
    });
  const committed = isRolledOut ? rendered : (active ?? rendered);
  const annotate = isRolledOut && stored !== rendered ? rendered : undefined;
  return { committed, annotate, removeLegacy: annotate !== undefined && hasV1, migrated: false, rolledOut: isRolledOut };
}

/**
 * `status.components[*].runtimeNamespace`: the component's Dynamo namespace, and for a
 * worker-class component `<dynamo namespace>-<committed worker hash>` (upstream-notes/dgd.md
 * §4.3: "The status runtimeNamespace = <dynamoNamespace>-<hash> for workers"); the bare Dynamo
 * namespace for workers whose pods run without `DYN_NAMESPACE_WORKER_SUFFIX` (`committedHash`
 * undefined: a PodCliqueSet an older upstream operator wrote, worker-hash-suffix.ts), since the
 * runtime then registers under `DYN_NAMESPACE` alone. Pure.
 */
export function withRuntimeNamespaces(dgd: Dgd, components: Record<string, Record<string, unknown>>, committedHash: string | undefined): Record<string, Record<string, unknown>> {
  const namespace = dgd.metadata.namespace ?? '';
  const out: Record<string, Record<string, unknown>> = {};
  for (const [name, entry] of Object.entries(components)) {
    const component = dgd.spec.components.find((c) => c.name === name);
    if (component === undefined) {
      out[name] = entry;
      continue;
    }
    const base = dynamoNamespace(dgd, namespace, component);
    out[name] = { ...entry, runtimeNamespace: isWorkerClass(component) && committedHash !== undefined ? `${base}-${committedHash}` : base };
  }
  return out;
}

/**
 * The status to report while a write keeps failing (an apply or scale write refused, or an
 * API error): "Unexpected API or admission failures ... report Failed with Ready=False while
 * the failure persists" (dgd-reference "Coherent capacity and disruption"). In: the observed
 * state, the time, and the API server's message(s). Out: nothing to apply
 * or scale; state `failed`; `Ready=False`, reason `failed_to_reconcile_the_resources`, the message
 * as given; component status still from the observed children; `observedGeneration` not
 * advanced; a `ScalingDeferred` condition already reported is kept as it is. Pure.
 */
export function decideDgdFailure(observed: DgdObserved, now: Date, message: string): DgdDesired {
  const parsed = parseDgd(observed.parent);
  let components: Record<string, Record<string, unknown>> | undefined;
  if (parsed.ok) {
    const ordinary = parsed.dgd.spec.components.filter((c) => c.type !== 'lpx');
    const pcsName = podCliqueSetName(parsed.dgd.metadata.name ?? '', ordinary);
    const pcsObject = observed.children.PodCliqueSet.get(pcsName);
    const ours = pcsObject !== undefined && isControlledByParent(pcsObject as OwnedObject, readUid(observed.parent));
    if (ours || pcsObject === undefined) components = evaluateReadiness(parsed.dgd, observed, ours ? readPodCliqueSet(pcsObject) : undefined, false).components;
  }
  return finish(
    observed,
    { apply: [], scale: [], generation: readObservedGeneration(observed.parent), state: 'failed', ready: { status: 'False', reason: REASON_FAILED_TO_RECONCILE, message }, eventType: 'Warning', scaling: 'keep', components, checkpoints: parsed.ok ? checkpointStatuses(parsed.dgd) : undefined },
    now,
  );
}

function invalid(observed: DgdObserved, issues: readonly FieldIssue[], lastReconciled: number | undefined, now: Date): DgdDesired {
  const message = formatIssues(issues);
  const desired = finish(observed, { apply: [], scale: [], generation: lastReconciled, state: 'failed', ready: { status: 'False', reason: REASON_INVALID_SPEC, message }, eventType: 'Warning', scaling: 'keep', components: undefined }, now);
  return { ...desired, permanentFailure: { reason: REASON_INVALID_SPEC, message } };
}

interface Verdict {
  readonly apply: readonly RenderedObject[];
  readonly create?: readonly RenderedObject[];
  readonly scale: readonly ScaleIntent[];
  readonly generation: number | undefined;
  readonly state: DgdStatusIntent['state'];
  readonly ready: ReadyCondition;
  readonly eventType: 'Normal' | 'Warning';
  /**
   * ScalingDeferred: `deferred` (True), `allowed` (False), or `keep` (as it was, absent if it
   * was absent: a pass that did not get as far as judging scaling).
   */
  readonly scaling: 'deferred' | 'allowed' | 'keep' | { readonly deferredBy: { readonly reason: string; readonly message: string } };
  readonly components: Record<string, Record<string, unknown>> | undefined;
  /** `status.checkpoints` (checkpoints.ts); absent when no component has a checkpoint. */
  readonly checkpoints?: Record<string, ComponentCheckpointStatus> | undefined;
}

function finish(observed: DgdObserved, verdict: Verdict, now: Date): DgdDesired {
  const previous = readConditions(observed.parent);
  const generation = readGeneration(observed.parent);
  const beforeReady = previous.find((c) => c.type === CONDITION_READY);
  const readyCondition = condition(CONDITION_READY, verdict.ready, beforeReady, generation, now);
  const conditions: Condition[] = [readyCondition];
  const beforeDeferred = previous.find((c) => c.type === CONDITION_SCALING_DEFERRED);
  if (verdict.scaling === 'deferred') {
    conditions.push(condition(CONDITION_SCALING_DEFERRED, { status: 'True', reason: REASON_COHERENT_UPDATE_IN_PROGRESS, message: MESSAGE_COHERENT_UPDATE_IN_PROGRESS }, beforeDeferred, generation, now));
  } else if (typeof verdict.scaling === 'object') {
    conditions.push(condition(CONDITION_SCALING_DEFERRED, { status: 'True', ...verdict.scaling.deferredBy }, beforeDeferred, generation, now));
  } else if (verdict.scaling === 'allowed') {
    // Upstream writes False only if the condition was present before (upstream-notes/dgd.md
    // §4.7 step 6); we always report it once scaling was judged, so the status is a function of
    // what is observed now, not of the path taken (STYLE.md §7; the convergence property of
    // test/unit/reconcile-convergence.test.ts found the difference).
    conditions.push(condition(CONDITION_SCALING_DEFERRED, { status: 'False', reason: REASON_SCALING_ALLOWED, message: MESSAGE_SCALING_ALLOWED }, beforeDeferred, generation, now));
  } else if (beforeDeferred !== undefined) {
    conditions.push(beforeDeferred);
  }
  const status: DgdStatusIntent = {
    observedGeneration: verdict.generation,
    state: verdict.state,
    conditions,
    ...(verdict.components === undefined ? {} : { components: verdict.components }),
    ...(verdict.checkpoints === undefined ? {} : { checkpoints: verdict.checkpoints }),
  };
  const transitioned = beforeReady === undefined || beforeReady.status !== verdict.ready.status || beforeReady.reason !== verdict.ready.reason;
  const events: DgdEventIntent[] = transitioned
    ? [{ name: readyEventName(observed.parent, beforeReady, verdict.ready), type: verdict.eventType, reason: verdict.ready.reason, note: verdict.ready.message.slice(0, 1024) }]
    : [];
  return { apply: verdict.apply, create: verdict.create ?? [], scale: verdict.scale, status, events };
}

/** A condition keeping the time of its last status flip, so re-deciding the same state writes nothing new. */
function condition(type: string, value: ReadyCondition, before: Condition | undefined, generation: number | undefined, now: Date): Condition {
  const flipped = before === undefined || before.status !== value.status;
  return {
    type,
    status: value.status,
    reason: value.reason,
    message: value.message,
    lastTransitionTime: flipped ? toKubeTime(now) : before.lastTransitionTime,
    ...(generation === undefined ? {} : { observedGeneration: generation }),
  };
}

/**
 * The Event name of one Ready transition: `<dgd>.<16 hex>`, hashing the DGD uid, the Ready
 * condition before (status, reason, lastTransitionTime) and the Ready status and reason after.
 * The same transition decided twice (a duplicate event, a retry, a second replica of the
 * function) gives the same name. Pure.
 */
export function readyEventName(parent: ObservedObject, before: Condition | undefined, after: ReadyCondition): string {
  const key = [readUid(parent), before?.status ?? '', before?.reason ?? '', before?.lastTransitionTime ?? '', after.status, after.reason].join('\u0000');
  const hex = (fnv32a(key).toString(16).padStart(8, '0') + fnv32a(`${key}\u0001`).toString(16).padStart(8, '0'));
  const name = (parent['metadata'] as { name?: unknown } | undefined)?.name;
  return `${(typeof name === 'string' ? name : 'dgd').slice(0, 253 - 17)}.${hex}`;
}

/**
 * Per component, the Grove child that carries it (`<pcs>-0-<lower(component)>`, a PodClique
 * or a PodCliqueScalingGroup) judged by upstream's table (upstream-notes/dgd.md §4.7 step 5):
 * not found -> not ready ("resource not found"); observed generation behind -> "updating";
 * desired 0 -> ready; PodClique ready iff replicas = updated = ready = desired; scaling group
 * uses available instead of ready. Desired is the component's `replicas`, else the child's
 * own `spec.replicas` (an external scaler owns it).
 * Not fooled by old pods during a rollout: while the PodCliqueSet has a write not yet
 * observed, has not been acknowledged by Grove (`status.observedGeneration` behind
 * `metadata.generation`) or has an active rollout (`updateProgress` without `updateEndedAt`),
 * a component whose child looks ready is reported "updating" instead: its Ready pods may all
 * be of the previous generation. Pure.
 */
export function evaluateReadiness(
  dgd: Dgd,
  observed: DgdObserved,
  pcs: PodCliqueSet | undefined = readPodCliqueSet(observed.children.PodCliqueSet.get(podCliqueSetName(dgd.metadata.name ?? '', dgd.spec.components.filter((c) => c.type !== 'lpx')))),
  written = false,
): { notReady: string[]; reasons: string[]; components: Record<string, Record<string, unknown>> } {
  const ordinary = dgd.spec.components.filter((c) => c.type !== 'lpx');
  const pcsName = podCliqueSetName(dgd.metadata.name ?? '', ordinary);
  const rolling = written || (pcs !== undefined && (!isGenerationAcknowledged(pcs) || isRolloutActive(pcs)));
  const notReady: string[] = [];
  const reasons: string[] = [];
  const components: Record<string, Record<string, unknown>> = {};
  const note = (component: string, reason: string, text: string = reason): void => {
    notReady.push(`${component}: ${text}`);
    reasons.push(reason);
  };
  for (const component of ordinary) {
    const target = componentChild(pcsName, component);
    const isGroup = usesScalingGroup(component);
    const child = isGroup ? observed.children.PodCliqueScalingGroup.get(target.name) : observed.children.PodClique.get(target.name);
    if (child === undefined) {
      note(component.name, REASON_RESOURCES_NOT_READY, 'resource not found');
      components[component.name] = { componentKind: target.kind, componentNames: [target.name], replicas: 0, updatedReplicas: 0 };
      continue;
    }
    const desired = component.replicas ?? child.spec.replicas;
    const status = child.status ?? {};
    const replicas = status.replicas ?? 0;
    const updated = status.updatedReplicas ?? 0;
    const readyCount = isGroup ? ((status as { availableReplicas?: number }).availableReplicas ?? 0) : ((status as { readyReplicas?: number }).readyReplicas ?? 0);
    components[component.name] = {
      componentKind: target.kind,
      componentNames: [target.name],
      replicas,
      updatedReplicas: updated,
      ...(isGroup ? { availableReplicas: readyCount } : { readyReplicas: readyCount }),
      ...((status as { scheduledReplicas?: number }).scheduledReplicas === undefined ? {} : { scheduledReplicas: (status as { scheduledReplicas?: number }).scheduledReplicas }),
    };
    const generationBehind = status.observedGeneration === undefined || status.observedGeneration < (child.metadata.generation ?? 0);
    if (generationBehind) note(component.name, REASON_UPDATING);
    else if (desired === 0) continue;
    else if (!(replicas === desired && updated === desired && readyCount === desired)) note(component.name, classifyNotReady(child, desired, replicas, updated));
    else if (rolling) note(component.name, REASON_UPDATING);
  }
  return { notReady, reasons, components };
}

/**
 * Why a Grove child that is observed but short of `desired` is not ready (upstream
 * `pcsgStatusReady` and its PodClique counterpart; upstream-notes/dgd.md §4.7 step 5):
 * `insufficient_capacity` on a capacity signal (schedule-gated pods; `PodCliqueScheduled=False`
 * reason `InsufficientScheduledPods`; `MinAvailableBreached=False` with reason
 * `ScheduledReplicasBelowMinAvailable`/`InsufficientScheduledPCSGReplicas`; 0 < scheduled <
 * desired), else `updating` while updated or current replicas differ from desired, else
 * `pods_not_ready`. Pure.
 */
export function classifyNotReady(child: PodClique | PodCliqueScalingGroup, desired: number, replicas: number, updated: number): string {
  const status = (child.status ?? {}) as { scheduledReplicas?: number; scheduleGatedReplicas?: number; conditions?: readonly Condition[] };
  const conditions = status.conditions ?? [];
  const scheduled = status.scheduledReplicas ?? 0;
  const isCapacityShort =
    (status.scheduleGatedReplicas ?? 0) > 0 ||
    conditions.some((c) => c.type === 'PodCliqueScheduled' && c.status === 'False' && c.reason === 'InsufficientScheduledPods') ||
    conditions.some((c) => c.type === 'MinAvailableBreached' && c.status === 'False' && (c.reason === 'ScheduledReplicasBelowMinAvailable' || c.reason === 'InsufficientScheduledPCSGReplicas')) ||
    (scheduled > 0 && scheduled < desired);
  if (isCapacityShort) return REASON_INSUFFICIENT_CAPACITY;
  if (updated !== desired || replicas !== desired) return REASON_UPDATING;
  return REASON_PODS_NOT_READY;
}

/** The Ready reason of not-ready components: their shared reason, else `mixed_not_ready_reasons` (upstream-notes/dgd.md §4.7 step 5). Pure. */
export function aggregateNotReadyReason(reasons: readonly string[]): string {
  const distinct = new Set(reasons);
  if (distinct.size === 1) return reasons[0] ?? REASON_RESOURCES_NOT_READY;
  return distinct.size === 0 ? REASON_RESOURCES_NOT_READY : REASON_MIXED_NOT_READY;
}

function readGeneration(parent: ObservedObject): number | undefined {
  const generation = (parent['metadata'] as { generation?: unknown } | undefined)?.generation;
  return typeof generation === 'number' ? generation : undefined;
}

function readObservedGeneration(parent: ObservedObject): number | undefined {
  const value = (parent['status'] as { observedGeneration?: unknown } | undefined)?.observedGeneration;
  return typeof value === 'number' ? value : undefined;
}

function readUid(parent: ObservedObject): string {
  const uid = (parent['metadata'] as { uid?: unknown } | undefined)?.uid;
  return typeof uid === 'string' ? uid : '';
}

function readConditions(parent: ObservedObject): readonly Condition[] {
  const conditions = (parent['status'] as { conditions?: unknown } | undefined)?.conditions;
  return Array.isArray(conditions) ? (conditions as Condition[]) : [];
}
