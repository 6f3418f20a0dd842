/**
 * Reconciles one DynamoGraphDeploymentRequest (v1beta1): hardware discovery, the profiling Job,
 * the generated DGD and the request's status.
 *
 * Takes: `dev.knative.apiserver.{resource,ref}.{add,update,delete}` and `dev.dynamo-fn.resync`
 * events for kind `DynamoGraphDeploymentRequest`; events for its children map back to it: a `Job`
 * (label `dgdr`, owner reference), a `ConfigMap` or `DynamoGraphDeployment` (labels
 * `dgdr.nvidia.com/name` + `dgdr.nvidia.com/namespace`).
 * Reads: the DGDR now; the Job `profile-<name>` and its pods (label `job-name`); the ConfigMap
 * `dgdr-output-<name>`; the DGD `status.dgdName` and, while it is not ready, its pods (image-pull
 * diagnostics); the request's ConfigMaps while deploying; every Node, the DCGM and Intel XPU
 * exporter pods and their metrics (HTTP, shared/discovery; a success kept 60 s per SKU filter) and the
 * network operator's pods (only while Pending and discovery is needed); the model-cache PVC when set.
 * Decides: `decideDgdr` (shared/domain/dgdr, pure).
 * Writes, in order: the discovered `spec.hardware` (update with the resourceVersion precondition),
 * delete of a stale output ConfigMap this request controls (never one it cannot prove its own: that
 * one is neither read nor deleted, and the request fails with `OutputConfigMapConflict`), create (when missing) of the Job's service account
 * `dgdr-profiling-job` and its RoleBinding, create of the Job, server-side apply of the request's
 * annotations, create of planner ConfigMaps (labelled with the request's uid; one of that name the
 * request did not create fails it with `PlannerConfigMapConflict`) and of the DGD (labelled likewise;
 * never taking over an existing object),
 * the status through the status subresource, then Events. Field manager `dynamo-profile`.
 * Answers: Done; Permanent when the request failed (reported on its status); Transient on API
 * errors that may pass (and when a child it just created is not visible yet).
 * @module
 */
import {
  DGDR_KIND,
  DGDR_V1BETA1,
  DGD_KIND,
  DGD_V1BETA1,
  DgdrSchema,
  isDgdrV1Beta2View,
  LABEL_DGDR,
  LABEL_DGDR_NAME,
  LABEL_DGDR_NAMESPACE,
  LABEL_GRAPH_DEPLOYMENT_NAME,
  LABEL_JOB_NAME,
  formatIssues,
  fromZodIssues,
  type Dgdr,
  type DgdrStatus,
} from '../../shared/api/index.js';
import {
  DEFAULT_DCGM_ENDPOINT_TEMPLATE,
  DEFAULT_INTEL_XPU_ENDPOINT_TEMPLATE,
  decideDgdr,
  decideDgdRejected,
  dgdrReadsOf,
  needsHardwareDiscovery,
  needsHardwareMetadataDiscovery,
  OUTPUT_COPIER_CONTAINER,
  outputConfigMapName,
  profilingJobName,
  profilingJobRbac,
  hasMetricsExporters,
  isControlledBy,
  readMetricsGpuNodes,
  isPlannerConfigMapCreatedByUs,
  decidePlannerConfigMapConflict,
  configMapCreationFailedEvent,
  withoutUnchangedStatus,
  type ChildFacts,
  type DgdrDesired,
  type DgdrObserved,
  type JobCondition,
  type PodFacts,
  type ProfilingJobConfig,
} from '../../shared/domain/index.js';
import type { Kube, KubeObject, KubeReader } from '../../shared/kube/index.js';
import { DONE, PermanentError, TransientError, type HandlerDeps, type KubeEvent, type ObjectKey, type Outcome, type Route } from '../../shared/runtime/index.js';
import { loadDiscoverySignals, type GpuDiscoveryCache, type ScrapeMetrics } from '../../shared/discovery/index.js';

export interface ProfileDeps extends HandlerDeps {
  readonly kube: Kube;
  readonly profilingJob: ProfilingJobConfig;
  /** Events' `reportingInstance` (the pod or revision name). */
  readonly instance: string;
  /** Where DCGM exporter pods are scraped (`{POD_IP}` replaced); default `http://{POD_IP}:9400/metrics`. */
  readonly dcgmEndpointTemplate?: string;
  /** Where Intel XPU exporter pods are scraped (`{POD_IP}` replaced); default `http://{POD_IP}:8080/metrics`. */
  readonly intelXpuEndpointTemplate?: string;
  /** How a metrics endpoint is read; default an HTTP GET with upstream's timeouts (shared/discovery). */
  readonly scrapeMetrics?: ScrapeMetrics;
  /** This instance's 60 s cache of successful metrics discoveries (absent: every discovery scrapes). */
  readonly discoveryCache?: GpuDiscoveryCache;
  /** The namespaces whose DaemonSet-controlled exporter pods are trusted (`GPU_EXPORTER_NAMESPACES`); absent: `gpu-operator`. */
  readonly exporterNamespaces?: readonly string[];
  /** In a resync: its reads, answered from one LIST per kind (shared/kube `createListSnapshot`); a pass's first load reads here, writes and re-reads go to `kube`. */
  readonly snapshot?: KubeReader;
}

export const REPORTING_CONTROLLER = 'nvidia.com/dynamo-profile';

type Obj = Record<string, unknown>;

/** The binding: DGDR events of group nvidia.com, and the DGDR resync. */
export const route: Route<ProfileDeps> = { apiVersion: DGDR_V1BETA1, kind: DGDR_KIND, handle, listKeys };

/** A profiling Job's event names its request (label `dgdr`). */
export const jobRoute: Route<ProfileDeps> = { apiVersion: 'batch/v1', kind: 'Job', handle: (event, deps) => handleChild(event, deps, parentOfJob) };
/** An output or planner ConfigMap's event names its request (tracking labels). */
export const configMapRoute: Route<ProfileDeps> = { apiVersion: 'v1', kind: 'ConfigMap', handle: (event, deps) => handleChild(event, deps, parentByLabels) };
/** A generated DGD's event names its request (tracking labels). */
export const dgdRoute: Route<ProfileDeps> = { apiVersion: DGD_V1BETA1, kind: DGD_KIND, handle: (event, deps) => handleChild(event, deps, parentByLabels) };

function parentOfJob(child: KubeObject): ObjectKey | undefined {
  const name = child.metadata.labels?.[LABEL_DGDR];
  if (name === undefined || child.metadata.name !== profilingJobName(name)) return undefined;
  return { apiVersion: DGDR_V1BETA1, kind: DGDR_KIND, namespace: child.metadata.namespace ?? '', name };
}

function parentByLabels(child: KubeObject): ObjectKey | undefined {
  const name = child.metadata.labels?.[LABEL_DGDR_NAME];
  const namespace = child.metadata.labels?.[LABEL_DGDR_NAMESPACE];
  if (name === undefined || namespace === undefined) return undefined;
  return { apiVersion: DGDR_V1BETA1, kind: DGDR_KIND, namespace, name };
}

/** Loads the child the event names (it may be gone: use the event's copy then) and reconciles its request. */
async function handleChild(event: KubeEvent, deps: ProfileDeps, parentOf: (child: KubeObject) => ObjectKey | undefined): Promise<Outcome> {
  const stored = await deps.kube.get(event.key);
  const child = stored ?? (event.object as KubeObject | undefined);
  const parent = child?.metadata === undefined ? undefined : parentOf(child);
  if (parent === undefined) return DONE; // Not a child of any request.
  return handle({ ...event, key: parent, object: undefined }, deps);
}

function childFacts(object: KubeObject): ChildFacts {
  const owners = object.metadata['ownerReferences'];
  return {
    name: object.metadata.name,
    ...(object.metadata.uid === undefined ? {} : { uid: object.metadata.uid }),
    labels: object.metadata.labels ?? {},
    ownerReferences: Array.isArray(owners) ? (owners as ChildFacts['ownerReferences']) : [],
    ...(object.metadata.resourceVersion === undefined ? {} : { resourceVersion: object.metadata.resourceVersion }),
    ...(object.metadata['deletionTimestamp'] === undefined || object.metadata['deletionTimestamp'] === null ? {} : { isDeleting: true }),
  };
}

/** The waiting containers (init and regular) of a pod, for image-pull diagnostics. */
function waitingContainers(pod: KubeObject): DgdrObserved['dgdPodContainers'] {
  const status = (pod['status'] ?? {}) as { initContainerStatuses?: { name: string; state?: { waiting?: { reason?: string; message?: string } } }[]; containerStatuses?: { name: string; state?: { waiting?: { reason?: string; message?: string } } }[] };
  return [...(status.initContainerStatuses ?? []), ...(status.containerStatuses ?? [])].flatMap((c) => {
    const waiting = c.state?.waiting;
    return waiting === undefined ? [] : [{ pod: pod.metadata.name, container: c.name, reason: waiting.reason ?? '', message: waiting.message ?? '' }];
  });
}

function podFacts(pod: KubeObject): PodFacts {
  const status = (pod['status'] ?? {}) as { phase?: string; containerStatuses?: { name: string; state?: PodFacts['profiler'] }[] };
  const stateOf = (name: string) => status.containerStatuses?.find((c) => c.name === name)?.state;
  return { name: pod.metadata.name, phase: status.phase, profiler: stateOf('profiler'), outputCopier: stateOf(OUTPUT_COPIER_CONTAINER) };
}

/**
 * Loads what the request's decision reads in its phase (`dgdrReadsOf`: a Failed request reads
 * nothing more, unless it failed before its DGD existed, `isFailedBeforeItsDgd`), the independent
 * reads at once. `read` answers the reads (a resync's
 * snapshot, else the live client). Failures: the kube client's.
 */
export async function load(deps: ProfileDeps, key: ObjectKey, dgdr: Dgdr, read: KubeReader = deps.kube): Promise<DgdrObserved> {
  const namespace = key.namespace;
  const jobName = profilingJobName(key.name);
  const phase = dgdr.status?.phase ?? 'Pending';
  const reads = dgdrReadsOf(dgdr.status);
  const [job, output, dgd, configMaps] = await Promise.all([
    reads.job ? read.get({ apiVersion: 'batch/v1', kind: 'Job', namespace, name: jobName }) : undefined,
    // Pending reads it from the API server, not a resync's snapshot (a Pending request is read once, as the PVC below):
    // the decision deletes only a stale output it controls and refuses a foreign one before the Job exists (issue 20).
    reads.output ? (phase === 'Pending' ? deps.kube : read).get({ apiVersion: 'v1', kind: 'ConfigMap', namespace, name: outputConfigMapName(key.name) }) : undefined,
    !reads.dgd || dgdr.status?.dgdName === undefined ? undefined : read.get({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace, name: dgdr.status.dgdName }),
    reads.dgd ? read.list('v1', 'ConfigMap', namespace, { labelSelector: `${LABEL_DGDR_NAME}=${key.name},${LABEL_DGDR_NAMESPACE}=${namespace}` }) : [],
  ]);
  const dgdState = ((dgd?.['status'] ?? {}) as { state?: string }).state;
  const isJobFailed = ((job?.['status'] as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []).some((c) => c.type === 'Failed' && c.status === 'True');
  const [dgdPods, labelledPods] = await Promise.all([
    phase === 'Deploying' && dgd !== undefined && dgdState !== 'successful' ? read.list('v1', 'Pod', namespace, { labelSelector: `${LABEL_GRAPH_DEPLOYMENT_NAME}=${dgd.metadata.name}` }) : [],
    reads.jobPods && job !== undefined && isJobFailed ? read.list('v1', 'Pod', namespace, { labelSelector: `${LABEL_JOB_NAME}=${jobName}` }) : [],
  ]);
  // Only the Job's own pods (controlled by its uid): anyone can label a pod `job-name`, and its status would become the request's message.
  const pods = labelledPods.filter((pod) => isControlledBy(childFacts(pod), job?.metadata.uid));
  const isDiscovering = phase === 'Pending' && job === undefined;
  const isDiscoveringHardware = isDiscovering && (needsHardwareDiscovery(dgdr.spec.hardware) || needsHardwareMetadataDiscovery(dgdr.spec.hardware));
  const nodes = isDiscoveringHardware ? await deps.kube.list('v1', 'Node') : undefined;
  const gpuSku = dgdr.spec.hardware?.gpuSku;
  const discoverySignals = isDiscoveringHardware
    ? await loadDiscoverySignals(deps.kube, {
        templates: { dcgm: deps.dcgmEndpointTemplate ?? DEFAULT_DCGM_ENDPOINT_TEMPLATE, intelXpu: deps.intelXpuEndpointTemplate ?? DEFAULT_INTEL_XPU_ENDPOINT_TEMPLATE },
        ...(deps.scrapeMetrics === undefined ? {} : { scrape: deps.scrapeMetrics }),
        ...(gpuSku === undefined ? {} : { gpuSku }),
        ...(deps.discoveryCache === undefined ? {} : { cache: deps.discoveryCache }),
        ...(deps.exporterNamespaces === undefined ? {} : { trustedNamespaces: deps.exporterNamespaces }),
        log: deps.log,
      })
    : undefined;
  const metrics = discoverySignals?.dcgm === undefined ? undefined : readMetricsGpuNodes(discoverySignals.dcgm, gpuSku, []);
  // Exporters present but unreadable: the node labels decide; say why, as upstream logs it.
  if (metrics?.ok === false && discoverySignals?.dcgm !== undefined && hasMetricsExporters(discoverySignals.dcgm)) {
    deps.log.warn({ error: metrics.error }, 'DCGM discovery failed, falling back to node-label discovery');
  }
  const pvcName = dgdr.spec.modelCache?.pvcName;
  // Read from the API server, not a resync's snapshot: a Pending request is read once (no claims list for it).
  const pvc = isDiscovering && pvcName !== undefined && pvcName !== '' ? await deps.kube.get({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace, name: pvcName }) : undefined;
  const dgdStatus = (dgd?.['status'] ?? {}) as { state?: string; components?: Record<string, { replicas?: number; availableReplicas?: number }> };
  return {
    dgdr,
    job: job === undefined ? undefined : { ...childFacts(job), conditions: (job['status'] as { conditions?: JobCondition[] } | undefined)?.conditions ?? [] },
    jobPods: pods.map(podFacts),
    outputData: output === undefined ? undefined : ((output['data'] ?? {}) as Record<string, string>),
    // Its owners decide whether the data is read at all (classifyOutputConfigMap, issue 20).
    output: output === undefined ? undefined : childFacts(output),
    dgd: dgd === undefined ? undefined : { ...childFacts(dgd), state: dgdStatus.state, components: Object.values(dgdStatus.components ?? {}) },
    configMaps: configMaps.map(childFacts),
    dgdPodContainers: dgdPods.flatMap(waitingContainers),
    nodes: nodes?.map((n) => ({ name: n.metadata.name, labels: n.metadata.labels ?? {} })),
    ...(discoverySignals === undefined ? {} : { discoverySignals }),
    modelCachePvcExists: isDiscovering && pvcName !== undefined && pvcName !== '' ? pvc !== undefined : undefined,
  };
}

function ref(dgdr: KubeObject): { apiVersion: string; kind: string; namespace: string; name: string; uid?: string } {
  return { apiVersion: DGDR_V1BETA1, kind: DGDR_KIND, namespace: dgdr.metadata.namespace ?? '', name: dgdr.metadata.name, ...(dgdr.metadata.uid === undefined ? {} : { uid: dgdr.metadata.uid }) };
}

/** Performs one step's writes, in the decision's order. Throws TransientError/PermanentError from shared/kube. */
export async function write(deps: ProfileDeps, stored: KubeObject, dgdr: Dgdr, desired: DgdrDesired): Promise<DgdrDesired> {
  const namespace = stored.metadata.namespace ?? '';
  let current = stored;
  if (desired.hardware !== undefined) {
    // An update (not an apply): the discovered values become the user's spec, as upstream persists them.
    current = await deps.kube.replace({ ...current, spec: { ...(current['spec'] as Obj), hardware: desired.hardware } });
    deps.log.info({ hardware: desired.hardware }, 'Persisted discovered hardware on DynamoGraphDeploymentRequest');
  }
  if (desired.deleteStaleOutput !== undefined) {
    // Only the version the decision proved ours: a ConfigMap replaced since the read is a 409 (TransientError), decided again.
    const { name, resourceVersion } = desired.deleteStaleOutput;
    await deps.kube.delete({ apiVersion: 'v1', kind: 'ConfigMap', namespace, name }, resourceVersion === undefined ? {} : { resourceVersion });
  }
  if (desired.job !== undefined) {
    // The Job's service account and its binding, created when missing; existing ones are left as they are.
    for (const object of profilingJobRbac(namespace)) await deps.kube.create(object as Parameters<Kube['create']>[0]);
    const job = desired.job as Parameters<Kube['create']>[0];
    const created = await deps.kube.create(job);
    if (created === undefined) throw new TransientError(`Job ${namespace}/${job.metadata.name} already exists; reconciling again to inspect it`);
    deps.log.info({ kind: 'Job', name: job.metadata.name }, 'Created Job');
  }
  if (desired.annotations !== undefined) {
    // Only the annotations this function owns; an empty set is sent as none, so server-side apply removes ours.
    const annotations = Object.keys(desired.annotations).length === 0 ? {} : { annotations: desired.annotations };
    current = await deps.kube.apply({ apiVersion: DGDR_V1BETA1, kind: DGDR_KIND, metadata: { name: stored.metadata.name, namespace, resourceVersion: current.metadata.resourceVersion, ...annotations } }, { force: true });
  }
  const events = [...desired.events];
  let result = desired;
  /** The ConfigMaps of the output this request created (in this pass or an earlier one), with the version seen. */
  const ours: { name: string; resourceVersion: string | undefined }[] = [];
  for (const [index, configMap] of desired.configMaps.entries()) {
    const object = configMap as Parameters<Kube['create']>[0];
    let created: KubeObject | undefined;
    try {
      created = await deps.kube.create(object);
    } catch (error) {
      // Refused for good (the profiling output is the request author's): a Warning, and the step
      // goes on without this ConfigMap and the ones after it, as upstream's does; retrying it at
      // every resync would only fail again.
      if (!(error instanceof PermanentError)) throw error;
      deps.log.warn({ err: error, kind: 'ConfigMap', name: object.metadata.name }, 'Failed to create ConfigMap from profiling output');
      events.push(configMapCreationFailedEvent(object.metadata.name, error.message));
      break;
    }
    if (created !== undefined) {
      ours.push({ name: object.metadata.name, resourceVersion: created.metadata.resourceVersion });
      continue;
    }
    const existing = await deps.kube.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace, name: object.metadata.name });
    if (existing === undefined) throw new TransientError(`ConfigMap ${namespace}/${object.metadata.name} already existed and is gone; reconciling again to create it`);
    // Ours only when stamped with this request's uid by an earlier pass (issue 20); else the request fails naming it and no DGD follows.
    if (isPlannerConfigMapCreatedByUs(childFacts(existing), dgdr)) {
      ours.push({ name: object.metadata.name, resourceVersion: existing.metadata.resourceVersion });
      continue;
    }
    // Nothing half-written: no DGD will mount the request's own ConfigMaps and nothing owns them,
    // so they go with the failure (left, they would stay forever, and a new request from the same
    // output would meet them as conflicts in turn).
    const later = await ownConfigMapsAmong(deps, namespace, dgdr, desired.configMaps.slice(index + 1));
    result = { ...decidePlannerConfigMapConflict(dgdr, desired.status, object.metadata.name, deps.now()), deleteConfigMaps: [...ours, ...later] };
    events.length = 0;
    events.push(...result.events);
    break;
  }
  for (const adopted of result.adoptConfigMaps) {
    // The planner ConfigMap now belongs to the DGD (it was created by this function with no owner);
    // only the version the decision proved its own: one replaced since the read is a 409 (TransientError), decided again.
    // The uid too: an apply to a ConfigMap deleted since the read would create it (empty) whatever resourceVersion it
    // carries; with the uid the API server refuses that with a 409 instead.
    const precondition = { ...(adopted.resourceVersion === undefined ? {} : { resourceVersion: adopted.resourceVersion }), ...(adopted.uid === undefined ? {} : { uid: adopted.uid }) };
    await deps.kube.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: adopted.name, namespace, ...precondition, ownerReferences: adopted.ownerReferences } }, { force: true });
  }
  /** Writes the status at the version read (or written) before: a decision made on a stale read (two events for one request handled at once) gets 409, a TransientError, and is decided again on a fresh read. */
  const writeStatus = async (status: DgdrStatus): Promise<void> => {
    current = await deps.kube.applyStatus({ apiVersion: DGDR_V1BETA1, kind: DGDR_KIND, metadata: { name: stored.metadata.name, namespace, resourceVersion: current.metadata.resourceVersion }, status }, { force: true });
  };
  if (result.status !== undefined) await writeStatus(result.status);
  if (result.dgd !== undefined) {
    // After the status write (kept by withoutUnchangedStatus when a DGD is to be created): its
    // precondition proves the request is still as read, so a pass that read it before another
    // failed it creates no DGD.
    const object = result.dgd as Parameters<Kube['create']>[0];
    try {
      const created = await deps.kube.create(object);
      if (created === undefined) throw new TransientError(`DynamoGraphDeployment ${namespace}/${object.metadata.name} already exists; reconciling again to check who created it`);
      deps.log.info({ kind: DGD_KIND, name: object.metadata.name }, 'Created DynamoGraphDeployment');
    } catch (error) {
      if (!(error instanceof PermanentError)) throw error;
      result = decideDgdRejected(dgdr, error.message, deps.now());
      events.length = 0;
      events.push(...result.events);
      if (result.status !== undefined) await writeStatus(result.status);
    }
  }
  // The Events before the deletes below: once the status is written Failed, the next pass is
  // decideFailed, which deletes what this pass did not but never reports the failure again.
  for (const event of events) {
    await deps.kube.createEvent({ regarding: ref(current), type: event.type, reason: event.reason, note: event.note, action: event.action, reportingController: REPORTING_CONTROLLER, reportingInstance: deps.instance });
  }
  // After the status write, whose precondition proves the decision was made on a current read: a
  // stale pass (refused there) deletes nothing, and a Failed request deletes again at its next pass
  // whatever this pass did not (decideFailed).
  for (const { name, resourceVersion } of result.deleteConfigMaps) {
    // Only the version read: one changed since is a 409 (TransientError), decided again.
    await deps.kube.delete({ apiVersion: 'v1', kind: 'ConfigMap', namespace, name }, resourceVersion === undefined ? {} : { resourceVersion });
    deps.log.info({ kind: 'ConfigMap', name }, 'Deleted ConfigMap the failed request created');
  }
  return result;
}

/**
 * Of `configMaps` (the output's ConfigMaps after the conflicting one, which an earlier pass may
 * have created), those that read as created by this request (`isPlannerConfigMapCreatedByUs`),
 * with the version read. Throws TransientError/PermanentError from shared/kube.
 */
async function ownConfigMapsAmong(deps: ProfileDeps, namespace: string, dgdr: Dgdr, configMaps: readonly Obj[]): Promise<DgdrDesired['deleteConfigMaps']> {
  const own: { name: string; resourceVersion: string | undefined }[] = [];
  for (const configMap of configMaps) {
    const name = (configMap as Parameters<Kube['create']>[0]).metadata.name;
    const existing = await deps.kube.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace, name });
    if (existing !== undefined && isPlannerConfigMapCreatedByUs(childFacts(existing), dgdr)) own.push({ name, resourceVersion: existing.metadata.resourceVersion });
  }
  return own;
}

/**
 * load -> decideDgdr (without a status write that changes nothing) -> write. Never branches on
 * the event type: the event only names the request. In a resync, the request and its children
 * are read from the resync's snapshot (one LIST per kind for every request).
 */
export async function handle(event: KubeEvent, deps: ProfileDeps): Promise<Outcome> {
  const read = deps.snapshot ?? deps.kube;
  const stored = await read.get({ apiVersion: DGDR_V1BETA1, kind: DGDR_KIND, namespace: event.key.namespace, name: event.key.name });
  if (stored === undefined) return DONE; // Gone: its Job and output go with it (owner references); the DGD persists by design.
  if (stored.metadata['deletionTimestamp'] !== undefined) return DONE;
  // A native v1beta2 request reads through v1beta1 as its spec.v1beta2 view: not a v1beta1 request to profile.
  if (isDgdrV1Beta2View(stored)) return DONE;
  const parsed = DgdrSchema.safeParse(stored);
  if (!parsed.success) {
    // Admission and the CRD schema admit only valid requests; an object stored before them is reported, not retried.
    const message = formatIssues(fromZodIssues(parsed.error.issues));
    deps.log.warn({ issues: message }, 'Skipped invalid DynamoGraphDeploymentRequest');
    return { kind: 'Permanent', reason: 'InvalidSpec', message };
  }
  const observed = await load(deps, event.key, parsed.data, read);
  // A pass that changes nothing writes nothing: the status is written only when it differs.
  const desired = withoutUnchangedStatus(decideDgdr(observed, deps.profilingJob, deps.now()), parsed.data.status);
  const result = await write(deps, stored, parsed.data, desired);
  if (result.status?.phase === 'Failed' && parsed.data.status?.phase !== 'Failed') {
    const failure = result.status.conditions?.find((c) => c.type === 'Succeeded');
    return { kind: 'Permanent', reason: failure?.reason ?? 'Failed', message: failure?.message ?? '' };
  }
  return DONE;
}

/** Every DGDR in the cluster, for the periodic resync. */
export async function listKeys(deps: ProfileDeps): Promise<readonly ObjectKey[]> {
  const requests = await (deps.snapshot ?? deps.kube).list(DGDR_V1BETA1, DGDR_KIND);
  return requests.map((d) => ({ apiVersion: DGDR_V1BETA1, kind: DGDR_KIND, namespace: d.metadata.namespace ?? '', name: d.metadata.name }));
}
