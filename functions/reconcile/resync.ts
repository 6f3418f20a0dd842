/**
 * The reconcile function's bulk read for a resync: one paginated LIST per kind its passes read
 * (every namespace), held in memory for the resync and handed to the same passes through a
 * snapshot client (shared/kube snapshotKube), instead of GETs and LISTs per DGD. The API cost of
 * a quiet resync grows with the number of kinds, not of DGDs.
 *
 * Lists: DGDs, DGDSAs, PodCliqueSets, Services, PodCliques and PodCliqueScalingGroups when the
 * DGD route is resynced (the DGD pass and its adapters' pass read them); then, only when some DGD
 * renders them, ServiceAccounts, Roles and RoleBindings (Kubernetes discovery), the
 * ResourceClaimTemplates of intra-pod GPU memory services, PersistentVolumeClaims (v1alpha1
 * `spec.pvcs`) and, with lpx.enabled, LPXGraphDeployments. DGDSAs and DGDs for the adapter route;
 * LPXGraphDeployments for the LPX route (with lpx.enabled). Whatever a pass reads beyond these
 * it reads itself. Source: issue 17 item 3; DESIGN.md "Scale".
 * @module
 */
import {
  DGD_KIND,
  DGD_V1BETA1,
  DGDSA_KIND,
  DGDSA_V1BETA1,
  GROVE_API_VERSION,
  LPXGD_API_VERSION,
  LPXGD_KIND,
  PODCLIQUESCALINGGROUP_KIND,
  PODCLIQUESET_KIND,
  PODCLIQUE_KIND,
  parseDgd,
} from '../../shared/api/index.js';
import { snapshotKube, type KubeObject, type ListedKind } from '../../shared/kube/index.js';
import type { Route } from '../../shared/runtime/index.js';
import { identityAndClaimRefs, type ReconcileDeps } from './dgd.js';

interface KindRef {
  readonly apiVersion: string;
  readonly kind: string;
}

const DGD = { apiVersion: DGD_V1BETA1, kind: DGD_KIND };
const DGDSA = { apiVersion: DGDSA_V1BETA1, kind: DGDSA_KIND };
const LPXGD = { apiVersion: LPXGD_API_VERSION, kind: LPXGD_KIND };
const DGD_PASS_KINDS: readonly KindRef[] = [
  DGD,
  DGDSA,
  { apiVersion: GROVE_API_VERSION, kind: PODCLIQUESET_KIND },
  { apiVersion: 'v1', kind: 'Service' },
  { apiVersion: GROVE_API_VERSION, kind: PODCLIQUE_KIND },
  { apiVersion: GROVE_API_VERSION, kind: PODCLIQUESCALINGGROUP_KIND },
];

/**
 * The kinds a resync of `routes` lists first (before any DGD is known). Pure.
 */
export function firstListedKinds(routes: readonly Pick<Route, 'kind'>[], lpxEnabled: boolean): KindRef[] {
  const kinds: KindRef[] = [];
  const add = (ref: KindRef) => {
    if (!kinds.some((k) => k.apiVersion === ref.apiVersion && k.kind === ref.kind)) kinds.push(ref);
  };
  for (const route of routes) {
    if (route.kind === DGD_KIND) DGD_PASS_KINDS.forEach(add);
    else if (route.kind === DGDSA_KIND) [DGDSA, DGD].forEach(add);
    else if (route.kind === LPXGD_KIND && lpxEnabled) add(LPXGD);
  }
  return kinds;
}

/**
 * The further kinds the DGD passes read for these DGDs (the names of `identityAndClaimRefs`, and
 * the LPXGraphDeployment of a DGD with LPX components while lpx.enabled), each once. Pure.
 */
export function kindsForDgds(deps: Pick<ReconcileDeps, 'render' | 'config'>, dgds: readonly KubeObject[]): KindRef[] {
  const kinds = new Map<string, KindRef>();
  for (const object of dgds) {
    const parsed = parseDgd(object);
    if (!parsed.ok) continue;
    const ordinary = parsed.dgd.spec.components.filter((c) => c.type !== 'lpx');
    for (const ref of identityAndClaimRefs(deps, object.metadata.namespace ?? '', parsed.dgd, ordinary)) kinds.set(`${ref.apiVersion}/${ref.kind}`, { apiVersion: ref.apiVersion, kind: ref.kind });
    if (deps.config.lpxEnabled && parsed.dgd.spec.components.some((c) => c.type === 'lpx')) kinds.set(`${LPXGD.apiVersion}/${LPXGD.kind}`, LPXGD);
  }
  return [...kinds.values()];
}

/**
 * Reads in bulk for a resync of `routes` and returns dependencies whose reads of those kinds
 * are answered from memory (writes still go to the API server). Failures: the first failed
 * LIST's error (the resync then fails as a failed listing does, and the broker retries).
 */
export async function resyncDeps(deps: ReconcileDeps, routes: readonly Pick<Route, 'kind'>[]): Promise<ReconcileDeps> {
  const listKind = async (ref: KindRef): Promise<ListedKind> => ({ ...ref, objects: await deps.kube.list(ref.apiVersion, ref.kind) });
  const first = await Promise.all(firstListedKinds(routes, deps.config.lpxEnabled).map(listKind));
  const dgds = routes.some((route) => route.kind === DGD_KIND) ? (first.find((listed) => listed.kind === DGD_KIND)?.objects ?? []) : [];
  const listed = new Set(first.map((k) => `${k.apiVersion}/${k.kind}`));
  const more = await Promise.all(kindsForDgds(deps, dgds).filter((ref) => !listed.has(`${ref.apiVersion}/${ref.kind}`)).map(listKind));
  const kinds = [...first, ...more];
  deps.log.debug({ kinds: kinds.map((k) => ({ kind: k.kind, objects: k.objects.length })) }, 'Listed objects for the resync');
  return { ...deps, kube: snapshotKube(deps.kube, kinds) };
}
