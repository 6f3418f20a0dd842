/**
 * Reconciles one DynamoGraphDeployment.
 *
 * Takes: `dev.knative.apiserver.{resource,ref}.{add,update,delete}` and `dev.dynamo-fn.resync`
 * events for kind `DynamoGraphDeployment` (group `nvidia.com`).
 * Reads: the DGD now (the event's copy may be stale), and the Grove PodCliques and
 * PodCliqueScalingGroups of its PodCliqueSet (label `app.kubernetes.io/part-of=<pcs>`).
 * Decides: `decideDgd` (shared/domain, pure).
 * Writes: server-side apply of the PodCliqueSet and component Services, then the DGD status
 * through the status subresource, then Events on Ready transitions; field manager
 * `dynamo-reconcile`.
 * Answers: Done; Permanent when the spec is invalid or the API server rejects what we
 * rendered (reported on status, never retried); Transient on API errors that may pass.
 * @module
 */
import {
  DGD_KIND,
  DGD_V1BETA1,
  LPXGD_API_VERSION,
  LPXGD_KIND,
  PodCliqueScalingGroupSchema,
  PodCliqueSchema,
  parseDgd,
  type PodClique,
  type PodCliqueScalingGroup,
} from '../../shared/api/index.js';
import { REASON_FAILED_TO_RECONCILE, decideApplyFailure, decideDgd, podCliqueSetName, type DgdDesired, type DgdObserved, type RenderConfig } from '../../shared/domain/index.js';
import type { Kube, KubeObject } from '../../shared/kube/index.js';
import { DONE, PermanentError, type HandlerDeps, type KubeEvent, type ObjectKey, type Outcome, type Route } from '../../shared/runtime/index.js';

export interface ReconcileDeps extends HandlerDeps {
  readonly kube: Kube;
  readonly render: RenderConfig;
  /** Events' `reportingInstance` (the pod or revision name). */
  readonly instance: string;
}

const REPORTING_CONTROLLER = 'nvidia.com/dynamo-reconcile';
/** Grove's label naming the PodCliqueSet a child belongs to (upstream-notes/grove.md §A.8). */
const LABEL_GROVE_PART_OF = 'app.kubernetes.io/part-of';

/** The binding: DGD events (any version of group nvidia.com) and the DGD resync. */
export const route: Route<ReconcileDeps> = { apiVersion: DGD_V1BETA1, kind: DGD_KIND, handle, listKeys };

/** Loads the DGD and its Grove children; undefined when the DGD is gone. */
export async function load(deps: ReconcileDeps, key: ObjectKey): Promise<DgdObserved | undefined> {
  const parent = await deps.kube.get({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace: key.namespace, name: key.name });
  if (parent === undefined) return undefined;
  const children: { PodClique: Map<string, PodClique>; PodCliqueScalingGroup: Map<string, PodCliqueScalingGroup>; LPXGraphDeployment?: KubeObject | undefined } = {
    PodClique: new Map<string, PodClique>(),
    PodCliqueScalingGroup: new Map<string, PodCliqueScalingGroup>(),
  };
  const parsed = parseDgd(parent);
  // LPX (issue 11): read the LPXGraphDeployment only while lpx.enabled; disabled, nothing LPX is read or written.
  if (parsed.ok && deps.config.lpxEnabled && parsed.dgd.spec.components.some((c) => c.type === 'lpx')) {
    children.LPXGraphDeployment = await deps.kube.get({ apiVersion: LPXGD_API_VERSION, kind: LPXGD_KIND, namespace: key.namespace, name: key.name });
  }
  if (parsed.ok) {
    const pcsName = podCliqueSetName(key.name, parsed.dgd.spec.components.filter((c) => c.type !== 'lpx'));
    const selector = { labelSelector: `${LABEL_GROVE_PART_OF}=${pcsName}` };
    const [cliques, groups] = await Promise.all([
      deps.kube.list('grove.io/v1alpha1', 'PodClique', key.namespace, selector),
      deps.kube.list('grove.io/v1alpha1', 'PodCliqueScalingGroup', key.namespace, selector),
    ]);
    for (const object of cliques) {
      const child = PodCliqueSchema.safeParse(object);
      if (child.success) children.PodClique.set(object.metadata.name, child.data);
    }
    for (const object of groups) {
      const child = PodCliqueScalingGroupSchema.safeParse(object);
      if (child.success) children.PodCliqueScalingGroup.set(object.metadata.name, child.data);
    }
  }
  return { parent, children };
}

/** Performs the decision's writes: applies, then the status, then Events. */
export async function write(deps: ReconcileDeps, parent: KubeObject, desired: DgdDesired): Promise<void> {
  for (const object of desired.apply) {
    // The PodCliqueSet and Services are wholly ours (owned by the DGD): force takes back a field
    // someone else changed by hand, as a controller's apply does.
    await deps.kube.apply(object, { force: true });
    deps.log.debug({ kind: object.kind, namespace: object.metadata.namespace, name: object.metadata.name }, `Applied ${object.kind}`);
  }
  await writeStatus(deps, parent, desired.status);
  for (const event of desired.events) {
    await deps.kube.createEvent({
      regarding: { apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace: parent.metadata.namespace ?? '', name: parent.metadata.name, ...(parent.metadata.uid === undefined ? {} : { uid: parent.metadata.uid }) },
      type: event.type,
      reason: event.reason,
      note: event.note,
      action: 'Reconcile',
      reportingController: REPORTING_CONTROLLER,
      reportingInstance: deps.instance,
    });
  }
}

async function writeStatus(deps: ReconcileDeps, parent: KubeObject, status: DgdDesired['status']): Promise<void> {
  await deps.kube.applyStatus(
    {
      apiVersion: DGD_V1BETA1,
      kind: DGD_KIND,
      metadata: { name: parent.metadata.name, namespace: parent.metadata.namespace ?? '' },
      status: Object.fromEntries(Object.entries(status).filter(([, v]) => v !== undefined)),
    },
    { force: true },
  );
}

/** load -> decideDgd -> write. Never branches on the event type: the event only names the DGD. */
export async function handle(event: KubeEvent, deps: ReconcileDeps): Promise<Outcome> {
  const observed = await load(deps, event.key);
  if (observed === undefined) return DONE; // Gone: its children go with it (owner references).
  const parent = observed.parent as KubeObject;
  if (parent.metadata['deletionTimestamp'] !== undefined) return DONE;
  const desired = decideDgd(observed, deps.render, deps.now());
  try {
    await write(deps, parent, desired);
  } catch (error) {
    if (!(error instanceof PermanentError)) throw error;
    // The API server refused what we rendered (e.g. a Grove schema or admission rule):
    // report it on the DGD and do not make the broker retry a bad spec.
    const failed = decideApplyFailure(observed, error.message, deps.now());
    await write(deps, parent, failed);
    deps.log.warn({ err: error }, 'Reported apply failure on DynamoGraphDeployment');
    return { kind: 'Permanent', reason: REASON_FAILED_TO_RECONCILE, message: error.message };
  }
  if (desired.permanentFailure !== undefined) return { kind: 'Permanent', ...desired.permanentFailure };
  return DONE;
}

/** Every DGD in the cluster, for the periodic resync. */
export async function listKeys(deps: ReconcileDeps): Promise<readonly ObjectKey[]> {
  const dgds = await deps.kube.list(DGD_V1BETA1, DGD_KIND);
  return dgds.map((d) => ({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace: d.metadata.namespace ?? '', name: d.metadata.name }));
}


