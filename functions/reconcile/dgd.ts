/**
 * Reconciles one DynamoGraphDeployment.
 *
 * Takes: `dev.knative.apiserver.{resource,ref}.{add,update,delete}` and `dev.dynamo-fn.resync`
 * events for kind `DynamoGraphDeployment` (group `nvidia.com`); and the same API events for its
 * children, `PodCliqueSet`, `PodClique`, `PodCliqueScalingGroup` (`grove.io`) and `Service`
 * (core), which are mapped to the owning DGD through controller references (Resource mode,
 * so a deleted child still names its owner; infra/reconcile/events.yaml).
 * Reads: the DGD now (the event's copy may be stale); the objects of its rendered PodCliqueSet,
 * Service, Kubernetes discovery ServiceAccount/Role/RoleBinding and intra-pod GMS
 * ResourceClaimTemplate names and of its v1alpha1
 * PVCs to create, whoever controls them; the Grove PodCliques and PodCliqueScalingGroups of
 * its PodCliqueSet (label `app.kubernetes.io/part-of=<pcs>`), of which only those the
 * PodCliqueSet controls, or one of its scaling groups, count (`selectGroveChildren`).
 * Decides: `decideDgd` / `decideDgdFailure` (shared/domain, pure).
 * Writes: server-side apply of the PodCliqueSet, component Services, discovery
 * ServiceAccount/Role/RoleBinding and GMS ResourceClaimTemplates this DGD controls (never an object it does not), a create of
 * each v1alpha1 PVC (`create: true`) that does not exist (never an apply over one), then replica changes through the children's `scale` subresources
 * (unless the Coherent gate holds them back), then the DGD status through the status
 * subresource, then one Event per Ready transition; field manager `dynamo-reconcile`. Only what
 * differs from the stored objects is written (`decideDgdWrites`: a child whose fields we own
 * are as rendered is not applied, an unchanged status is not written, and has no Event), so a
 * pass that finds nothing to change writes nothing; reads, applies, creates and scales that do
 * not depend on each other go out together. On a resync the reads are answered from one LIST per
 * kind (./resync.ts). Nothing
 * is written for a DGD that is gone or under deletion; a pass that finds the DGD gone at its
 * status write removes what it created itself.
 * Answers: Done; Permanent when the spec is invalid, a rendered name is taken by an object we do
 * not control, or the API server refuses what we rendered (each reported on status, never
 * retried by the broker); Transient (after reporting Failed on status) on API errors that may
 * pass, the first time: a failure already on the status is left to the resync.
 * @module
 */
import {
  DGD_KIND,
  DGD_V1BETA1,
  GROVE_API_VERSION,
  LABEL_GROVE_PART_OF,
  LPXGD_API_VERSION,
  LPXGD_KIND,
  PODCLIQUESCALINGGROUP_KIND,
  PODCLIQUESET_KIND,
  PODCLIQUE_KIND,
  PodCliqueScalingGroupSchema,
  PodCliqueSchema,
  PERSISTENT_VOLUME_CLAIM_KIND,
  parseDgd,
  type Component,
  type Dgd,
  type PodClique,
  type PodCliqueScalingGroup,
} from '../../shared/api/index.js';
import {
  GROVE_PODCLIQUESET_CRD_NAME,
  REASON_FAILED_TO_RECONCILE,
  childOwner,
  isGroveCoherentSupported,
  selectGroveChildren,
  resolveUpdateStrategy,
  componentServiceName,
  decideDgd,
  decideDgdFailure,
  decideDgdWrites,
  dgdStatusApply,
  gmsResourceClaimTemplateName,
  gpuMemoryServiceMode,
  k8sDiscoveryServiceAccountName,
  RESOURCE_API_VERSION,
  RESOURCE_CLAIM_TEMPLATE_KIND,
  podCliqueSetName,
  providedAlphaPvcNames,
  renderAlphaPvcs,
  usesK8sDiscoveryServiceAccount,
  type DgdDesired,
  type DgdEventIntent,
  type DgdObserved,
  type ObservedObject,
  type QuietPassRecords,
  type RenderConfig,
  type RenderedObject,
} from '../../shared/domain/index.js';
import { isResourceVersionConflict, type Kube, type KubeObject, type ObjectRef } from '../../shared/kube/index.js';
import type { ModelExpressClient } from './model-express.js';
import { DONE, PermanentError, TransientError, type HandlerDeps, type KubeEvent, type ObjectKey, type Outcome, type Route } from '../../shared/runtime/index.js';

export interface ReconcileDeps extends HandlerDeps {
  readonly kube: Kube;
  readonly render: RenderConfig;
  /** Events' `reportingInstance` (the pod or revision name). */
  readonly instance: string;
  /** The Model Express client `gs://` LPX builds go through (`MODEL_EXPRESS_URL`); undefined: none configured. */
  readonly modelExpress?: ModelExpressClient | undefined;
  /**
   * This process's records of quiet DGDs (./quiet.ts): an event for a DGD its last full pass
   * here found converged costs one read. Undefined (a resync's passes, replay): every event is
   * the full pass.
   */
  readonly quietPasses?: QuietPassRecords | undefined;
}

const REPORTING_CONTROLLER = 'nvidia.com/dynamo-reconcile';
const RBAC_API_VERSION = 'rbac.authorization.k8s.io/v1';

/** The binding: DGD events (any version of group nvidia.com) and the DGD resync. */
export const route: Route<ReconcileDeps> = { apiVersion: DGD_V1BETA1, kind: DGD_KIND, handle, listKeys };

/** The kinds whose events are mapped to their owning DGD (no resync of their own: the DGD resync covers them). */
export const CHILD_KINDS = [
  { apiVersion: GROVE_API_VERSION, kind: PODCLIQUESET_KIND },
  { apiVersion: GROVE_API_VERSION, kind: PODCLIQUE_KIND },
  { apiVersion: GROVE_API_VERSION, kind: PODCLIQUESCALINGGROUP_KIND },
  { apiVersion: 'v1', kind: 'Service' },
] as const;

/** One binding per child kind: each maps the child to its DGD and reconciles that DGD. */
export const childRoutes: readonly Route<ReconcileDeps>[] = CHILD_KINDS.map((kind) => ({ ...kind, handle: handleChild }));

/** Loads the DGD and the objects of its rendered names; undefined when the DGD is gone. */
export async function load(deps: ReconcileDeps, key: ObjectKey): Promise<DgdObserved | undefined> {
  const parent = await deps.kube.get({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace: key.namespace, name: key.name });
  if (parent === undefined) return undefined;
  const children: DgdObserved['children'] & { PodCliqueSet: Map<string, ObservedObject>; Service: Map<string, ObservedObject>; PodClique: Map<string, PodClique>; PodCliqueScalingGroup: Map<string, PodCliqueScalingGroup>; LPXGraphDeployment?: ObservedObject | undefined } = {
    PodCliqueSet: new Map<string, ObservedObject>(),
    Service: new Map<string, ObservedObject>(),
    PodClique: new Map<string, PodClique>(),
    PodCliqueScalingGroup: new Map<string, PodCliqueScalingGroup>(),
  };
  const parsed = parseDgd(parent);
  if (!parsed.ok) return { parent, children };
  const ordinary = parsed.dgd.spec.components.filter((c) => c.type !== 'lpx');
  const pcsName = podCliqueSetName(key.name, ordinary);
  const selector = { labelSelector: `${LABEL_GROVE_PART_OF}=${pcsName}` };
  const serviceNames = ordinary.map((c) => componentServiceName(parsed.dgd, c));
  // Every read after the DGD's depends only on the DGD: they go out together.
  // The Coherent capability check reads the Grove PodCliqueSet CRD, only for a DGD selecting Coherent.
  const strategy = resolveUpdateStrategy(parsed.dgd);
  const [lpxgd, pcs, services, cliques, groups, identityAndClaims, groveCoherentSupported] = await Promise.all([
    // LPX (issue 11): read the LPXGraphDeployment only while lpx.enabled; disabled, nothing LPX is read or written.
    deps.config.lpxEnabled && parsed.dgd.spec.components.some((c) => c.type === 'lpx') ? deps.kube.get({ apiVersion: LPXGD_API_VERSION, kind: LPXGD_KIND, namespace: key.namespace, name: key.name }).then((object) => ({ object })) : Promise.resolve(undefined),
    deps.kube.get({ apiVersion: GROVE_API_VERSION, kind: PODCLIQUESET_KIND, namespace: key.namespace, name: pcsName }),
    Promise.all(serviceNames.map((name) => deps.kube.get({ apiVersion: 'v1', kind: 'Service', namespace: key.namespace, name }))),
    deps.kube.list(GROVE_API_VERSION, PODCLIQUE_KIND, key.namespace, selector),
    deps.kube.list(GROVE_API_VERSION, PODCLIQUESCALINGGROUP_KIND, key.namespace, selector),
    loadIdentityAndClaims(deps, key.namespace, parsed.dgd, ordinary),
    strategy.ok && strategy.strategy === 'Coherent'
      ? deps.kube.get({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: GROVE_PODCLIQUESET_CRD_NAME }).then(isGroveCoherentSupported)
      : Promise.resolve(undefined),
  ]);
  if (lpxgd !== undefined) children.LPXGraphDeployment = lpxgd.object;
  if (pcs !== undefined) children.PodCliqueSet.set(pcsName, pcs);
  for (const service of services) if (service !== undefined) children.Service.set(service.metadata.name, service);
  Object.assign(children, identityAndClaims);
  // Only the PodCliqueSet's own children (issue 20): a clique or scaling group someone else planted at a rendered name is never read nor scaled.
  const grove = selectGroveChildren(pcs?.metadata.uid, groups, cliques);
  for (const object of grove.podCliques) {
    const child = PodCliqueSchema.safeParse(object);
    if (child.success) children.PodClique.set(object.metadata.name, child.data);
  }
  for (const object of grove.scalingGroups) {
    const child = PodCliqueScalingGroupSchema.safeParse(object);
    if (child.success) children.PodCliqueScalingGroup.set(object.metadata.name, child.data);
  }
  return { parent, children, ...(groveCoherentSupported === undefined ? {} : { groveCoherentSupported }) };
}

/**
 * The objects of the Kubernetes discovery ServiceAccount, Role and RoleBinding names (when the
 * DGD renders them) and of the v1alpha1 claims it creates or names for the user to provide, by
 * kind and name, whoever controls them (ownership: never adopt; an existing claim is used as it is).
 */
async function loadIdentityAndClaims(deps: ReconcileDeps, namespace: string, dgd: Dgd, ordinary: readonly Component[]): Promise<Record<string, Map<string, ObservedObject>>> {
  const refs = identityAndClaimRefs(deps, namespace, dgd, ordinary);
  const found = await Promise.all(refs.map((ref) => deps.kube.get(ref)));
  const byKind: Record<string, Map<string, ObservedObject>> = {};
  refs.forEach((ref, index) => {
    const object = found[index];
    const map = (byKind[ref.kind] ??= new Map<string, ObservedObject>());
    if (object !== undefined) map.set(ref.name, object);
  });
  return byKind;
}

/**
 * The names a DGD pass reads besides its PodCliqueSet and Services: the Kubernetes discovery
 * ServiceAccount, Role and RoleBinding (when the DGD renders them), each intra-pod GMS
 * ResourceClaimTemplate, and the v1alpha1 claims it creates or names for the user to provide.
 */
export function identityAndClaimRefs(deps: Pick<ReconcileDeps, 'render'>, namespace: string, dgd: Dgd, ordinary: readonly Component[]): ObjectRef[] {
  const refs: ObjectRef[] = [];
  if (usesK8sDiscoveryServiceAccount(dgd, ordinary, deps.render)) {
    const account = k8sDiscoveryServiceAccountName(dgd.metadata.name ?? '');
    refs.push(
      { apiVersion: 'v1', kind: 'ServiceAccount', namespace, name: account },
      { apiVersion: RBAC_API_VERSION, kind: 'Role', namespace, name: `${account}-role` },
      { apiVersion: RBAC_API_VERSION, kind: 'RoleBinding', namespace, name: `${account}-binding` },
    );
  }
  for (const component of ordinary) {
    if (gpuMemoryServiceMode(component) === 'IntraPod') refs.push({ apiVersion: RESOURCE_API_VERSION, kind: RESOURCE_CLAIM_TEMPLATE_KIND, namespace, name: gmsResourceClaimTemplateName(dgd.metadata.name ?? '', component.name) });
  }
  const claimNames = [...renderAlphaPvcs(dgd, (name) => ({ name })).objects.map((claim) => (claim['metadata'] as { name: string }).name), ...providedAlphaPvcNames(dgd)];
  for (const name of new Set(claimNames)) refs.push({ apiVersion: 'v1', kind: PERSISTENT_VOLUME_CLAIM_KIND, namespace, name });
  return refs;
}

/**
 * Creates the decision's create-only objects (the v1alpha1 PVCs that do not exist yet), each on
 * its own; one that appeared meanwhile (409 AlreadyExists) is left as it is.
 */
async function createAll(deps: ReconcileDeps, desired: DgdDesired): Promise<Error[]> {
  const results = await Promise.all(
    desired.create.map(async (object) => {
      try {
        const stored = await deps.kube.create(object);
        if (stored !== undefined) deps.log.info({ kind: object.kind, namespace: object.metadata.namespace, name: object.metadata.name }, `Created ${object.kind}`);
        return undefined;
      } catch (error) {
        return asShellError(error);
      }
    }),
  );
  return results.filter((failure) => failure !== undefined);
}

/**
 * Applies the objects that differ from the stored ones (`decideDgdWrites`), each on its own and
 * all at once (one refused Service does not keep the PodCliqueSet from being written; none
 * depends on another's write). Out: whether the PodCliqueSet changed (created, or a new
 * resourceVersion), and the failures.
 */
async function applyAll(deps: ReconcileDeps, observed: DgdObserved, objects: readonly RenderedObject[]): Promise<{ podCliqueSetWritten: boolean; failures: Error[]; created: CreatedObject[] }> {
  let podCliqueSetWritten = false;
  // By the intent's position, so the reported message does not depend on which answer came first.
  const failuresAt: (Error | undefined)[] = [];
  const created: CreatedObject[] = [];
  const applyOne = async (object: RenderedObject, index: number): Promise<void> => {
      try {
        // Only objects this DGD controls are in the decision: force takes back a field someone
        // changed by hand, as a controller's apply does.
        const stored = await deps.kube.apply(object, { force: true });
        // Only the PodCliqueSet and Services are undone by hand; the discovery identity is left to
        // the garbage collector (the DGD is its controller), so the role needs no delete on it.
        const seen = object.kind === PODCLIQUESET_KIND ? observed.children.PodCliqueSet : object.kind === 'Service' ? observed.children.Service : undefined;
        if (seen !== undefined && !seen.has(object.metadata.name)) {
          created.push({ ref: { apiVersion: object.apiVersion, kind: object.kind, namespace: object.metadata.namespace, name: object.metadata.name }, resourceVersion: stored.metadata.resourceVersion });
        }
        if (object.kind === PODCLIQUESET_KIND) {
          const before = observed.children.PodCliqueSet.get(object.metadata.name)?.['metadata'] as { resourceVersion?: string } | undefined;
          podCliqueSetWritten = before?.resourceVersion !== stored.metadata.resourceVersion;
        }
        deps.log.debug({ kind: object.kind, namespace: object.metadata.namespace, name: object.metadata.name, resourceVersion: stored.metadata.resourceVersion }, `Applied ${object.kind}`);
      } catch (error) {
        failuresAt[index] = asShellError(error);
      }
  };
  // Two waves: a RoleBinding goes out after the Roles. Without `bind`, the API server's RBAC
  // escalation check resolves the referenced Role, so it must exist first (404 otherwise).
  const isRoleBinding = (object: RenderedObject) => object.kind === 'RoleBinding';
  await Promise.all(objects.map((object, index) => (isRoleBinding(object) ? undefined : applyOne(object, index))));
  await Promise.all(objects.map((object, index) => (isRoleBinding(object) ? applyOne(object, index) : undefined)));
  return { podCliqueSetWritten, failures: failuresAt.filter((failure) => failure !== undefined), created };
}

/** An object this pass created (it did not exist when loaded), at the version the create stored. */
interface CreatedObject {
  readonly ref: ObjectRef;
  readonly resourceVersion: string | undefined;
}

/**
 * The DGD went away while this pass ran (its status write was answered 404): removes what the
 * pass itself created, each only at the version it stored (a precondition, so nothing anyone
 * else wrote is deleted), instead of leaving it to the garbage collector. Best effort, quiet.
 */
async function undoCreations(deps: ReconcileDeps, created: readonly CreatedObject[]): Promise<void> {
  for (const { ref, resourceVersion } of created) {
    try {
      await deps.kube.delete(ref, resourceVersion === undefined ? {} : { resourceVersion });
    } catch (error) {
      deps.log.debug({ err: error, kind: ref.kind, name: ref.name }, `Left ${ref.kind} to the garbage collector`);
    }
  }
}

/** Writes replica changes through the children's scale subresources, each on its own. */
async function scaleAll(deps: ReconcileDeps, desired: DgdDesired): Promise<Error[]> {
  const results = await Promise.all(
    desired.scale.map(async (intent) => {
      try {
        await deps.kube.scale({ apiVersion: intent.apiVersion, kind: intent.kind, namespace: intent.namespace, name: intent.name }, intent.replicas);
        deps.log.info({ kind: intent.kind, namespace: intent.namespace, name: intent.name, component: intent.component, replicas: intent.replicas }, `Scaled ${intent.kind}`);
        return undefined;
      } catch (error) {
        return asShellError(error);
      }
    }),
  );
  return results.filter((failure) => failure !== undefined);
}

/**
 * Writes the status, then the Events, when the status differs from the stored one
 * (`decideDgdWrites`: an unchanged status is not written, and has no Event). Out: `gone` when
 * the DGD is gone (the status write was answered 404), `superseded` when it changed since the
 * pass read it (409 on the resourceVersion precondition): nothing more is written in either.
 */
async function report(deps: ReconcileDeps, observed: DgdObserved, desired: DgdDesired): Promise<'reported' | 'gone' | 'superseded'> {
  const writes = decideDgdWrites(observed, desired);
  if (writes.status === undefined) return 'reported';
  const parent = observed.parent as KubeObject;
  // The version read is a precondition: the status was decided from it (a checkpoint another
  // controller made ready since, say), so a DGD changed meanwhile answers 409 and nothing stale
  // is written. That change has its own event (and the resync follows), whose pass decides
  // again on a fresh read: this one ends here, its Events with its status.
  const apply = dgdStatusApply(parent, writes.status);
  const { resourceVersion } = parent.metadata;
  try {
    await deps.kube.applyStatus(resourceVersion === undefined ? apply : { ...apply, metadata: { ...apply.metadata, resourceVersion } }, { force: true });
  } catch (error) {
    if (error instanceof PermanentError && error.reason === 'NotFound') return 'gone';
    if (isResourceVersionConflict(error)) {
      deps.log.debug({ resourceVersion }, 'Left the status to the pass of a newer DynamoGraphDeployment version');
      return 'superseded';
    }
    throw error;
  }
  await Promise.all(writes.events.map((event) => createEvent(deps, parent, event)));
  return 'reported';
}

async function createEvent(deps: ReconcileDeps, parent: KubeObject, event: DgdEventIntent): Promise<void> {
  try {
    await deps.kube.createEvent({
      name: event.name,
      regarding: { apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace: parent.metadata.namespace ?? '', name: parent.metadata.name, ...(parent.metadata.uid === undefined ? {} : { uid: parent.metadata.uid }) },
      type: event.type,
      reason: event.reason,
      note: event.note,
      action: 'Reconcile',
      reportingController: REPORTING_CONTROLLER,
      reportingInstance: deps.instance,
    });
  } catch (error) {
    // One Event per transition: another reconcile already recorded this one.
    if (error instanceof PermanentError && error.reason === 'AlreadyExists') return;
    // The status already carries the transition; a lost Event is not worth failing the pass.
    deps.log.warn({ err: error, reason: event.reason }, 'Failed to create Event');
  }
}

/**
 * Reports a failed write on the DGD (Failed, Ready=False with the API server's message) and
 * answers: Permanent when that same failure was already on the status before this attempt
 * (it persists: left to the resync, so retries stay bounded); else Transient when any failure
 * may pass or `retry` is set (the broker retries with bounded backoff), else Permanent.
 */
async function reportFailure(deps: ReconcileDeps, observed: DgdObserved, failures: readonly Error[], retry: boolean): Promise<Outcome> {
  const message = failures.map((f) => f.message).join('; ');
  const failed = decideDgdFailure(observed, deps.now(), message);
  // Superseded: the failure stands all the same (the newer version's pass meets it and reports it).
  if ((await report(deps, observed, failed)) === 'gone') return goneDuringReconcile(deps);
  if (isAlreadyReported(observed, message)) {
    // The same failure was already on the DGD's status before this attempt: it persists (a
    // full Service IP range, a quota, a webhook denial). The broker stops here; the resync
    // tries again each period. Retries stay bounded and one stuck DGD cannot storm.
    deps.log.info({ err: failures[0], failures: failures.length }, 'Left persistent write failure to the resync');
    return { kind: 'Permanent', reason: REASON_FAILED_TO_RECONCILE, message };
  }
  deps.log.warn({ err: failures[0], failures: failures.length }, 'Reported write failure on DynamoGraphDeployment');
  const transient = failures.find((f) => f instanceof TransientError);
  if (transient !== undefined || retry) {
    const cause = failures.length === 1 ? (failures[0] as Error) : new AggregateError(failures, message);
    return { kind: 'Transient', cause, ...(transient instanceof TransientError && transient.throttled ? { throttled: true } : {}) };
  }
  return { kind: 'Permanent', reason: REASON_FAILED_TO_RECONCILE, message };
}

/** True when the DGD's Ready condition already reports this very failure. */
function isAlreadyReported(observed: DgdObserved, message: string): boolean {
  const conditions = (observed.parent['status'] as { conditions?: unknown } | undefined)?.conditions;
  if (!Array.isArray(conditions)) return false;
  return conditions.some((c: { type?: unknown; reason?: unknown; message?: unknown }) => c.type === 'Ready' && c.reason === REASON_FAILED_TO_RECONCILE && c.message === message);
}

function goneDuringReconcile(deps: ReconcileDeps): Outcome {
  deps.log.debug({}, 'DynamoGraphDeployment was deleted during reconcile');
  return DONE;
}

/**
 * load -> decideDgd -> apply -> (decide again if the PodCliqueSet was written) -> scale ->
 * status -> Events. Never branches on the event type: the event only names the DGD.
 */
export async function handle(event: KubeEvent, deps: ReconcileDeps): Promise<Outcome> {
  const observed = await load(deps, event.key);
  if (observed === undefined) return DONE; // Gone: its children go with it (owner references).
  const parent = observed.parent as KubeObject;
  if (parent.metadata['deletionTimestamp'] !== undefined) {
    deps.log.debug({}, 'Skipped DynamoGraphDeployment under deletion');
    return DONE;
  }
  let desired = decideDgd(observed, deps.render, deps.now());
  // Only what differs from the stored objects is written: a quiet pass writes nothing.
  const writes = decideDgdWrites(observed, desired);
  if (writes.reasons.length > 0) deps.log.debug({ writes: writes.reasons }, 'Decided writes');
  const [applied, createFailures] = await Promise.all([applyAll(deps, observed, writes.apply), createAll(deps, desired)]);
  if (applied.failures.length > 0 || createFailures.length > 0) return reportFailure(deps, observed, [...applied.failures, ...createFailures], false);
  // "after a write, waits for its cache to observe that configuration" (dgd-reference): the
  // PodCliqueSet event this write causes resumes scaling.
  if (applied.podCliqueSetWritten) desired = decideDgd({ ...observed, podCliqueSetWritten: true }, deps.render, deps.now());
  const scaleFailures = await scaleAll(deps, desired);
  // "Unexpected API or admission failures use the normal reconciliation retry path and report
  // Failed with Ready=False while the failure persists" (dgd-reference).
  if (scaleFailures.length > 0) return reportFailure(deps, observed, scaleFailures, true);
  const reported = await report(deps, observed, desired);
  if (reported === 'gone') {
    await undoCreations(deps, applied.created);
    return goneDuringReconcile(deps);
  }
  // Decided from a version since replaced: its worker-hash commit and outcome are that pass's too.
  if (reported === 'superseded') return DONE;
  if (desired.permanentFailure !== undefined) return { kind: 'Permanent', ...desired.permanentFailure };
  if (desired.parentAnnotations !== undefined) return annotateParent(deps, parent, desired);
  return DONE;
}

/**
 * Commits the worker hash on the DGD (`nvidia.com/current-worker-hash-v2`): a server-side apply
 * of those `metadata.annotations` only, under the reconcile field manager. When the decision
 * also removes the legacy `nvidia.com/current-worker-hash` (another manager's, usually an
 * upstream operator's, so an apply cannot drop it), the stored DGD the apply returned is written
 * back without it (PUT with its resourceVersion as precondition; a conflict is retried). Then the
 * decision's Event (`WorkerHashMigrated`). A refused write is retried (Transient); the status
 * already reports the previous committed runtime namespace.
 * Source: upstream-notes/dgd.md §4.7 step 3 (worker-hash commit); upstream
 * `dgd_worker_rollout_reconciler.go` (`setCurrentWorkerHashes`, `migrateCurrentWorkerHashIfNeeded`).
 */
async function annotateParent(deps: ReconcileDeps, parent: KubeObject, desired: DgdDesired): Promise<Outcome> {
  const annotations = desired.parentAnnotations ?? {};
  try {
    const stored = await deps.kube.apply({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, metadata: { name: parent.metadata.name, namespace: parent.metadata.namespace ?? '', annotations: { ...annotations } } }, { force: true });
    const remove = (desired.removeParentAnnotations ?? []).filter((key) => stored.metadata.annotations?.[key] !== undefined);
    if (remove.length > 0) {
      const kept = Object.fromEntries(Object.entries(stored.metadata.annotations ?? {}).filter(([key]) => !remove.includes(key)));
      await deps.kube.replace({ ...stored, metadata: { ...stored.metadata, annotations: kept } });
    }
    deps.log.info({ annotations, removed: remove }, 'Committed DynamoGraphDeployment worker hash');
  } catch (error) {
    return { kind: 'Transient', cause: asShellError(error) };
  }
  if (desired.parentAnnotationsEvent !== undefined) await createEvent(deps, parent, desired.parentAnnotationsEvent);
  return DONE;
}

/**
 * A child's event: finds the DGD that controls it (directly, or through the Grove PodCliqueSet
 * that controls a PodClique or PodCliqueScalingGroup) and reconciles that DGD, so a deleted or
 * hand-edited child is restored now and Grove's progress reaches the DGD's status. The event's
 * copy is used when it carries one (Resource mode: a deleted child still names its owner);
 * else the child is read. A child no DGD controls is skipped. The DGD's quiet record, if this
 * process holds one, is dropped first (./quiet.ts), so its next event is a full pass too.
 */
export async function handleChild(event: KubeEvent, deps: ReconcileDeps): Promise<Outcome> {
  const object = event.object ?? (await deps.kube.get(event.key));
  if (object === undefined) return DONE;
  let owner = childOwner(object);
  if (owner?.kind === PODCLIQUESET_KIND) {
    const pcs = await deps.kube.get({ apiVersion: GROVE_API_VERSION, kind: PODCLIQUESET_KIND, namespace: owner.namespace, name: owner.name });
    owner = pcs === undefined ? undefined : childOwner(pcs);
  }
  if (owner?.kind !== DGD_KIND) {
    deps.log.debug({}, 'Skipped object no DynamoGraphDeployment controls');
    return DONE;
  }
  // A child changed: the DGD is no longer known quiet here (./quiet.ts); this pass is the full one.
  deps.quietPasses?.invalidate(owner.namespace, owner.name);
  return handle({ ...event, key: { apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace: owner.namespace, name: owner.name }, object: undefined }, deps);
}

/** Every DGD in the cluster, for the periodic resync. */
export async function listKeys(deps: ReconcileDeps): Promise<readonly ObjectKey[]> {
  const dgds = await deps.kube.list(DGD_V1BETA1, DGD_KIND);
  return dgds.map((d) => ({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace: d.metadata.namespace ?? '', name: d.metadata.name }));
}

/** Only the shell's two error classes are reported on status; anything else is a bug and is rethrown. */
function asShellError(error: unknown): Error {
  if (error instanceof TransientError || error instanceof PermanentError) return error;
  throw error;
}
