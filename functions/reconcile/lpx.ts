/**
 * Reconciles one LPXGraphDeployment (only with `lpx.enabled=true`).
 *
 * Takes: `dev.knative.apiserver.{resource,ref}.{add,update,delete}` and `dev.dynamo-fn.resync`
 * events for kind `LPXGraphDeployment` (`nvidia.com/v1alpha1`), and events for kind
 * `LpuPipelineRequest` (`scheduling.lpu.nvidia.com/v1alpha1`), which name their LPXGD through
 * the annotation `lpx.nvidia.com/deployment-name` (upstream-notes/lpx.md §6.1 watches), and
 * events for kind `ConfigMap` (`v1`; the chart's children source delivers only those labelled
 * `lpx.nvidia.com/deployment-uid`), which lead to the LPXGD that controls them, so a deleted
 * runtime ConfigMap is recreated on its own delete event (upstream watches its owned ConfigMaps).
 * Reads: the LPXGD, its owning DGD, the LPX PodCliqueSet, its PodCliqueScalingGroups and
 * PodCliques (label `app.kubernetes.io/part-of=<pcs>`; only those the PodCliqueSet or one of
 * its scaling groups controls count, `selectGroveChildren`), the namespace's LpuPipelineRequests, and
 * for the DGD the LPXGD was made from: the Model Express download status of each `gs://` build
 * (./model-express.ts, when `MODEL_EXPRESS_URL` is set) and the immutable snapshot (inventory and
 * its one compiler contract, `manifest.v2.capnp.bin` or `deployment.v1.capnp.bin`, decoded into
 * the normalized build) of each build, `file://` from
 * this pod's filesystem, `gs://` through Model Express once downloaded (./lpx-build.ts); the
 * ConfigMaps labelled with the LPXGD's uid and those at the runtime ConfigMap names the decision
 * renders (`lpxRuntimeConfigMapNames`).
 * Decides: `decideLpxGraphDeployment` (shared/domain, pure).
 * Writes: the missing runtime ConfigMaps created (immutable; never updated or adopted) before
 * server-side apply of the LPX PodCliqueSet and the serving Services; scaling-group `spec.replicas` by
 * replace with a resourceVersion precondition; pipeline requests created (never adopted) and deleted
 * with resourceVersion preconditions; the LPXGD status through the status subresource; a
 * foreground delete of a PodCliqueSet whose layout changed, after the status that retains the
 * external engine count; obsolete owned runtime ConfigMaps deleted with resourceVersion
 * preconditions, after the status; an Event on Ready transitions. Then the owning DGD is reconciled, so
 * its status follows the child.
 * Field manager `dynamo-reconcile`.
 * Answers: Done (a write the API server refuses is reported as Ready=False, reason Failed);
 * Transient on API errors that may pass (the broker retries).
 * @module
 */
import {
  ANNOTATION_LPX_DEPLOYMENT_NAME,
  CONDITION_READY,
  DGD_KIND,
  DGD_V1BETA1,
  GROVE_API_VERSION,
  LABEL_LPX_DEPLOYMENT_UID,
  LPR_API_VERSION,
  LPR_KIND,
  LPXGD_API_VERSION,
  LPXGD_KIND,
  LPX_REASON_FAILED,
  LpuPipelineRequestSchema,
  LpxGraphDeploymentSchema,
  PODCLIQUESET_KIND,
  PodCliqueScalingGroupSchema,
  PodCliqueSchema,
  parseDgd,
  type Dgd,
  type LpuPipelineRequest,
  type LpxGraphDeployment,
  type PodClique,
  type PodCliqueScalingGroup,
} from '../../shared/api/index.js';
import {
  describeApplyDrift,
  BUILD_SNAPSHOT_TIMEOUT_MS,
  decideLpxGraphDeployment,
  isLpxInputCurrent,
  lpxPodCliqueSetName,
  lpxReadyCondition,
  lpxRemoteBuildUrls,
  lpxRuntimeConfigMapNames,
  lpxRuntimeConfigMapOwner,
  lpxSnapshotBuildUrls,
  parseModelRegistryUrl,
  selectGroveChildren,
  planModelDownloads,
  type BuildRef,
  type BuildSnapshotReading,
  type DownloadCheck,
  type LpxDesired,
  type LpxObserved,
  type ObservedConfigMap,
  type ObservedPodCliqueSet,
} from '../../shared/domain/index.js';
import type { KubeObject } from '../../shared/kube/index.js';
import { DONE, PermanentError, type KubeEvent, type ObjectKey, type Outcome, type Route } from '../../shared/runtime/index.js';
import { handle as handleDgd, type ReconcileDeps } from './dgd.js';
import { acquireBuildSnapshot, fileBuildStore, modelExpressBuildStore, type BuildStore } from './lpx-build.js';

const LABEL_GROVE_PART_OF = 'app.kubernetes.io/part-of';
/** A decision that still writes after this many passes waits for the next event or resync. */
const MAX_PASSES = 4;

/** LPXGraphDeployment events and their resync. */
export const lpxGraphDeploymentRoute: Route<ReconcileDeps> = { apiVersion: LPXGD_API_VERSION, kind: LPXGD_KIND, handle, listKeys };
/** Pipeline request events (receipts): reconcile the LPXGD they name. No resync of their own. */
export const lpuPipelineRequestRoute: Route<ReconcileDeps> = { apiVersion: LPR_API_VERSION, kind: LPR_KIND, handle: handleRequest };

/**
 * LPX runtime ConfigMap events: reconcile the LPXGD that controls the ConfigMap. No resync of
 * their own (the LPXGD resync covers them). Resource mode in the chart, so a delete event still
 * carries the owner references.
 */
export const lpxConfigMapRoute: Route<ReconcileDeps> = { apiVersion: 'v1', kind: 'ConfigMap', handle: handleConfigMap };

/** The observed state plus the raw scaling groups (the replace writes need whole objects). */
interface Loaded {
  readonly observed: LpxObserved;
  readonly rawGroups: ReadonlyMap<string, KubeObject>;
  /** The LPXGD as read (its managedFields: a status that is already stored is not written again). */
  readonly raw?: KubeObject;
}

/**
 * Loads an LPXGD and everything its decision reads, its builds' download checks and snapshots
 * included (see {@link loadBuilds}); undefined when the LPXGD is gone or being deleted.
 * Throws TransientError when a build read may pass on a retry.
 */
export async function load(deps: ReconcileDeps, key: ObjectKey, registry: BuildRef | undefined, builds: BuildStore = fileBuildStore()): Promise<Loaded | undefined> {
  const raw = await deps.kube.get({ apiVersion: LPXGD_API_VERSION, kind: LPXGD_KIND, namespace: key.namespace, name: key.name });
  if (raw === undefined || raw.metadata['deletionTimestamp'] !== undefined) return undefined;
  const parsed = LpxGraphDeploymentSchema.safeParse(raw);
  if (!parsed.success) throw new PermanentError(`cannot read LPXGraphDeployment ${key.namespace}/${key.name}: ${parsed.error.message}`, { reason: 'Invalid' });
  const lpxgd = parsed.data;
  const dgdObject = await deps.kube.get({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace: key.namespace, name: key.name });
  const dgd = dgdObject === undefined ? undefined : parseDgd(dgdObject);
  const pcsName = lpxPodCliqueSetName({ namespace: key.namespace, name: key.name, uid: lpxgd.metadata.uid ?? '' });
  const pcs = await deps.kube.get({ apiVersion: GROVE_API_VERSION, kind: PODCLIQUESET_KIND, namespace: key.namespace, name: pcsName });
  const [groups, cliques] = await Promise.all([
    deps.kube.list(GROVE_API_VERSION, 'PodCliqueScalingGroup', key.namespace, { labelSelector: `${LABEL_GROVE_PART_OF}=${pcsName}` }),
    deps.kube.list(GROVE_API_VERSION, 'PodClique', key.namespace, { labelSelector: `${LABEL_GROVE_PART_OF}=${pcsName}` }),
  ]);
  // Only the PodCliqueSet's own children (issue 20; as the cleanup function reads them): a planted scaling group is never scaled, nor its replicas published.
  const grove = selectGroveChildren(pcs?.metadata.uid, groups, cliques);
  const scalingGroups = new Map<string, PodCliqueScalingGroup>();
  const rawGroups = new Map<string, KubeObject>();
  for (const object of grove.scalingGroups) {
    const group = PodCliqueScalingGroupSchema.safeParse(object);
    if (!group.success) continue;
    scalingGroups.set(object.metadata.name, group.data);
    rawGroups.set(object.metadata.name, object);
  }
  const podCliques = new Map<string, PodClique>();
  for (const object of grove.podCliques) {
    const clique = PodCliqueSchema.safeParse(object);
    if (clique.success) podCliques.set(object.metadata.name, clique.data);
  }
  const requests: LpuPipelineRequest[] = [];
  for (const object of await deps.kube.list(LPR_API_VERSION, LPR_KIND, key.namespace)) {
    const request = LpuPipelineRequestSchema.safeParse(object);
    if (request.success) requests.push(request.data);
  }
  // Builds are read (and downloads started) only for the DGD this LPXGD was made from (lpx.md §5.3:
  // the DGD is validated before the model downloads).
  const isMatchingDgd = dgd?.ok === true && isLpxInputCurrent(dgd.dgd, lpxgd);
  const { buildSnapshots, modelDownloadChecks } = dgd?.ok === true && isMatchingDgd ? await loadBuilds(deps, lpxgd, dgd.dgd, registry, builds) : { buildSnapshots: new Map(), modelDownloadChecks: new Map() };
  const configMaps = dgd?.ok === true && isMatchingDgd ? await loadLpxConfigMaps(deps, lpxgd, dgd.dgd, registry, buildSnapshots) : new Map<string, ObservedConfigMap>();
  const observed: LpxObserved = {
    lpxgd,
    dgd: dgd?.ok === true ? dgd.dgd : undefined,
    podCliqueSet: pcs === undefined ? undefined : (pcs as unknown as ObservedPodCliqueSet),
    scalingGroups,
    podCliques,
    requests,
    buildSnapshots,
    modelDownloadChecks,
    configMaps,
  };
  return { observed, rawGroups, raw };
}

/**
 * The observed runtime ConfigMaps: the LPXGD's own (label `lpx.nvidia.com/deployment-uid=<uid>`,
 * upstream `deleteUnusedConfigMaps`) and whatever is stored at each name the decision renders
 * for these snapshots (a foreign one there is refused by the decision, never adopted). Nothing
 * is read while no snapshot carries a decoded build (there are no runtime ConfigMaps then).
 */
export async function loadLpxConfigMaps(deps: ReconcileDeps, lpxgd: LpxGraphDeployment, dgd: Dgd, registry: BuildRef | undefined, buildSnapshots: ReadonlyMap<string, BuildSnapshotReading>): Promise<Map<string, ObservedConfigMap>> {
  const namespace = lpxgd.metadata.namespace ?? '';
  const out = new Map<string, ObservedConfigMap>();
  if (![...buildSnapshots.values()].some((s) => s.ok && s.build !== undefined)) return out;
  const desiredNames = lpxRuntimeConfigMapNames(lpxgd, dgd, registry, buildSnapshots);
  if (lpxgd.metadata.uid !== undefined) {
    for (const object of await deps.kube.list('v1', 'ConfigMap', namespace, { labelSelector: `${LABEL_LPX_DEPLOYMENT_UID}=${lpxgd.metadata.uid}` })) out.set(object.metadata.name, object as unknown as ObservedConfigMap);
  }
  for (const name of desiredNames.filter((n) => !out.has(n))) {
    const object = await deps.kube.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace, name });
    if (object !== undefined) out.set(name, object as unknown as ObservedConfigMap);
  }
  return out;
}

/** Upstream's error for a `gs://` build without a Model Express client (lpx.md §4 EnsureDownloaded). */
const NO_MODEL_EXPRESS = 'Model Express client is required for GCS model downloads';

/**
 * The builds' side of the observed state: the Model Express checks of the `gs://` builds the
 * plan checks (each with its share of the 30 s budget, upstream `ensureModelsDownloaded`), then
 * the snapshot of every `file://` build and of every downloaded `gs://` one (upstream acquires
 * after the downloads).
 */
async function loadBuilds(
  deps: ReconcileDeps,
  lpxgd: LpxGraphDeployment,
  dgd: Dgd,
  registry: BuildRef | undefined,
  files: BuildStore,
): Promise<{ buildSnapshots: Map<string, BuildSnapshotReading>; modelDownloadChecks: Map<string, DownloadCheck> }> {
  const plan = planModelDownloads(lpxRemoteBuildUrls(dgd, registry), lpxgd, deps.now());
  const modelDownloadChecks = new Map<string, DownloadCheck>();
  for (const url of plan.toCheck) {
    modelDownloadChecks.set(url, deps.modelExpress === undefined ? { ok: false, error: NO_MODEL_EXPRESS } : await deps.modelExpress.ensureModelDownloaded(url, plan.perBuildTimeoutMs));
  }
  const refreshErrors = [...modelDownloadChecks.values()].flatMap((c) => (c.ok ? [] : [c.error]));
  // A Ready child keeps running on a failed refresh (lpx.md §5.1 "Periodic refresh").
  if (plan.isRefresh && refreshErrors.length > 0) deps.log.warn({ errors: refreshErrors }, 'Unable to refresh model downloads');
  const isDownloaded = (url: string): boolean => {
    const check = modelDownloadChecks.get(url);
    return plan.reused.includes(url) || (check !== undefined && check.ok && check.isDownloaded);
  };
  const buildSnapshots = new Map<string, BuildSnapshotReading>();
  for (const url of lpxSnapshotBuildUrls(dgd, registry)) {
    if (url.startsWith('file://')) buildSnapshots.set(url, await acquireBuildSnapshot(files, url, deps.now));
    else if (url.startsWith('gs://') && deps.modelExpress !== undefined && isDownloaded(url)) {
      buildSnapshots.set(url, await acquireBuildSnapshot(modelExpressBuildStore(deps.modelExpress, BUILD_SNAPSHOT_TIMEOUT_MS), url, deps.now));
    }
  }
  return { buildSnapshots, modelDownloadChecks };
}

/** True when the next pass reads what this one wrote: the new PodCliqueSet's uid, or a scaled group to publish for. */
function needsAnotherPass(loaded: Loaded, desired: LpxDesired): boolean {
  if (desired.deletePodCliqueSet !== undefined) return false;
  return (loaded.observed.podCliqueSet === undefined && desired.applyPodCliqueSet !== undefined) || desired.scale.length > 0;
}

/** Performs the decision's writes: PCS, scale, requests, status; a replacement deletes the PCS after the status. */
export async function write(deps: ReconcileDeps, key: ObjectKey, loaded: Loaded, desired: LpxDesired): Promise<void> {
  const { namespace } = key;
  for (const configMap of desired.createConfigMaps) {
    // Create, never apply: immutable, and one that appeared at the name meanwhile is not adopted (lpx.md §2.3).
    const created = await deps.kube.create(configMap);
    deps.log.info({ kind: 'ConfigMap', namespace, name: configMap.metadata.name }, created === undefined ? 'Found existing ConfigMap; waiting' : 'Created ConfigMap');
  }
  // Only a PodCliqueSet that differs from the stored one is applied (issue 17 item 3: a pass that finds nothing to change writes nothing).
  if (desired.applyPodCliqueSet !== undefined && describeApplyDrift(desired.applyPodCliqueSet, loaded.observed.podCliqueSet as unknown as Record<string, unknown> | undefined, deps.kube.fieldManager) !== undefined) await deps.kube.apply(desired.applyPodCliqueSet, { force: true });
  for (const service of desired.applyServices) await deps.kube.apply(service, { force: true });
  for (const scale of desired.scale) {
    const group = loaded.rawGroups.get(scale.name);
    if (group === undefined) continue;
    await deps.kube.replace({ ...group, spec: { ...(group['spec'] as Record<string, unknown>), replicas: scale.replicas } });
    deps.log.info({ kind: 'PodCliqueScalingGroup', namespace, name: scale.name, replicas: scale.replicas }, 'Scaled PodCliqueScalingGroup');
  }
  for (const request of desired.createRequests) {
    // Create, never apply: an object that appeared at the name meanwhile is not adopted (lpx.md §3.2 "AlreadyExists means wait").
    const created = await deps.kube.create(request);
    if (created === undefined) deps.log.info({ kind: LPR_KIND, namespace, name: request.metadata.name }, `Found existing ${LPR_KIND}; waiting`);
    else deps.log.info({ kind: LPR_KIND, namespace, name: request.metadata.name }, `Created ${LPR_KIND}`);
  }
  for (const request of desired.deleteRequests) {
    await deps.kube.delete({ apiVersion: LPR_API_VERSION, kind: LPR_KIND, namespace, name: request.name }, request.resourceVersion === undefined ? {} : { resourceVersion: request.resourceVersion });
    deps.log.info({ kind: LPR_KIND, namespace, name: request.name }, `Deleted ${LPR_KIND}`);
  }
  const status = { apiVersion: LPXGD_API_VERSION, kind: LPXGD_KIND, metadata: { name: key.name, namespace }, status: desired.status };
  if (describeApplyDrift(status, loaded.raw, deps.kube.fieldManager, 'status') !== undefined) await deps.kube.applyStatus(status, { force: true });
  for (const configMap of desired.deleteConfigMaps) {
    await deps.kube.delete({ apiVersion: 'v1', kind: 'ConfigMap', namespace, name: configMap.name }, configMap.resourceVersion === undefined ? {} : { resourceVersion: configMap.resourceVersion });
    deps.log.info({ kind: 'ConfigMap', namespace, name: configMap.name }, 'Deleted obsolete ConfigMap');
  }
  if (desired.deletePodCliqueSet !== undefined) {
    // The status above already holds the retained external engine count (issue 11 part 7).
    await deps.kube.delete({ apiVersion: GROVE_API_VERSION, kind: PODCLIQUESET_KIND, namespace, name: desired.deletePodCliqueSet.name }, { propagationPolicy: 'Foreground' });
    deps.log.info({ kind: PODCLIQUESET_KIND, namespace, name: desired.deletePodCliqueSet.name }, 'Deleted PodCliqueSet for replacement');
  }
}

/**
 * load -> decideLpxGraphDeployment -> write, repeated while the next pass reads what this one
 * wrote (the new PodCliqueSet's uid, a scaled group), up to {@link MAX_PASSES};
 * then the owning DGD is reconciled so its status reflects the child. Disabled: does nothing.
 */
export async function handle(event: KubeEvent, deps: ReconcileDeps): Promise<Outcome> {
  if (!deps.config.lpxEnabled) return DONE;
  const registry = parseModelRegistryUrl(deps.config.lpxModelRegistryUrl);
  if (!registry.ok) throw new PermanentError(`cannot use LPX_MODEL_REGISTRY_URL: ${registry.error}`, { reason: 'InvalidConfig' });
  for (let pass = 0; pass < MAX_PASSES; pass += 1) {
    const loaded = await load(deps, event.key, registry.registry);
    if (loaded === undefined) return DONE;
    const desired = decideLpxGraphDeployment(loaded.observed, { registry: registry.registry, render: deps.render }, deps.now());
    try {
      await write(deps, event.key, loaded, desired);
    } catch (error) {
      if (!(error instanceof PermanentError)) throw error;
      // The API server refused what we rendered: report it on the LPXGD, never retry a bad spec.
      await writeFailure(deps, event.key, loaded, error.message);
      deps.log.warn({ err: error }, 'Reported write failure on LPXGraphDeployment');
      break;
    }
    await emitReadyTransition(deps, event.key, loaded, desired);
    if (!needsAnotherPass(loaded, desired)) break;
  }
  return handleDgd({ ...event, key: { apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace: event.key.namespace, name: event.key.name }, object: undefined }, deps);
}

const REPORTING_CONTROLLER = 'nvidia.com/dynamo-reconcile';

/** `Ready=False`, reason `Failed`, with the API server's refusal as message (lpx.md §2.2: "Errors set Failed with the error text"). */
async function writeFailure(deps: ReconcileDeps, key: ObjectKey, loaded: Loaded, message: string): Promise<void> {
  const previous = (loaded.observed.lpxgd.status?.conditions ?? []).find((c) => c.type === CONDITION_READY);
  const condition = lpxReadyCondition({ kind: 'failed', reason: LPX_REASON_FAILED, message }, loaded.observed.lpxgd.metadata.generation ?? 0, previous, deps.now());
  await deps.kube.applyStatus({ apiVersion: LPXGD_API_VERSION, kind: LPXGD_KIND, metadata: { name: key.name, namespace: key.namespace }, status: { conditions: [condition] } }, { force: true });
}

/** An Event on the LPXGD when its Ready condition changes status or reason (what `kubectl describe lpxgd` shows). */
async function emitReadyTransition(deps: ReconcileDeps, key: ObjectKey, loaded: Loaded, desired: LpxDesired): Promise<void> {
  const before = (loaded.observed.lpxgd.status?.conditions ?? []).find((c) => c.type === CONDITION_READY);
  const after = desired.status.conditions.find((c) => c.type === CONDITION_READY);
  if (after === undefined || (before?.status === after.status && before.reason === after.reason)) return;
  await deps.kube.createEvent({
    regarding: { apiVersion: LPXGD_API_VERSION, kind: LPXGD_KIND, namespace: key.namespace, name: key.name, ...(loaded.observed.lpxgd.metadata.uid === undefined ? {} : { uid: loaded.observed.lpxgd.metadata.uid }) },
    type: after.reason === LPX_REASON_FAILED ? 'Warning' : 'Normal',
    reason: after.status === 'True' ? 'LPXReady' : `LPX${after.reason}`,
    note: after.message.slice(0, 1024),
    action: 'Reconcile',
    reportingController: REPORTING_CONTROLLER,
    reportingInstance: deps.instance,
  });
}

/** A request names its LPXGD by annotation; unannotated or foreign requests are not ours. */
async function handleRequest(event: KubeEvent, deps: ReconcileDeps): Promise<Outcome> {
  if (!deps.config.lpxEnabled) return DONE;
  const request = await deps.kube.get({ apiVersion: LPR_API_VERSION, kind: LPR_KIND, namespace: event.key.namespace, name: event.key.name });
  const fromEvent = (event.object?.['metadata'] as { annotations?: Record<string, string> } | undefined)?.annotations;
  const owner = request?.metadata.annotations?.[ANNOTATION_LPX_DEPLOYMENT_NAME] ?? fromEvent?.[ANNOTATION_LPX_DEPLOYMENT_NAME];
  if (owner === undefined) return DONE;
  return handle({ ...event, key: { apiVersion: LPXGD_API_VERSION, kind: LPXGD_KIND, namespace: event.key.namespace, name: owner }, object: undefined }, deps);
}

/**
 * A runtime ConfigMap names its LPXGD by its controller reference (`lpxRuntimeConfigMapOwner`);
 * one no LPXGD controls is not ours. The event's copy is used when it has one (a deleted
 * ConfigMap cannot be read back). Disabled: does nothing.
 */
async function handleConfigMap(event: KubeEvent, deps: ReconcileDeps): Promise<Outcome> {
  if (!deps.config.lpxEnabled) return DONE;
  const object = event.object ?? (await deps.kube.get(event.key));
  const owner = object === undefined ? undefined : lpxRuntimeConfigMapOwner(object);
  if (owner === undefined) {
    deps.log.debug({}, 'Skipped ConfigMap no LPXGraphDeployment controls');
    return DONE;
  }
  return handle({ ...event, key: { apiVersion: LPXGD_API_VERSION, kind: LPXGD_KIND, namespace: owner.namespace, name: owner.name }, object: undefined }, deps);
}

/** Every LPXGD, for the periodic resync; none while LPX is disabled (the CRD may be absent). */
export async function listKeys(deps: ReconcileDeps): Promise<readonly ObjectKey[]> {
  if (!deps.config.lpxEnabled) return [];
  const objects = await deps.kube.list(LPXGD_API_VERSION, LPXGD_KIND);
  return objects.map((o) => ({ apiVersion: LPXGD_API_VERSION, kind: LPXGD_KIND, namespace: o.metadata.namespace ?? '', name: o.metadata.name }));
}
