/**
 * Ownership: which existing objects a DGD may write, and which DGD a Grove child or Service
 * event is about.
 *
 * Source: ../shared/DESIGN.md "Writes" ("Never adopt: an existing object that this parent does
 * not control (owner reference with `controller: true`) is left untouched, and the parent
 * reports the conflict on its status"); issue 7 part 5; Kubernetes owner references
 * (metav1.OwnerReference `controller`, at most one per object).
 * @module
 */
import { DGD_KIND, DYNAMO_GROUP, GROVE_API_VERSION, LPXGD_KIND, PODCLIQUESET_KIND } from '../api/index.js';

/** An object as read from the API server: the metadata ownership needs. */
export interface OwnedObject {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata?: {
    readonly name?: string;
    readonly namespace?: string;
    readonly uid?: string;
    readonly ownerReferences?: readonly Readonly<Record<string, unknown>>[];
  };
}

/** The owner reference marked `controller: true`, if any. */
export interface ControllerRef {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
}

/** A rendered name already taken by an object this DGD does not control. */
export interface OwnershipConflict {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  /** The object's controller, when it has one. */
  readonly controller: ControllerRef | undefined;
}

/**
 * The object's controller reference (`ownerReferences[]` entry with `controller: true`), or
 * undefined when it has none. Pure.
 */
export function controllerRefOf(object: OwnedObject): ControllerRef | undefined {
  // The API server only stores a list of objects here; anything else (a forged event) controls nothing.
  const owners: unknown = object.metadata?.ownerReferences;
  if (!Array.isArray(owners)) return undefined;
  const ref = (owners as unknown[]).find((r): r is Readonly<Record<string, unknown>> => typeof r === 'object' && r !== null && (r as Record<string, unknown>)['controller'] === true);
  if (ref === undefined) return undefined;
  const text = (key: string): string => (typeof ref[key] === 'string' ? (ref[key] as string) : '');
  return { apiVersion: text('apiVersion'), kind: text('kind'), name: text('name'), uid: text('uid') };
}

/**
 * True when the object is controlled by the parent with this uid. An empty uid controls
 * nothing. Pure.
 */
export function isControlledByParent(object: OwnedObject, parentUid: string): boolean {
  return parentUid !== '' && controllerRefOf(object)?.uid === parentUid;
}

/**
 * The Grove children of one PodCliqueSet a pass may read (issue 20 "the same rule everywhere a
 * function reads what a Job or a user could also write"): the PodCliqueScalingGroups and
 * PodCliques whose controller is the PodCliqueSet's uid, and the PodCliques whose controller is
 * one of those scaling groups (Grove's chain: the PodCliqueSet controls its standalone cliques and
 * its scaling groups, a scaling group the cliques of its replicas; see {@link childOwner}). A
 * child at a rendered name that someone else controls, or nobody, is not the PodCliqueSet's:
 * its status and replicas are never read and no scale write reaches it (DESIGN.md "Writes":
 * never adopt). With no PodCliqueSet uid (none observed) nothing is kept. The cleanup function
 * already reads LPX scaling groups so. In: `metadata.uid` and `metadata.ownerReferences`.
 * Out: the kept objects, in their order. Pure.
 */
export function selectGroveChildren<G extends OwnedObject, C extends OwnedObject>(
  pcsUid: string | undefined,
  scalingGroups: readonly G[],
  podCliques: readonly C[],
): { readonly scalingGroups: G[]; readonly podCliques: C[] } {
  if (pcsUid === undefined || pcsUid === '') return { scalingGroups: [], podCliques: [] };
  const kept = scalingGroups.filter((group) => isControlledByParent(group, pcsUid));
  const owners = new Set([pcsUid, ...kept.flatMap((group) => (group.metadata?.uid === undefined || group.metadata.uid === '' ? [] : [group.metadata.uid]))]);
  return { scalingGroups: kept, podCliques: podCliques.filter((clique) => owners.has(controllerRefOf(clique)?.uid ?? '')) };
}

/**
 * The rendered objects whose name is already taken by an object the DGD does not control
 * ("a Service or PodCliqueSet of the same name that is not controlled by this DGD is left
 * untouched", issue 7 part 5). In: the rendered objects, the observed objects of the same
 * kinds by name, the DGD's uid. Out: the conflicts, in the rendered order. Pure.
 */
export function findOwnershipConflicts(
  rendered: readonly { readonly kind: string; readonly metadata: { readonly name: string; readonly namespace: string } }[],
  observed: Readonly<Record<string, ReadonlyMap<string, OwnedObject>>>,
  parentUid: string,
): OwnershipConflict[] {
  const conflicts: OwnershipConflict[] = [];
  for (const object of rendered) {
    const existing = observed[object.kind]?.get(object.metadata.name);
    if (existing === undefined || isControlledByParent(existing, parentUid)) continue;
    conflicts.push({ kind: object.kind, namespace: object.metadata.namespace, name: object.metadata.name, controller: controllerRefOf(existing) });
  }
  return conflicts;
}

/**
 * The Ready message for ownership conflicts, naming each conflicting object:
 * `PodCliqueSet inference/llama exists and is not controlled by this DynamoGraphDeployment
 * (controller: none)`, joined with `; `. Pure.
 */
export function describeOwnershipConflicts(conflicts: readonly OwnershipConflict[]): string {
  return conflicts
    .map((c) => {
      const controller = c.controller === undefined ? 'none' : `${c.controller.kind} ${c.controller.name}`;
      return `${c.kind} ${c.namespace}/${c.name} exists and is not controlled by this ${DGD_KIND} (controller: ${controller}); it is left untouched`;
    })
    .join('; ');
}

/** Where a child event leads: a DGD by name, a PodCliqueSet to follow up, or nowhere. */
export type ChildOwner =
  | { readonly kind: 'DynamoGraphDeployment'; readonly apiVersion: string; readonly namespace: string; readonly name: string }
  | { readonly kind: 'PodCliqueSet'; readonly namespace: string; readonly name: string }
  | undefined;

/**
 * Maps a child object (PodCliqueSet, Service, PodClique, PodCliqueScalingGroup, as an event
 * carried it) to the object to reconcile, through its controller reference only: a DGD
 * controller (group `nvidia.com`) -> that DGD; a Grove PodCliqueSet controller (Grove makes the
 * PodCliqueSet the controller of its PodCliques and scaling groups) -> that PodCliqueSet, which
 * the shell maps again; anything else, or no controller -> undefined (a hand-made object of a
 * rendered name triggers nothing; the DGD reports it when it reconciles). Pure.
 */
export function childOwner(object: OwnedObject): ChildOwner {
  const controller = controllerRefOf(object);
  const namespace = object.metadata?.namespace ?? '';
  if (controller === undefined || controller.name === '') return undefined;
  const group = controller.apiVersion.includes('/') ? controller.apiVersion.slice(0, controller.apiVersion.lastIndexOf('/')) : '';
  if (controller.kind === DGD_KIND && group === DYNAMO_GROUP) return { kind: DGD_KIND, apiVersion: controller.apiVersion, namespace, name: controller.name };
  if (controller.kind === PODCLIQUESET_KIND && controller.apiVersion === GROVE_API_VERSION) return { kind: PODCLIQUESET_KIND, namespace, name: controller.name };
  return undefined;
}

/**
 * lpxRuntimeConfigMapOwner: the LPXGraphDeployment an LPX runtime ConfigMap event is about, as
 * upstream's LPX controller watches the ConfigMaps it owns (`Owns(&corev1.ConfigMap{})`,
 * upstream-notes/lpx.md §6.1 "Owned ConfigMaps"): the ConfigMap's controller reference of kind
 * `LPXGraphDeployment` in group `nvidia.com`, in the ConfigMap's namespace. Anything else (no
 * controller, another kind or group, an empty name) is not ours: undefined, and nothing is
 * reconciled (a ConfigMap at a runtime name that the LPXGD does not control is reported by the
 * LPXGD's own pass). The `lpx.nvidia.com/deployment-uid` label only selects what the source
 * delivers; the controller reference decides. In: metadata.namespace, metadata.ownerReferences.
 * Out: namespace and name, or undefined. Pure.
 */
export function lpxRuntimeConfigMapOwner(object: OwnedObject): { readonly namespace: string; readonly name: string } | undefined {
  const controller = controllerRefOf(object);
  if (controller === undefined || controller.name === '' || controller.kind !== LPXGD_KIND) return undefined;
  const group = controller.apiVersion.includes('/') ? controller.apiVersion.slice(0, controller.apiVersion.lastIndexOf('/')) : '';
  return group === DYNAMO_GROUP ? { namespace: object.metadata?.namespace ?? '', name: controller.name } : undefined;
}
