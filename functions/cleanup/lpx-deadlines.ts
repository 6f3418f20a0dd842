/**
 * LPX scheduling-deadline cleanup (only with `lpx.enabled=true`).
 *
 * Takes: `dev.knative.apiserver.{resource,ref}.{add,update,delete}` and `dev.dynamo-fn.resync`
 * (the tick) events for kind `LPXGraphDeployment` (`nvidia.com/v1alpha1`). Later deadlines
 * are met by the tick, so request events are not needed.
 * Reads: the LPXGD, its owning DGD (the per-component `lpx.scheduling.attemptDeadlineSeconds`
 * and whether replicas are explicit), the LPX PodCliqueSet (an active Coherent rollout), its
 * scaling groups and the pipeline requests it controls.
 * Decides: `decideLpxDeadlines` (shared/domain, pure).
 * Writes: the LPXGD `SchedulingFailed` condition through the status subresource (field manager
 * `dynamo-cleanup`; it owns only that condition, so the reconcile's conditions are untouched); scaling-group
 * `spec.replicas` by replace with a resourceVersion precondition; request deletes with
 * resourceVersion preconditions, non-expired siblings first.
 * Answers: Done; Transient on API errors that may pass.
 * Source: ../shared/upstream-notes/lpx.md §3.4; ../shared/reference/dgd-reference.txt (deadline
 * cleanup under Coherent and with omitted replicas).
 * @module
 */
import {
  DGD_KIND,
  DGD_V1BETA1,
  GROVE_API_VERSION,
  LPR_API_VERSION,
  LPR_KIND,
  LPXGD_API_VERSION,
  LPXGD_KIND,
  LpuPipelineRequestSchema,
  LpxGraphDeploymentSchema,
  PODCLIQUESET_KIND,
  parseDgd,
  type LpuPipelineRequest,
} from '../../shared/api/index.js';
import {
  controllerUidOf,
  decideLpxDeadlines,
  isCoherentUpdateBlocking,
  isRequestControlledBy,
  lpxPodCliqueSetName,
  resolveLpxWorkloads,
  scalingGroupObjectName,
  type DeadlineDesired,
  type DeadlineObserved,
  type ObservedPodCliqueSet,
} from '../../shared/domain/index.js';
import type { KubeObject, KubeReader } from '../../shared/kube/index.js';
import { DONE, type KubeEvent, type ObjectKey, type Outcome, type Route } from '../../shared/runtime/index.js';
import type { CleanupDeps } from './deps.js';

type LpxCleanupDeps = CleanupDeps;

const LABEL_GROVE_PART_OF = 'app.kubernetes.io/part-of';
/** Passes per event: record, then scale, then delete, each on the observation after the last write. */
const MAX_PASSES = 4;

/** LPXGraphDeployment events and the tick (resync). */
export const lpxDeadlineRoute: Route<LpxCleanupDeps> = { apiVersion: LPXGD_API_VERSION, kind: LPXGD_KIND, handle, listKeys };

interface Loaded {
  readonly observed: DeadlineObserved;
  readonly rawGroups: ReadonlyMap<string, KubeObject>;
}

/**
 * Loads what the deadline decision reads, the independent reads at once; undefined when there is
 * nothing to evaluate. `read` answers the reads (a resync's snapshot, else the live client).
 */
export async function load(deps: LpxCleanupDeps, key: ObjectKey, read: KubeReader = deps.kube): Promise<Loaded | undefined> {
  const pcsRead = async (uid: string) => {
    const pcsName = lpxPodCliqueSetName({ namespace: key.namespace, name: key.name, uid });
    return { pcsName, pcs: await read.get({ apiVersion: GROVE_API_VERSION, kind: PODCLIQUESET_KIND, namespace: key.namespace, name: pcsName }) };
  };
  const raw = await read.get({ apiVersion: LPXGD_API_VERSION, kind: LPXGD_KIND, namespace: key.namespace, name: key.name });
  const parsed = raw === undefined ? undefined : LpxGraphDeploymentSchema.safeParse(raw);
  if (parsed?.success !== true || parsed.data.metadata.deletionTimestamp !== undefined) return undefined;
  const lpxgd = parsed.data;
  const [dgdObject, { pcsName, pcs }] = await Promise.all([read.get({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace: key.namespace, name: key.name }), pcsRead(lpxgd.metadata.uid ?? '')]);
  const dgd = dgdObject === undefined ? undefined : parseDgd(dgdObject);
  if (dgd?.ok !== true) return undefined;
  if (pcs === undefined || pcs.metadata.uid === undefined) return undefined;
  // A PodCliqueSet of that name the LPXGraphDeployment does not control is not ours to act for
  // (reconcile reports it): its requests and scaling groups are never read, scaled or deleted here.
  if (lpxgd.metadata.uid === undefined || controllerUidOf(pcs) !== lpxgd.metadata.uid) return undefined;
  const [groups, requestObjects] = await Promise.all([
    read.list(GROVE_API_VERSION, 'PodCliqueScalingGroup', key.namespace, { labelSelector: `${LABEL_GROVE_PART_OF}=${pcsName}` }),
    read.list(LPR_API_VERSION, LPR_KIND, key.namespace),
  ]);
  const rawGroups = new Map<string, KubeObject>();
  // Only the scaling groups Grove made for this PodCliqueSet (controlled by its uid, issue 20 item 1):
  // one anyone created with the part-of label is never read for replicas nor scaled.
  for (const group of groups) if (controllerUidOf(group) === pcs.metadata.uid) rawGroups.set(group.metadata.name, group);
  const requests: LpuPipelineRequest[] = [];
  for (const object of requestObjects) {
    const request = LpuPipelineRequestSchema.safeParse(object);
    if (request.success && isRequestControlledBy(request.data, pcs.metadata.uid)) requests.push(request.data);
  }
  const workloads = resolveLpxWorkloads(dgd.dgd).map((w) => {
    const name = scalingGroupObjectName(pcsName, w);
    const replicas = (rawGroups.get(name)?.['spec'] as { replicas?: unknown } | undefined)?.replicas;
    return {
      scalingGroupObject: name,
      secondsByModel: new Map(w.models.map((m) => [m.model, m.attemptDeadlineSeconds])),
      hasExplicitReplicas: w.explicitReplicas !== undefined,
      liveReplicas: typeof replicas === 'number' ? replicas : undefined,
    };
  });
  return {
    observed: {
      generation: lpxgd.metadata.generation ?? 0,
      conditions: lpxgd.status?.conditions ?? [],
      workloads,
      requests,
      isScalingBlocked: isCoherentUpdateBlocking(pcs as unknown as ObservedPodCliqueSet),
    },
    rawGroups,
  };
}

/** Performs the decision: the SchedulingFailed record, then scale-downs, then deletes. */
export async function write(deps: LpxCleanupDeps, key: ObjectKey, loaded: Loaded, desired: DeadlineDesired): Promise<void> {
  if (desired.schedulingFailed !== undefined) {
    await deps.kube.applyStatus(
      { apiVersion: LPXGD_API_VERSION, kind: LPXGD_KIND, metadata: { name: key.name, namespace: key.namespace }, status: { conditions: [desired.schedulingFailed] } },
      { force: true },
    );
    deps.log.info({ kind: LPXGD_KIND, namespace: key.namespace, name: key.name, status: desired.schedulingFailed.status, reason: desired.schedulingFailed.reason }, 'Recorded SchedulingFailed');
  }
  for (const scale of desired.scale) {
    const group = loaded.rawGroups.get(scale.scalingGroupObject);
    if (group === undefined) continue;
    await deps.kube.replace({ ...group, spec: { ...(group['spec'] as Record<string, unknown>), replicas: scale.replicas } });
    deps.log.info({ kind: 'PodCliqueScalingGroup', namespace: key.namespace, name: scale.scalingGroupObject, replicas: scale.replicas }, 'Scaled down PodCliqueScalingGroup for expired requests');
  }
  for (const request of desired.delete) {
    await deps.kube.delete({ apiVersion: LPR_API_VERSION, kind: LPR_KIND, namespace: key.namespace, name: request.name }, request.resourceVersion === undefined ? {} : { resourceVersion: request.resourceVersion });
    deps.log.info({ kind: LPR_KIND, namespace: key.namespace, name: request.name }, 'Deleted expired LpuPipelineRequest');
  }
}

function hasWrites(desired: DeadlineDesired): boolean {
  return desired.schedulingFailed !== undefined || desired.scale.length > 0 || desired.delete.length > 0;
}

/**
 * load -> decideLpxDeadlines -> write, repeated while the decision asks to look again now
 * (record first, clean in a later pass), up to {@link MAX_PASSES}. Later deadlines are met by the
 * tick (resync). Disabled: does nothing.
 */
export async function handle(event: KubeEvent, deps: LpxCleanupDeps): Promise<Outcome> {
  if (!deps.config.lpxEnabled) return DONE;
  for (let pass = 0; pass < MAX_PASSES; pass += 1) {
    // The first pass reads the resync's snapshot when there is one; a pass after a write reads the API server.
    const read = pass === 0 && deps.snapshot !== undefined ? deps.snapshot : deps.kube;
    let loaded = await load(deps, event.key, read);
    if (loaded === undefined) return DONE;
    let now = deps.now();
    let desired = decideLpxDeadlines(loaded.observed, now);
    // The snapshot can be older than a request's receipt (bound before its deadline, after the
    // snapshot listed it pending): a SchedulingFailed record stays for the generation, and a
    // scale-down or delete cannot be undone, so any write is decided again from the API server
    // (the snapshot only saves the reads of the LPXGraphDeployments with nothing to do).
    if (read !== deps.kube && hasWrites(desired)) {
      loaded = await load(deps, event.key, deps.kube);
      if (loaded === undefined) return DONE;
      now = deps.now();
      desired = decideLpxDeadlines(loaded.observed, now);
    }
    await write(deps, event.key, loaded, desired);
    if (!hasWrites(desired) || desired.recheckAt === undefined || desired.recheckAt.getTime() > now.getTime()) break;
  }
  return DONE;
}

/** Every LPXGD, for the tick; none while LPX is disabled. */
export async function listKeys(deps: LpxCleanupDeps): Promise<readonly ObjectKey[]> {
  if (!deps.config.lpxEnabled) return [];
  const objects = await (deps.snapshot ?? deps.kube).list(LPXGD_API_VERSION, LPXGD_KIND);
  return objects.map((o) => ({ apiVersion: LPXGD_API_VERSION, kind: LPXGD_KIND, namespace: o.metadata.namespace ?? '', name: o.metadata.name }));
}
