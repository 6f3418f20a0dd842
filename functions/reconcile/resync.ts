/**
 * The reconcile function's reads for a resync: one paginated LIST per kind its passes read (every
 * namespace, taken on the first read of the kind: shared/kube `createListSnapshot`), shared by
 * every DGD's, adapter's and LPXGraphDeployment's pass of the resync, instead of GETs and LISTs
 * per DGD; a pass's own writes are read back as written (shared/kube `passKube`). The API cost
 * of a quiet resync grows with the number of kinds, not of DGDs: DGDs, DGDSAs, PodCliqueSets,
 * Services, PodCliques, PodCliqueScalingGroups, and the discovery ServiceAccounts, Roles and
 * RoleBindings, GMS ResourceClaimTemplates, v1alpha1 claims and LPXGraphDeployments when some
 * DGD renders them. Source: issue 17 item 3; DESIGN.md "Scale".
 * @module
 */
import { createListSnapshot, passKube } from '../../shared/kube/index.js';
import type { ReconcileDeps } from './dgd.js';

/**
 * The dependencies of every pass of one resync: reads from one LIST per kind, writes to the API
 * server. A resync tick drops this process's quiet-DGD records (./quiet.ts), and its passes
 * neither consult nor make them: each is the full pass, and the next event after it is too.
 */
export function resyncDeps(deps: ReconcileDeps): ReconcileDeps {
  deps.quietPasses?.invalidateAll();
  return { ...deps, kube: passKube(deps.kube, createListSnapshot(deps.kube)), quietPasses: undefined };
}
