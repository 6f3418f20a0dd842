/**
 * Reconciles one DynamoGraphDeploymentRun (nvidia.com/v1beta2), behind `dgdrV1Beta2.enabled`.
 *
 * Takes: `dev.knative.apiserver.{resource,ref}.{add,update,delete}` for kind
 * `DynamoGraphDeploymentRun`, and `dev.dynamo-fn.resync`; the Job, Pod, Candidate and
 * PersistentVolumeClaim routes below map their object to the Runs it concerns (they have no
 * resync of their own: the Runs' resync reads them).
 * Reads: the Run; its trace claim; its Job (`<run>-aisimulate`) and the Job's pods (label
 * `nvidia.com/dgdr-run-uid`); its Candidates (same label); the owning request, when the Run has one.
 * Decides: `decideRun` (shared/domain, pure): the Run decision table.
 * Reads the Job before the claim (see `load`).
 * Writes, in order: the claim finalizer `nvidia.com/dgdr-run-<uid>` (replace with a
 * resourceVersion precondition), then the Job's ServiceAccount `dgdr-profiling-job` and its
 * RoleBinding when missing (as for v1beta1 profiling Jobs), then the Job (create by server-side
 * apply, never over a Job the Run does not control), or a Job stop (foreground deletion); then the Run status through
 * the status subresource (with the Run's resourceVersion read as precondition) (phase, jobRef, times, the `Completed` condition); then Events on
 * Completed transitions. Field manager `dynamo-profile-run` (the profile function gives Runs their own client).
 * Answers: Done; Transient on API errors that may pass (a 409 on the claim included).
 * @module
 */
import {
  CANDIDATE_KIND,
  CONDITION_COMPLETED,
  CONDITION_PUBLISHED,
  CONDITION_VALID,
  DGDR_V1BETA2,
  DGDR_V1BETA2_KIND,
  LABEL_DGDR_GENERATION,
  LABEL_DGDR_RUN_UID,
  RUN_KIND,
  RunSchema,
  type Condition,
  type Run,
} from '../../shared/api/index.js';
import {
  claimStateOf,
  controllerOf,
  controllerUidOf,
  decideRun,
  decideStatusWrite,
  RUN_STATUS_OWNERSHIP,
  isRunComplete,
  jobStateOf,
  profilingJobRbac,
  renderRunJob,
  runJobName,
  traceClaimNameOf,
  waitingContainersOf,
  type RunDesired,
  type RunObserved,
} from '../../shared/domain/index.js';
import { kubeStatusOf, type Kube, type KubeObject, type KubeReader } from '../../shared/kube/index.js';
import { publishCandidates, type PublisherDeps } from './publisher.js';
import { DONE, PermanentError, type KubeEvent, type ObjectKey, type Outcome, type Route } from '../../shared/runtime/index.js';

export interface RunDeps extends PublisherDeps {
  readonly kube: Kube;
  /** Events' `reportingInstance` (the pod or revision name). */
  readonly instance: string;
  /** In a resync: its reads, answered from one LIST per kind (shared/kube `createListSnapshot`); a pass's first load reads here, writes and re-reads go to `kube`. */
  readonly snapshot?: KubeReader;
}

const REPORTING_CONTROLLER = 'nvidia.com/dynamo-profile';
const RUN_REF = { apiVersion: DGDR_V1BETA2, kind: RUN_KIND } as const;

/** What `load` found: the stored Run and the observed state the decision reads. */
export interface RunLoaded {
  readonly object: KubeObject;
  readonly observed: RunObserved;
}

function conditionOf(conditions: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/**
 * Whether the owning request has moved on: its `metadata.generation` differs from the Run's
 * `nvidia.com/dgdr-generation` label, or it is gone. A Run with no request owner is never
 * superseded. Source: reference "Trace claim lifecycle" ("The request starts one Run per
 * metadata.generation"; a spec change fails the old Run with Superseded).
 */
async function isSuperseded(read: KubeReader, run: Run, object: KubeObject): Promise<boolean> {
  const owner = controllerOf(object);
  if (owner === undefined || owner.kind !== DGDR_V1BETA2_KIND) return false;
  let request: KubeObject | undefined;
  try {
    request = await read.get({ apiVersion: DGDR_V1BETA2, kind: DGDR_V1BETA2_KIND, namespace: run.metadata.namespace ?? '', name: owner.name });
  } catch (error) {
    // The request API is not served (its CRD lacks v1beta2): no newer spec can exist.
    if (error instanceof PermanentError && error.reason === 'UnknownKind') return false;
    throw error;
  }
  if (request === undefined || request.metadata.uid !== owner.uid) return true;
  return String(request.metadata.generation ?? '') !== (run.metadata.labels?.[LABEL_DGDR_GENERATION] ?? String(request.metadata.generation ?? ''));
}

/**
 * Loads the Run and everything the decision reads, the independent reads at once; undefined
 * when the Run is gone, being deleted, or finished (a finished Run never changes: decideRun, and
 * the publisher skips it). `read` answers the reads (a resync's snapshot, else the live client).
 */
export async function load(deps: RunDeps, key: ObjectKey, read: KubeReader = deps.kube): Promise<RunLoaded | undefined> {
  const object = await read.get({ ...RUN_REF, namespace: key.namespace, name: key.name });
  if (object === undefined || object.metadata['deletionTimestamp'] !== undefined) return undefined;
  // A Run that does not parse is refused for good, never an exception (a 500 the broker would
  // retry; issue 20 item 4): classified Permanent, answered 2xx and logged with the reasons.
  const parsed = RunSchema.safeParse(object);
  if (!parsed.success) {
    throw new PermanentError(`${RUN_KIND} ${key.namespace}/${key.name} is not a valid ${RUN_KIND}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`, { reason: 'InvalidSpec' });
  }
  const run = parsed.data;
  if (isRunComplete(run)) return undefined;
  const namespace = key.namespace;
  const uid = run.metadata.uid ?? '';
  const claimName = traceClaimNameOf(run);
  const jobName = run.status?.jobRef?.name ?? runJobName(key.name);
  const selector = { labelSelector: `${LABEL_DGDR_RUN_UID}=${uid}` };
  const [jobObject, candidates, superseded] = await Promise.all([
    read.get({ apiVersion: 'batch/v1', kind: 'Job', namespace, name: jobName }),
    read.list(DGDR_V1BETA2, CANDIDATE_KIND, namespace, selector),
    isSuperseded(read, run, object),
  ]);
  // The claim is read after the Job, never beside it: a Job seen stopped (or gone) because its
  // claim is being deleted then always comes with the claim seen being deleted. Read in
  // parallel (or from a resync snapshot listing claims first), a claim read just before its
  // deletion and a Job read just after its stop ended the Run JobDeleted instead of
  // TraceSourceDeleted (issue 18: "1 of 2 runs" in dev).
  const claimObject = claimName === undefined ? undefined : await read.get({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace, name: claimName });
  const isOurs = jobObject !== undefined && controllerUidOf(jobObject) === uid;
  const job = isOurs ? jobStateOf(jobObject) : undefined;
  // Only the Job's own pods and the Run's own Candidates (issue 20 item 1): anyone who can
  // create them can also put the Run's uid in a label.
  const pods = job !== undefined && job.outcome === 'Active' ? (await read.list('v1', 'Pod', namespace, selector)).filter((pod) => controllerUidOf(pod) === jobObject?.metadata.uid) : [];
  const ownCandidates = candidates.filter((c) => controllerUidOf(c) === uid);
  const validCandidates = ownCandidates.filter((c) => {
    const conditions = (c['status'] as { conditions?: Condition[] } | undefined)?.conditions;
    return conditionOf(conditions, CONDITION_VALID)?.status === 'True';
  }).length;
  const observed: RunObserved = {
    run,
    claim: claimObject === undefined ? undefined : claimStateOf(claimObject),
    job,
    waiting: waitingContainersOf(pods),
    isSuperseded: superseded,
    publication: { isPublished: conditionOf(run.status?.conditions, CONDITION_PUBLISHED)?.status === 'True', candidates: ownCandidates.length, validCandidates },
    ...(jobObject !== undefined && !isOurs ? { foreignJobName: jobName } : {}),
  };
  return { object, observed };
}

/** Adds the Run's finalizer to its claim: read-modify-write with the resourceVersion precondition (a 409 is Transient). */
async function addClaimFinalizer(deps: RunDeps, namespace: string, claimName: string, finalizer: string): Promise<void> {
  const claim = await deps.kube.get({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace, name: claimName });
  if (claim === undefined) return; // Gone meanwhile: the next event decides again (TraceSourceMissing).
  const finalizers = Array.isArray(claim.metadata['finalizers']) ? (claim.metadata['finalizers'] as string[]) : [];
  if (finalizers.includes(finalizer)) return;
  await deps.kube.replace({ ...claim, metadata: { ...claim.metadata, finalizers: [...finalizers, finalizer] } });
  deps.log.info({ kind: 'PersistentVolumeClaim', namespace, name: claimName, finalizer }, 'Added finalizer to PersistentVolumeClaim');
}

/** Performs the decision's writes in order, then the status and Events. */
export async function write(deps: RunDeps, loaded: RunLoaded, desired: RunDesired): Promise<void> {
  const { run } = loaded.observed;
  const namespace = run.metadata.namespace ?? '';
  let jobRef = run.status?.jobRef ?? (loaded.observed.job === undefined ? undefined : { name: loaded.observed.job.name, ...(loaded.observed.job.uid === undefined ? {} : { uid: loaded.observed.job.uid }) });
  for (const action of desired.verdict.actions) {
    switch (action.kind) {
      case 'AddClaimFinalizer':
        await addClaimFinalizer(deps, namespace, action.claimName, action.finalizer);
        break;
      case 'CreateJob': {
        // The Job's ServiceAccount (its output step writes the results ConfigMap) and its binding, created when missing; existing ones are left as they are.
        for (const object of profilingJobRbac(namespace)) await deps.kube.create(object as Parameters<Kube['create']>[0]);
        const job = renderRunJob(run, { defaultImage: deps.config.aisimulateImage });
        const created = await deps.kube.apply(job as unknown as Parameters<Kube['apply']>[0], { force: true });
        jobRef = { name: created.metadata.name, ...(created.metadata.uid === undefined ? {} : { uid: created.metadata.uid }) };
        deps.log.info({ kind: 'Job', namespace, name: created.metadata.name }, 'Created Job');
        break;
      }
      case 'StopJob':
        await deps.kube.delete({ apiVersion: 'batch/v1', kind: 'Job', namespace, name: action.jobName }, { propagationPolicy: 'Foreground' });
        deps.log.info({ kind: 'Job', namespace, name: action.jobName }, 'Stopped Job');
        break;
      default: {
        const unreachable: never = action;
        throw new Error(`unknown Run action ${JSON.stringify(unreachable)}`);
      }
    }
  }
  const status = { ...desired.status, ...(jobRef === undefined ? {} : { jobRef }) };
  // A pass that changes nothing writes nothing: the status only when an owned field differs.
  if (decideStatusWrite(run.status, status, RUN_STATUS_OWNERSHIP).kind === 'Changed') {
    // With the Run's resourceVersion as precondition: a pass that read the Run before another
    // pass wrote it (a final Completed=True among them) gets a 409 and decides again (`handle`)
    // instead of writing its older verdict over the newer one.
    const resourceVersion = loaded.object.metadata['resourceVersion'];
    await deps.kube.applyStatus({ ...RUN_REF, metadata: { name: run.metadata.name ?? '', namespace, ...(typeof resourceVersion === 'string' ? { resourceVersion } : {}) }, status }, { force: true });
  }
  const before = conditionOf(run.status?.conditions, CONDITION_COMPLETED);
  const after = desired.status.conditions[0];
  if (after !== undefined && (before?.reason !== after.reason || before.status !== after.status)) {
    const failedOrWaiting = desired.verdict.phase === 'Failed' || after.reason === 'ContainerWaiting' || after.reason === 'TraceSourceMissing' || after.reason === 'JobConflict';
    await deps.kube.createEvent({
      regarding: { ...RUN_REF, namespace, name: run.metadata.name ?? '', ...(run.metadata.uid === undefined ? {} : { uid: run.metadata.uid }) },
      type: failedOrWaiting ? 'Warning' : 'Normal',
      reason: after.reason,
      note: after.message,
      action: 'Reconcile',
      reportingController: REPORTING_CONTROLLER,
      reportingInstance: deps.instance,
    });
  }
}

/** The publisher runs once the Run's own Job completed, until it published (and never for a superseded or finished Run). */
function shouldPublish(observed: RunObserved): boolean {
  const { job } = observed;
  return job !== undefined && job.outcome === 'Complete' && !job.isDeleting && !observed.isSuperseded && !observed.publication.isPublished && !isRunComplete(observed.run);
}

/** load -> (publish Candidates) -> decideRun -> write. Does nothing while the `dgdrV1Beta2.enabled` gate is off. */
export async function handle(event: KubeEvent, deps: RunDeps): Promise<Outcome> {
  if (!deps.config.dgdrV1Beta2Enabled) return DONE;
  try {
    return await reconcileRun(event, deps, deps.snapshot);
  } catch (error) {
    if (!isStaleRunWrite(error)) throw error;
  }
  // Another pass wrote the Run after this one read it (its status write was refused, see
  // `write`): decide once more from what is stored now; a second conflict goes to the broker.
  return reconcileRun(event, deps, deps.kube);
}

/** A status write refused because the Run changed since it was read (409 Conflict on the resourceVersion precondition). */
function isStaleRunWrite(error: unknown): boolean {
  const status = kubeStatusOf(error);
  return status?.code === 409 && status.reason === 'Conflict' && !status.causeReasons.includes('FieldManagerConflict');
}

/** One pass: load (from `read`) -> (publish Candidates) -> decideRun -> write. */
async function reconcileRun(event: KubeEvent, deps: RunDeps, read: KubeReader | undefined): Promise<Outcome> {
  let loaded = await load(deps, event.key, read);
  if (loaded === undefined) return DONE; // Gone (its Job and Candidates go with it, by owner references), or finished.
  if (shouldPublish(loaded.observed) && (await publishCandidates(deps, loaded.observed.run))) {
    loaded = await load(deps, event.key);
    if (loaded === undefined) return DONE;
  }
  let desired = decideRun(loaded.observed, deps.now());
  if (desired === undefined) return DONE;
  // A resync's snapshot lists each kind when first read: a Run listed before it was deleted with
  // its Job listed after garbage collection took the Job reads as a Run without its Job, and
  // creating the Job (and the claim finalizer before it) would bring back a Job of a deleted Run
  // after the claim was released. Actions cannot be undone, so they are decided again from the
  // API server first (the status alone is written from the snapshot: its precondition guards it).
  if (read !== undefined && read !== deps.kube && desired.verdict.actions.length > 0) {
    loaded = await load(deps, event.key);
    if (loaded === undefined) return DONE;
    desired = decideRun(loaded.observed, deps.now());
    if (desired === undefined) return DONE;
  }
  await write(deps, loaded, desired);
  return DONE;
}

/** Every Run in the cluster, for the periodic resync (empty while the gate is off). */
export async function listKeys(deps: RunDeps): Promise<readonly ObjectKey[]> {
  if (!deps.config.dgdrV1Beta2Enabled) return [];
  const runs = await (deps.snapshot ?? deps.kube).list(DGDR_V1BETA2, RUN_KIND);
  return runs.map((r) => ({ ...RUN_REF, namespace: r.metadata.namespace ?? '', name: r.metadata.name }));
}

/** Reconciles each named Run in turn (the related-object routes end here). */
async function handleRuns(deps: RunDeps, event: KubeEvent, names: readonly string[]): Promise<Outcome> {
  for (const name of names) {
    const outcome = await handle({ ...event, key: { ...RUN_REF, namespace: event.key.namespace, name } }, deps);
    if (outcome.kind !== 'Done') return outcome;
  }
  return DONE;
}

/** The Runs of the namespace whose uid is `uid` (at most one). */
async function runsWithUid(deps: RunDeps, namespace: string, uid: string | undefined): Promise<string[]> {
  if (uid === undefined) return [];
  const runs = await deps.kube.list(DGDR_V1BETA2, RUN_KIND, namespace);
  return runs.filter((r) => r.metadata.uid === uid).map((r) => r.metadata.name);
}

/**
 * A Job event reconciles the Run that controls it. A Job already gone names its Run through
 * the event's copy (Resource mode) or its `nvidia.com/dgdr-run-uid` label; otherwise the resync
 * covers it.
 */
async function handleJob(event: KubeEvent, deps: RunDeps): Promise<Outcome> {
  if (!deps.config.dgdrV1Beta2Enabled) return DONE;
  const job = (await deps.kube.get({ apiVersion: 'batch/v1', kind: 'Job', namespace: event.key.namespace, name: event.key.name })) ?? event.object;
  if (job === undefined) return DONE;
  const owner = controllerOf(job);
  if (owner?.kind === RUN_KIND) return handleRuns(deps, event, [owner.name]);
  return DONE;
}

/** A Pod event reconciles the Run named by its `nvidia.com/dgdr-run-uid` label (waiting containers). */
async function handlePod(event: KubeEvent, deps: RunDeps): Promise<Outcome> {
  if (!deps.config.dgdrV1Beta2Enabled) return DONE;
  const pod = (await deps.kube.get({ apiVersion: 'v1', kind: 'Pod', namespace: event.key.namespace, name: event.key.name })) ?? event.object;
  const labels = (pod?.['metadata'] as { labels?: Record<string, string> } | undefined)?.labels;
  return handleRuns(deps, event, await runsWithUid(deps, event.key.namespace, labels?.[LABEL_DGDR_RUN_UID]));
}

/** A claim event reconciles every open Run that reads it (a missing claim that appears starts its Runs). */
async function handleClaim(event: KubeEvent, deps: RunDeps): Promise<Outcome> {
  if (!deps.config.dgdrV1Beta2Enabled) return DONE;
  const runs = await deps.kube.list(DGDR_V1BETA2, RUN_KIND, event.key.namespace);
  const readers = runs.filter((r) => {
    const parsed = RunSchema.safeParse(r);
    return parsed.success && traceClaimNameOf(parsed.data) === event.key.name;
  });
  return handleRuns(deps, event, readers.map((r) => r.metadata.name));
}

/**
 * A Candidate event reconciles the Run that controls it (the Run counts its Valid Candidates
 * for `Completed`). A Candidate already gone names its Run through the event's copy (Resource
 * mode) or its `nvidia.com/dgdr-run-uid` label; otherwise the Runs' resync covers it.
 */
async function handleCandidate(event: KubeEvent, deps: RunDeps): Promise<Outcome> {
  if (!deps.config.dgdrV1Beta2Enabled) return DONE;
  const candidate = (await deps.kube.get({ apiVersion: DGDR_V1BETA2, kind: CANDIDATE_KIND, namespace: event.key.namespace, name: event.key.name })) ?? event.object;
  if (candidate === undefined) return DONE;
  const owner = controllerOf(candidate);
  if (owner?.kind === RUN_KIND) return handleRuns(deps, event, [owner.name]);
  const labels = (candidate['metadata'] as { labels?: Record<string, string> } | undefined)?.labels;
  return handleRuns(deps, event, await runsWithUid(deps, event.key.namespace, labels?.[LABEL_DGDR_RUN_UID]));
}

/** The bindings: Runs (with resync), and the Jobs, Pods, Candidates and claims that wake a Run. */
export const route: Route<RunDeps> = { ...RUN_REF, handle, listKeys };
export const candidateRoute: Route<RunDeps> = { apiVersion: DGDR_V1BETA2, kind: CANDIDATE_KIND, handle: handleCandidate };
export const jobRoute: Route<RunDeps> = { apiVersion: 'batch/v1', kind: 'Job', handle: handleJob };
export const podRoute: Route<RunDeps> = { apiVersion: 'v1', kind: 'Pod', handle: handlePod };
export const claimRoute: Route<RunDeps> = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', handle: handleClaim };
