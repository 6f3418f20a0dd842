/**
 * Releases and cancels through trace claims (nvidia.com/v1beta2 Runs), behind `dgdrV1Beta2.enabled`.
 *
 * Takes: `dev.knative.apiserver.{resource,ref}.{add,update,delete}` for PersistentVolumeClaim
 * and Job (a Job event names its Run's claim; a gone Job known only by reference, every claim of
 * its namespace with a Run finalizer), and `dev.dynamo-fn.resync` (the chart's claim resync
 * PingSource: every claim that carries a `nvidia.com/dgdr-run-` finalizer).
 * Reads: the claim; the Runs of its namespace; the Jobs labelled with each finalizer's Run uid.
 * Decides: `decideTraceClaim` (shared/domain, pure).
 * Writes: foreground deletion of the Jobs to stop, then the claim without the released
 * finalizers (replace with a resourceVersion precondition; other finalizers are never touched).
 * Field manager `dynamo-cleanup`.
 * Answers: Done; Transient on API errors that may pass (a 409 on the claim included).
 * @module
 */
import { DGDR_V1BETA2, LABEL_DGDR_RUN_UID, RUN_KIND, RunSchema } from '../../shared/api/index.js';
import { claimStateOf, controllerOf, controllerUidOf, decideTraceClaim, hasTraceClaimFinalizer, isRunComplete, jobStateOf, runUidOfFinalizer, traceClaimNameOf, type ClaimReader } from '../../shared/domain/index.js';
import type { KubeReader } from '../../shared/kube/index.js';
import { DONE, throwFirstFailure, type KubeEvent, type ObjectKey, type Outcome, type Route } from '../../shared/runtime/index.js';
import type { CleanupDeps } from './deps.js';

const CLAIM_REF = { apiVersion: 'v1', kind: 'PersistentVolumeClaim' } as const;

/**
 * Loads the claim and its readers (the Jobs of each reader at once); undefined when the claim is
 * gone or carries no Run finalizer. `read` answers the reads (a resync's snapshot, else the live client).
 */
export async function load(deps: CleanupDeps, namespace: string, name: string, read: KubeReader = deps.kube) {
  const object = await read.get({ ...CLAIM_REF, namespace, name });
  if (object === undefined) return undefined;
  const claim = claimStateOf(object);
  const uids = claim.finalizers.flatMap((f) => {
    const uid = runUidOfFinalizer(f);
    return uid === undefined ? [] : [uid];
  });
  if (uids.length === 0) return undefined;
  const [runs, jobsByUid] = await Promise.all([
    read.list(DGDR_V1BETA2, RUN_KIND, namespace),
    Promise.all(uids.map((uid) => read.list('batch/v1', 'Job', namespace, { labelSelector: `${LABEL_DGDR_RUN_UID}=${uid}` }))),
  ]);
  const readers = new Map<string, ClaimReader>();
  for (const [index, uid] of uids.entries()) {
    const runObject = runs.find((r) => r.metadata.uid === uid);
    // Only the Run's own Jobs (issue 20 item 1): a Job anyone labelled with the Run's uid is never stopped here, nor waited for.
    const jobs = (jobsByUid[index] ?? []).filter((job) => controllerUidOf(job) === uid).map(jobStateOf);
    const parsed = runObject === undefined ? undefined : RunSchema.safeParse(runObject);
    const run = parsed?.success === true ? { name: parsed.data.metadata.name ?? '', isComplete: isRunComplete(parsed.data), claimName: traceClaimNameOf(parsed.data) } : undefined;
    readers.set(uid, { runUid: uid, run, jobs });
  }
  return { object, claim, readers };
}

/**
 * Reconciles one claim: stop Jobs, then release finalizers; a claim with nothing to release is
 * not written. Exported for the Run route. `read` answers the loads (default the live client); a
 * write decided from other reads (a resync's snapshot) is decided again from the live client first.
 */
export async function reconcileClaim(deps: CleanupDeps, namespace: string, name: string, read: KubeReader = deps.kube): Promise<Outcome> {
  if (!deps.config.dgdrV1Beta2Enabled) return DONE;
  let loaded = await load(deps, namespace, name, read);
  if (loaded === undefined) return DONE;
  let desired = decideTraceClaim(loaded.claim, loaded.readers);
  // A resync's snapshot lists each kind when first read, so the claim, its Runs and its Jobs can
  // come from different moments: a claim listed after a Run added its finalizer, with Runs and
  // Jobs listed before that Run and its Job existed, reads as "the Run and its Jobs are deleted".
  // Releasing a finalizer or stopping a Job cannot be undone, so either is decided again from
  // the API server before it is written (the snapshot only saves the reads of claims with nothing to do).
  if (read !== deps.kube && (desired.removeFinalizers.length > 0 || desired.stopJobs.length > 0)) {
    loaded = await load(deps, namespace, name, deps.kube);
    if (loaded === undefined) return DONE;
    desired = decideTraceClaim(loaded.claim, loaded.readers);
  }
  const jobUids = new Map([...loaded.readers.values()].flatMap((reader) => reader.jobs.map((job) => [job.name, job.uid] as const)));
  for (const job of desired.stopJobs) {
    // Only the Job read (its uid a precondition): one deleted and created again under its name since is a 409, decided again.
    const uid = jobUids.get(job);
    await deps.kube.delete({ apiVersion: 'batch/v1', kind: 'Job', namespace, name: job }, { propagationPolicy: 'Foreground', ...(uid === undefined ? {} : { uid }) });
    deps.log.info({ kind: 'Job', namespace, name: job, claim: name }, 'Stopped Job for deleted PersistentVolumeClaim');
  }
  if (desired.removeFinalizers.length > 0) {
    const remove = new Set(desired.removeFinalizers);
    const finalizers = loaded.claim.finalizers.filter((f) => !remove.has(f));
    await deps.kube.replace({ ...loaded.object, metadata: { ...loaded.object.metadata, finalizers } });
    deps.log.info({ kind: 'PersistentVolumeClaim', namespace, name, removed: desired.removeFinalizers }, 'Removed finalizers from PersistentVolumeClaim');
  }
  return DONE;
}

/** A claim event: reconcile that claim. */
export async function handle(event: KubeEvent, deps: CleanupDeps): Promise<Outcome> {
  return reconcileClaim(deps, event.key.namespace, event.key.name, deps.snapshot);
}

/** Every claim with a Run finalizer, for the resync tick (empty while the gate is off). */
export async function listKeys(deps: CleanupDeps): Promise<readonly ObjectKey[]> {
  if (!deps.config.dgdrV1Beta2Enabled) return [];
  const claims = await (deps.snapshot ?? deps.kube).list(CLAIM_REF.apiVersion, CLAIM_REF.kind);
  return claims
    .filter((c) => hasTraceClaimFinalizer((c.metadata['finalizers'] as string[] | undefined) ?? []))
    .map((c) => ({ ...CLAIM_REF, namespace: c.metadata.namespace ?? '', name: c.metadata.name }));
}

/**
 * Reconciles every claim of `namespace` that carries a Run finalizer: the release path when a
 * Run or a Job is gone and its event carries no object (Reference mode), so the claim it read is
 * unknown. The decision releases the finalizers whose Run and Jobs are gone (reference "Trace
 * claim lifecycle", Protection: "or once the Run and its Jobs are deleted"). Exported for the
 * Run route.
 */
export async function reconcileClaimsWithRunFinalizers(deps: CleanupDeps, namespace: string): Promise<Outcome> {
  const claims = await deps.kube.list(CLAIM_REF.apiVersion, CLAIM_REF.kind, namespace);
  // Each claim on its own: one whose writes are refused does not keep the others' finalizers.
  const failures: unknown[] = [];
  for (const claim of claims) {
    if (!hasTraceClaimFinalizer((claim.metadata['finalizers'] as string[] | undefined) ?? [])) continue;
    try {
      await reconcileClaim(deps, namespace, claim.metadata.name);
    } catch (error) {
      failures.push(error);
    }
  }
  throwFirstFailure(failures);
  return DONE;
}

/** A Job event: reconcile the claim of the Run that controls the Job (its pods may have released the file). */
async function handleJob(event: KubeEvent, deps: CleanupDeps): Promise<Outcome> {
  if (!deps.config.dgdrV1Beta2Enabled) return DONE;
  const job = (await deps.kube.get({ apiVersion: 'batch/v1', kind: 'Job', namespace: event.key.namespace, name: event.key.name })) ?? event.object;
  // A deleted Job known only by reference: its Run (and claim) are unknown, so every claim there with a Run finalizer is decided.
  if (job === undefined) return reconcileClaimsWithRunFinalizers(deps, event.key.namespace);
  const owner = job === undefined ? undefined : controllerOf(job);
  if (owner?.kind !== RUN_KIND) return DONE;
  const run = await deps.kube.get({ apiVersion: DGDR_V1BETA2, kind: RUN_KIND, namespace: event.key.namespace, name: owner.name });
  const parsed = run === undefined ? undefined : RunSchema.safeParse(run);
  const claimName = parsed?.success === true ? traceClaimNameOf(parsed.data) : undefined;
  return claimName === undefined ? DONE : reconcileClaim(deps, event.key.namespace, claimName);
}

export const route: Route<CleanupDeps> = { ...CLAIM_REF, handle, listKeys };
export const jobRoute: Route<CleanupDeps> = { apiVersion: 'batch/v1', kind: 'Job', handle: handleJob };
