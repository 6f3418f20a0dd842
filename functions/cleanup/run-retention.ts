/**
 * Run retention and claim release on Run events (nvidia.com/v1beta2), behind `dgdrV1Beta2.enabled`.
 *
 * Takes: `dev.knative.apiserver.{resource,ref}.{add,update,delete}` for kind
 * `DynamoGraphDeploymentRun`, and `dev.dynamo-fn.resync` (every Run).
 * Reads: the Run (or the event's copy when it is gone; when neither, the namespace's claims that
 * carry a Run finalizer); the Runs controlled by the same request.
 * Decides: `selectRunsToRetire` (keep the five most recent finished Runs per request), and
 * `decideTraceClaim` for the Run's claim (see ./trace-claim.ts).
 * Writes: deletion of retired Runs (background propagation: their Jobs, pods and Candidates
 * follow by garbage collection), then the claim's finalizers. Only Runs controlled by a
 * request are ever retired; a Run created by hand is never touched.
 * Answers: Done; Transient on API errors that may pass.
 * @module
 */
import { DGDR_V1BETA2, DGDR_V1BETA2_KIND, LABEL_DGDR_GENERATION, RUN_KIND, RunSchema } from '../../shared/api/index.js';
import { controllerOf, isRunComplete, selectRunsToRetire, traceClaimNameOf } from '../../shared/domain/index.js';
import type { KubeObject, KubeReader } from '../../shared/kube/index.js';
import { DONE, throwFirstFailure, type KubeEvent, type ObjectKey, type Outcome, type Route } from '../../shared/runtime/index.js';
import type { CleanupDeps } from './deps.js';
import { reconcileClaim, reconcileClaimsWithRunFinalizers } from './trace-claim.js';

const RUN_REF = { apiVersion: DGDR_V1BETA2, kind: RUN_KIND } as const;

/**
 * Retires the finished Runs of `requestUid` beyond the five most recent; resolves to how many it
 * deleted and the deletes that failed. Each delete names the version read (a resourceVersion
 * precondition): a Run of that name created since the read (a request deleted and created again
 * starts over at `<name>-1`), or one a resync's snapshot is older than, is never deleted in its
 * place. A Run whose delete fails does not keep the others from being retired.
 */
async function retireRuns(deps: CleanupDeps, read: KubeReader, namespace: string, requestUid: string): Promise<{ readonly retired: number; readonly failures: readonly unknown[] }> {
  const runs = (await read.list(DGDR_V1BETA2, RUN_KIND, namespace)).filter((r) => {
    const owner = controllerOf(r);
    return owner?.kind === DGDR_V1BETA2_KIND && owner.uid === requestUid;
  });
  const retained = runs.flatMap((object) => {
    const parsed = RunSchema.safeParse(object);
    if (!parsed.success) return [];
    const generation = Number(object.metadata.labels?.[LABEL_DGDR_GENERATION] ?? '0');
    return [{ name: object.metadata.name, isFinished: isRunComplete(parsed.data), completionTime: parsed.data.status?.completionTime, generation: Number.isFinite(generation) ? generation : 0, isDeleting: object.metadata.deletionTimestamp !== undefined }];
  });
  const versions = new Map(runs.map((r) => [r.metadata.name, r.metadata.resourceVersion]));
  let retired = 0;
  const failures: unknown[] = [];
  for (const name of selectRunsToRetire(retained)) {
    const resourceVersion = versions.get(name);
    try {
      await deps.kube.delete({ ...RUN_REF, namespace, name }, { propagationPolicy: 'Background', ...(resourceVersion === undefined ? {} : { resourceVersion }) });
    } catch (error) {
      failures.push(error);
      continue;
    }
    retired += 1;
    deps.log.info({ kind: RUN_KIND, namespace, name }, 'Deleted retired DynamoGraphDeploymentRun');
  }
  return { retired, failures };
}

/** load -> retention -> claim release. */
export async function handle(event: KubeEvent, deps: CleanupDeps): Promise<Outcome> {
  if (!deps.config.dgdrV1Beta2Enabled) return DONE;
  const { namespace, name } = event.key;
  const read = deps.snapshot ?? deps.kube;
  const stored = await read.get({ ...RUN_REF, namespace, name });
  // A deleted Run is known only from the event's copy; its claim may now be released.
  const object = stored ?? (event.object as KubeObject | undefined);
  // Gone, and the event (Reference mode) does not carry it: its claim is unknown, so every
  // claim of the namespace with a Run finalizer is decided now rather than at its next event.
  if (object === undefined) return reconcileClaimsWithRunFinalizers(deps, namespace);
  const parsed = RunSchema.safeParse(object);
  if (!parsed.success) return DONE;
  const owner = controllerOf(object);
  const { retired, failures } = stored !== undefined && owner?.kind === DGDR_V1BETA2_KIND ? await retireRuns(deps, read, namespace, owner.uid) : { retired: 0, failures: [] };
  const claimName = traceClaimNameOf(parsed.data);
  // After a delete the claim's readers are read again from the API server.
  const outcome = claimName === undefined ? DONE : await reconcileClaim(deps, namespace, claimName, retired > 0 ? deps.kube : read);
  // A Run that could not be retired is reported once the rest is done.
  throwFirstFailure(failures);
  return outcome;
}

/** Every Run, for the resync tick (empty while the gate is off). */
export async function listKeys(deps: CleanupDeps): Promise<readonly ObjectKey[]> {
  if (!deps.config.dgdrV1Beta2Enabled) return [];
  return (await (deps.snapshot ?? deps.kube).list(DGDR_V1BETA2, RUN_KIND)).map((r) => ({ ...RUN_REF, namespace: r.metadata.namespace ?? '', name: r.metadata.name }));
}

export const route: Route<CleanupDeps> = { ...RUN_REF, handle, listKeys };
