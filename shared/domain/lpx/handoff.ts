/**
 * The DGD side of LPX: the LPXGraphDeployment the DGD creates and controls for its LPX
 * components, and the foreign-object check (never adopt).
 *
 * Source: ../shared/upstream-notes/lpx.md §2 (LPXGD name = the DGD name, same namespace,
 * controller owner the DGD, annotation `lpx.nvidia.com/restart-id`), §2.3 (ownership chain,
 * "LPXGraphDeployment %q belongs to a different source; adoption is not supported"), §6.1
 * (`dgdLPXHandoff.Reconcile`: create, or update `spec.inputRevision` and the restart annotation).
 * @module
 */
import {
  ANNOTATION_LPX_RESTART_ID,
  DGD_KIND,
  DGD_V1BETA1,
  LABEL_GRAPH_DEPLOYMENT_NAME,
  LPXGD_API_VERSION,
  LPXGD_KIND,
  type Dgd,
} from '../../api/index.js';
import { labelValue } from '../dgd/pod-template.js';
import type { RenderedObject } from '../dgd/render.js';
import { lpxInputRevision, lpxRestartToken } from './input-revision.js';

/** The LPXGD as the DGD reconcile observes it: enough to check ownership and the current token. */
export interface LpxChildRef {
  readonly ownerReferences: readonly Readonly<Record<string, unknown>>[];
  readonly annotations: Readonly<Record<string, string>>;
}

export type LpxHandoff =
  | { readonly ok: true; readonly object: RenderedObject; readonly inputRevision: string }
  | { readonly ok: false; readonly message: string };

/** True when an owner reference list names `uid` as its controller. Pure. */
export function isControlledByUid(ownerReferences: readonly Readonly<Record<string, unknown>>[], uid: string | undefined): boolean {
  return uid !== undefined && ownerReferences.some((ref) => ref['controller'] === true && ref['uid'] === uid);
}

/**
 * decideLpxHandoff: the LPXGraphDeployment for a DGD with LPX components: name and namespace of
 * the DGD, label `nvidia.com/dynamo-graph-deployment-name`, annotation `lpx.nvidia.com/restart-id`
 * (the restart token, kept from the existing child until the DGD's restart state advances it),
 * controller owner reference to the DGD with `blockOwnerDeletion`, and `spec.inputRevision`.
 * An existing child that this DGD does not control is refused, never adopted.
 * In: the parsed DGD (needs metadata.uid), the observed child or undefined. Pure.
 */
export function decideLpxHandoff(dgd: Dgd, existing: LpxChildRef | undefined): LpxHandoff {
  const name = dgd.metadata.name ?? '';
  if (existing !== undefined && !isControlledByUid(existing.ownerReferences, dgd.metadata.uid)) {
    return { ok: false, message: `LPXGraphDeployment ${JSON.stringify(name)} belongs to a different source; adoption is not supported` };
  }
  const token = lpxRestartToken(dgd, existing?.annotations[ANNOTATION_LPX_RESTART_ID] ?? '');
  const inputRevision = lpxInputRevision(dgd, token);
  const metadata: Record<string, unknown> = {
    name,
    namespace: dgd.metadata.namespace ?? 'default',
    labels: { [LABEL_GRAPH_DEPLOYMENT_NAME]: labelValue(name) },
    annotations: { [ANNOTATION_LPX_RESTART_ID]: token },
  };
  if (dgd.metadata.uid !== undefined) {
    metadata['ownerReferences'] = [{ apiVersion: DGD_V1BETA1, kind: DGD_KIND, name, uid: dgd.metadata.uid, controller: true, blockOwnerDeletion: true }];
  }
  return { ok: true, inputRevision, object: { apiVersion: LPXGD_API_VERSION, kind: LPXGD_KIND, metadata: metadata as RenderedObject['metadata'], spec: { inputRevision } } };
}
