/**
 * The PersistentVolumeClaims a v1alpha1 DGD asks the operator to create (`spec.pvcs[]` with
 * `create: true`), carried after conversion in the `nvidia.com/dgd-spec` payload.
 *
 * Source: upstream `internal/controller/dynamographdeployment_controller.go` (`reconcilePVCs`,
 * `reconcilePVC`: an existing claim of that name is used as it is, whoever made it; an absent
 * one is created, with the DGD as its controller, only when `create` is true; it is never
 * updated, and the garbage collector deletes it with the DGD) and `constructPVC` (name,
 * namespace, `accessModes: [volumeAccessMode]`, `resources.requests.storage: size`,
 * `storageClassName`); `api/v1alpha1/common.go` `PVC` (its CEL rule).
 * @module
 */
import { PvcV1Alpha1Schema, fromZodIssues, preservedAlphaPvcs, type Dgd, type FieldIssue } from '../../api/index.js';

type Json = Record<string, unknown>;

/** Upstream's CEL message on `PVC` ("When create is true, ..."). */
export const MESSAGE_PVC_CREATE_FIELDS_REQUIRED = 'When create is true, size, storageClass, and volumeAccessMode are required';

/**
 * The claims to create for a DGD's preserved v1alpha1 `spec.pvcs`: one PersistentVolumeClaim per
 * entry with `create: true` (name, `accessModes: [volumeAccessMode]`, `resources.requests.storage:
 * size`, `storageClassName`), metadata from `meta`. Entries without `create` name claims the user
 * provides and render nothing. Failures, as field issues at `spec.pvcs[i]` (the v1alpha1 path
 * the user wrote): an entry that is not a PVC (no `name`), or `create: true` without `size`,
 * `storageClass` or `volumeAccessMode`. Pure.
 */
export function renderAlphaPvcs(dgd: Pick<Dgd, 'metadata'>, meta: (name: string) => Json): { objects: Json[]; issues: FieldIssue[] } {
  const objects: Json[] = [];
  const issues: FieldIssue[] = [];
  preservedAlphaPvcs(dgd.metadata).forEach((entry, index) => {
    const at = `spec.pvcs[${index}]`;
    const parsed = PvcV1Alpha1Schema.safeParse(entry);
    if (!parsed.success) {
      issues.push(...fromZodIssues(parsed.error.issues, ['spec', 'pvcs', index]));
      return;
    }
    const pvc = parsed.data;
    if (pvc.create !== true) return;
    const size = pvc.size === undefined ? '' : String(pvc.size);
    if (size === '' || (pvc.storageClass ?? '') === '' || (pvc.volumeAccessMode ?? '') === '') {
      issues.push({ path: at, type: 'Invalid', detail: MESSAGE_PVC_CREATE_FIELDS_REQUIRED });
      return;
    }
    objects.push({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: meta(pvc.name),
      spec: { accessModes: [pvc.volumeAccessMode], resources: { requests: { storage: size } }, storageClassName: pvc.storageClass },
    });
  });
  return { objects, issues };
}

/**
 * The claims a DGD's preserved v1alpha1 `spec.pvcs` names without `create: true`: the user
 * provides them. Out: their names, in order (entries that are not a PVC are left to
 * {@link renderAlphaPvcs}'s issues). Pure.
 */
export function providedAlphaPvcNames(dgd: Pick<Dgd, 'metadata'>): string[] {
  return preservedAlphaPvcs(dgd.metadata).flatMap((entry) => {
    const parsed = PvcV1Alpha1Schema.safeParse(entry);
    return parsed.success && parsed.data.create !== true ? [parsed.data.name] : [];
  });
}

/**
 * The reconcile failure for provided claims that do not exist, as upstream `reconcilePVC` words
 * it: `legacy top-level PVC "<name>" does not exist and create is not enabled`, joined with `; `;
 * undefined when every one exists. In: the provided names and the names observed. Pure.
 */
export function describeMissingAlphaPvcs(provided: readonly string[], existing: ReadonlySet<string> | ReadonlyMap<string, unknown>): string | undefined {
  const missing = provided.filter((name) => !existing.has(name));
  return missing.length === 0 ? undefined : missing.map((name) => `legacy top-level PVC "${name}" does not exist and create is not enabled`).join('; ');
}
