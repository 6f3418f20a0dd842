/**
 * Reconciles one native v1beta2 DynamoGraphDeploymentRequest into its DynamoGraphDeploymentRuns,
 * behind `dgdrV1Beta2.enabled`.
 *
 * Takes: `dev.knative.apiserver.{resource,ref}.{add,update,delete}` and `dev.dynamo-fn.resync`
 * for kind `DynamoGraphDeploymentRequest` (the DGDR route of ./index.ts hands every request
 * event to the v1beta1 lifecycle and to this file), and Run events (a Run's change reconciles
 * the request that controls it: a stopped Run lets the next one start).
 * Reads: the request at `nvidia.com/v1beta2` (not served, or a native v1beta1 request, whose
 * v1beta2 view carries the read-only `spec.v1beta1`: nothing to do here); the Runs of its
 * namespace it controls, and the object named like the current generation's Run.
 * Decides: `decideRequestRuns`, `decideRequestAccepted` (shared/domain, pure).
 * Writes, in order: each open Run of an older generation is reconciled by the Run logic
 * (./run.ts: its Job stopped by foreground deletion, then the Run fails `Superseded`); the
 * current generation's Run (create, never over an existing object); the request's status through
 * the status subresource (`observedGeneration`, `activeRunRef`, `recentRunRefs` newest first,
 * `Accepted`); an Event `RunCreated`. Field manager `dynamo-profile-run`.
 * Source: reference "Trace claim lifecycle" ("The request starts one Run per
 * metadata.generation"), "v1beta2 DGD Overrides" ("Changing the request's spec stops the old Run
 * and its publisher before starting the replacement Run"); upstream-notes/dgdr.md §5 (status).
 * Answers: Done; Permanent for a spec that does not parse (reported, not retried); Transient on
 * API errors that may pass.
 * @module
 */
import {
  DGDR_V1BETA2,
  DGDR_V1BETA2_KIND,
  DgdrV1Beta2SpecSchema,
  LABEL_DGDR_GENERATION,
  RUN_KIND,
  formatIssues,
  fromZodIssues,
  type Condition,
} from '../../shared/api/index.js';
import {
  controllerOf,
  controllerUidOf,
  decideRequestAccepted,
  decideRequestRuns,
  decideStatusWrite,
  REQUEST_STATUS_OWNERSHIP,
  hasConversionView,
  isRunComplete,
  nextCondition,
  runNameFor,
  type RequestObserved,
  type RequestRun,
  type RequestRunsDesired,
} from '../../shared/domain/index.js';
import type { Kube, KubeObject, KubeReader } from '../../shared/kube/index.js';
import { DONE, PermanentError, TransientError, type KubeEvent, type ObjectKey, type Outcome, type Route } from '../../shared/runtime/index.js';
import { handle as handleRun, type RunDeps } from './run.js';

const REPORTING_CONTROLLER = 'nvidia.com/dynamo-profile';
const REQUEST_REF = { apiVersion: DGDR_V1BETA2, kind: DGDR_V1BETA2_KIND } as const;
const RUN_REF = { apiVersion: DGDR_V1BETA2, kind: RUN_KIND } as const;

/** What `load` found: the stored request and the observed state the decision reads. */
export interface RequestLoaded {
  readonly object: KubeObject;
  readonly observed: RequestObserved;
}

/** The request as served at v1beta2; undefined when not served, gone, being deleted, or a native v1beta1 request. */
async function getNativeV1Beta2(read: KubeReader, key: Pick<ObjectKey, 'namespace' | 'name'>): Promise<KubeObject | undefined> {
  let object: KubeObject | undefined;
  try {
    object = await read.get({ ...REQUEST_REF, namespace: key.namespace, name: key.name });
  } catch (error) {
    // The request API is not served at v1beta2 (its CRD lacks the version): no v1beta2 request exists.
    if (error instanceof PermanentError && error.reason === 'UnknownKind') return undefined;
    throw error;
  }
  if (object === undefined || object.metadata['deletionTimestamp'] !== undefined) return undefined;
  // A native v1beta1 request appears at v1beta2 with its read-only `spec.v1beta1` view: the v1beta1 lifecycle's.
  return hasConversionView(object['spec'], 'v1beta1') ? undefined : object;
}

/** A controlled Run as the decision sees it: its generation label (0 when missing) and whether it is complete. */
function requestRunOf(run: KubeObject): RequestRun {
  const generation = Number.parseInt(run.metadata.labels?.[LABEL_DGDR_GENERATION] ?? '', 10);
  const status = run['status'] as { conditions?: Condition[] } | undefined;
  return {
    name: run.metadata.name,
    uid: run.metadata.uid,
    generation: Number.isInteger(generation) ? generation : 0,
    isComplete: isRunComplete({ status: status?.conditions === undefined ? undefined : { conditions: status.conditions } }),
  };
}

/** A spec that does not parse (admission and the CRD schema admit only valid ones: an object stored before them), with the field issues. */
export interface InvalidRequest {
  readonly invalid: string;
}

/**
 * Loads the request and its Runs. Out: undefined when there is no native v1beta2 request;
 * InvalidRequest when its spec does not parse (paths as `spec.<field>`).
 */
export async function load(deps: RunDeps, key: Pick<ObjectKey, 'namespace' | 'name'>, read: KubeReader = deps.kube): Promise<RequestLoaded | InvalidRequest | undefined> {
  const object = await getNativeV1Beta2(read, key);
  if (object === undefined) return undefined;
  const parsed = DgdrV1Beta2SpecSchema.safeParse(object['spec']);
  if (!parsed.success) return { invalid: formatIssues(fromZodIssues(parsed.error.issues, ['spec'])) };
  const uid = object.metadata.uid ?? '';
  const generation = object.metadata.generation ?? 1;
  const runs = (await read.list(DGDR_V1BETA2, RUN_KIND, key.namespace)).filter((run) => controllerUidOf(run) === uid);
  const runName = runNameFor(key.name, generation);
  const named = runs.some((run) => run.metadata.name === runName) ? undefined : await read.get({ ...RUN_REF, namespace: key.namespace, name: runName });
  return {
    object,
    observed: {
      request: { name: key.name, namespace: key.namespace, uid, generation, spec: parsed.data },
      runs: runs.map(requestRunOf),
      ...(named === undefined ? {} : { foreignRunName: runName }),
    },
  };
}

/** Creates the Run (never over an existing object), writes the request's status, then the Event. */
export async function write(deps: RunDeps, loaded: RequestLoaded, desired: RequestRunsDesired): Promise<void> {
  const { request } = loaded.observed;
  let activeRunRef = desired.activeRunRef;
  if (desired.createRun !== undefined) {
    const created = await deps.kube.create(desired.createRun as unknown as Parameters<Kube['create']>[0]);
    if (created === undefined) throw new TransientError(`${RUN_KIND} ${request.namespace}/${String((desired.createRun['metadata'] as { name: string }).name)} already exists; reconciling again to inspect it`);
    activeRunRef = { name: created.metadata.name, ...(created.metadata.uid === undefined ? {} : { uid: created.metadata.uid }) };
    deps.log.info({ kind: RUN_KIND, namespace: request.namespace, name: created.metadata.name, generation: request.generation }, 'Created DynamoGraphDeploymentRun');
  }
  const previous = (loaded.object['status'] as { conditions?: Condition[] } | undefined)?.conditions;
  const accepted = nextCondition(previous, decideRequestAccepted(loaded.observed, desired), deps.now());
  const status = { observedGeneration: request.generation, ...(activeRunRef === undefined ? {} : { activeRunRef }), recentRunRefs: desired.recentRunRefs, conditions: [accepted] };
  // A pass that changes nothing writes nothing: the status only when a field this logic owns differs.
  if (decideStatusWrite(loaded.object['status'], status, REQUEST_STATUS_OWNERSHIP).kind === 'Changed') {
    await deps.kube.applyStatus({ ...REQUEST_REF, metadata: { name: request.name, namespace: request.namespace }, status }, { force: true });
  }
  if (desired.createRun !== undefined && activeRunRef !== undefined) {
    await deps.kube.createEvent({
      regarding: { ...REQUEST_REF, namespace: request.namespace, name: request.name, uid: request.uid },
      type: 'Normal',
      reason: accepted.reason,
      note: `Created ${RUN_KIND} ${activeRunRef.name} for generation ${request.generation}`,
      action: 'Create',
      reportingController: REPORTING_CONTROLLER,
      reportingInstance: deps.instance,
    });
  }
}

/**
 * load -> reconcile the superseded Runs -> decideRequestRuns -> write. Does nothing while the
 * `dgdrV1Beta2.enabled` gate is off or when the request is not a native v1beta2 request.
 */
export async function handle(event: KubeEvent, deps: RunDeps): Promise<Outcome> {
  if (!deps.config.dgdrV1Beta2Enabled) return DONE;
  let loaded = await load(deps, event.key, deps.snapshot);
  if (loaded === undefined) return DONE;
  if ('invalid' in loaded) {
    deps.log.warn({ issues: loaded.invalid }, 'Skipped invalid DynamoGraphDeploymentRequest');
    return { kind: 'Permanent', reason: 'InvalidSpec', message: loaded.invalid };
  }
  const first = decideRequestRuns(loaded.observed);
  if (first.supersededRuns.length > 0) {
    // The Run logic stops each superseded Run (it reads the request's newer generation), then the Runs are read again.
    for (const name of first.supersededRuns) await handleRun({ ...event, key: { ...RUN_REF, namespace: event.key.namespace, name }, object: undefined }, deps);
    loaded = await load(deps, event.key);
    if (loaded === undefined || 'invalid' in loaded) return DONE;
  }
  await write(deps, loaded, decideRequestRuns(loaded.observed));
  return DONE;
}

/**
 * A Run event reconciles the v1beta2 request that controls it (its owner reference; a Run
 * already gone names it through the event's copy), so a Run that stopped lets the next start.
 */
export async function handleRunEvent(event: KubeEvent, deps: RunDeps): Promise<Outcome> {
  if (!deps.config.dgdrV1Beta2Enabled) return DONE;
  const run = (await (deps.snapshot ?? deps.kube).get({ ...RUN_REF, namespace: event.key.namespace, name: event.key.name })) ?? event.object;
  const owner = run === undefined ? undefined : controllerOf(run);
  if (owner === undefined || owner.kind !== DGDR_V1BETA2_KIND) return DONE;
  return handle({ ...event, key: { ...REQUEST_REF, namespace: event.key.namespace, name: owner.name }, object: undefined }, deps);
}

/** The bindings: the request (its events come through the DGDR route of ./index.ts) and the Runs that wake it. */
export const route: Route<RunDeps> = { ...REQUEST_REF, handle };
export const runRoute: Route<RunDeps> = { ...RUN_REF, handle: handleRunEvent };
