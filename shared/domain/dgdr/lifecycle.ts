/**
 * The DGDR v1beta1 lifecycle as one pure decision: `decideDgdr(observed, config, now)`.
 * Phases `Pending -> Profiling -> Ready | Deploying -> Deployed | Failed`, one step per call (the
 * status write's own update event, or the resync, brings the next step); the five conditions with
 * their reasons; the profiling Job; the generated DGD (never adopted: an existing DGD this request
 * did not create is reported as a conflict); Events. Issue 20 "the same rule everywhere": the
 * request acts on (reads, adopts, reports) a child only when it can prove it created it for this
 * request (a controller reference to its uid, or the uid label stamped at creation); names and
 * name labels alone prove nothing.
 *
 * Source: ../shared/reference/dgdr-reference.txt "Lifecycle", "Conditions", "Status", "Resource
 * ownership", "Profiler image version compatibility"; ../shared/upstream-notes/dgdr.md §1.2-§1.5 and
 * profiler.md §1.6-§1.9 (reasons and messages word for word); upstream
 * deploy/operator/internal/controller/dynamographdeploymentrequest_controller.go.
 * @module
 */
import { parseAllDocuments, stringify as stringifyYaml } from 'yaml';
import {
  ANNOTATION_ADDITIONAL_RESOURCES,
  ANNOTATION_GENERATED_DGD_SPEC,
  CONDITION_DEPLOYMENT_READY,
  CONDITION_PROFILING,
  CONDITION_SPEC_GENERATED,
  CONDITION_SUCCEEDED,
  CONDITION_VALIDATION,
  DGD_KIND,
  DGD_V1BETA1,
  LABEL_DGDR_NAME,
  LABEL_DGDR_NAMESPACE,
  LABEL_DGDR_UID,
  LABEL_MANAGED_BY,
  LABEL_VALUE_DYNAMO_OPERATOR,
  MAX_ADDITIONAL_RESOURCES_BYTES,
  type Condition,
  type Dgdr,
  type DgdrHardware,
  type DgdrPhase,
  type DgdrStatus,
  type ProfilingPhase,
} from '../../api/index.js';
import { isDeepEqual, isObject } from '../admission/common.js';
import { discoverHardware, discoverHardwareMetadata, needsHardwareDiscovery, needsHardwareMetadataDiscovery, type DiscoverySignals, type NodeFacts } from './discovery.js';
import { findDeprecatedTargetTranslations, formatOverrideWarning } from './overrides.js';
import { applyRuntimeVersionOverride, describeJobFailure, generatedDgdName, readJobOutcome, readProfilerOutput, splitGeneratedOutput, stripProfilingJobTolerations, type JobCondition, type PodFacts } from './profiler-output.js';
import { buildProfilingJob, outputConfigMapName, profilingJobName, type ProfilingJobConfig } from './profiling-job.js';

type Obj = Record<string, unknown>;

/** A child object as the decision reads it. */
export interface ChildFacts {
  readonly name: string;
  readonly uid?: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly ownerReferences: readonly { readonly uid?: unknown; readonly controller?: unknown }[];
  /** The version read (a precondition for the writes that act on what the decision proved). */
  readonly resourceVersion?: string;
  /** Whether it is being deleted already (`metadata.deletionTimestamp` set: another finalizer holds it). */
  readonly isDeleting?: boolean;
}

/** What the profile function loaded for one DGDR. */
export interface DgdrObserved {
  readonly dgdr: Dgdr;
  /** The Job `profile-<name>`, when it exists. */
  readonly job: (ChildFacts & { readonly conditions: readonly JobCondition[] }) | undefined;
  /** Pods of that Job (label `job-name`), for failure details. */
  readonly jobPods: readonly PodFacts[];
  /** Data of the ConfigMap `dgdr-output-<name>`, when it exists; read only when {@link output} proves it is this request's. */
  readonly outputData: Readonly<Record<string, string>> | undefined;
  /** Name, labels, owner references and resourceVersion of that ConfigMap, when it exists. */
  readonly output: ChildFacts | undefined;
  /** The DGD named `status.dgdName`, when it exists. */
  readonly dgd: (ChildFacts & { readonly state: string | undefined; readonly components: readonly { readonly replicas?: number; readonly availableReplicas?: number }[] }) | undefined;
  /** Waiting containers (init and regular) of the DGD's pods, loaded while Deploying a DGD that is not yet successful. */
  readonly dgdPodContainers: readonly { readonly pod: string; readonly container: string; readonly reason: string; readonly message: string }[];
  /** ConfigMaps with this request's tracking labels (the planner ConfigMaps, the output); loaded while Ready, Deploying or Deployed. */
  readonly configMaps: readonly ChildFacts[];
  /** Every Node (name, labels); loaded only when Pending and discovery is needed. */
  readonly nodes: readonly NodeFacts[] | undefined;
  /** The metrics exporters (DCGM, Intel XPU) and the network operator's pods, loaded with the Nodes (absent where not loaded). */
  readonly discoverySignals?: DiscoverySignals;
  /** Whether `spec.modelCache.pvcName` exists in the namespace (undefined when not set). */
  readonly modelCachePvcExists: boolean | undefined;
}

/** An Event about the DGDR. */
export interface DgdrEventIntent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly note: string;
  readonly action: string;
}

/** The writes one step makes, in this order: hardware, stale output, Job, annotations, ConfigMaps, DGD, status, events. */
export interface DgdrDesired {
  /** `spec.hardware` to persist (an update of the DGDR, resourceVersion precondition). */
  readonly hardware: DgdrHardware | undefined;
  /** Delete this request's stale `dgdr-output-<name>` ConfigMap before the Job is created (only this version: resourceVersion precondition). */
  readonly deleteStaleOutput: { readonly name: string; readonly resourceVersion: string | undefined } | undefined;
  /** The profiling Job to create. */
  readonly job: Obj | undefined;
  /** `metadata.annotations` the function owns on the DGDR (server-side apply), when they change. */
  readonly annotations: Readonly<Record<string, string>> | undefined;
  /** Planner ConfigMaps to create (never taking over an existing one). */
  readonly configMaps: readonly Obj[];
  /** The DGD to create (never taking over an existing one). */
  readonly dgd: Obj | undefined;
  /**
   * The output's ConfigMaps this request created, to delete at the version read (a precondition):
   * set when the request fails `PlannerConfigMapConflict` before its DGD exists, so nothing it
   * half-wrote stays behind unowned (no DGD will mount them, and nothing would ever delete them).
   */
  readonly deleteConfigMaps: readonly { readonly name: string; readonly resourceVersion: string | undefined }[];
  /**
   * Planner ConfigMaps to hand to the DGD: their owner references become the DGD as controller
   * (server-side apply; the version and uid proved, when read, as preconditions: an apply whose
   * object is gone would otherwise create it, empty).
   */
  readonly adoptConfigMaps: readonly { readonly name: string; readonly resourceVersion?: string; readonly uid?: string; readonly ownerReferences: readonly Obj[] }[];
  /** The whole status the function owns; undefined: leave the status as it is. */
  readonly status: DgdrStatus | undefined;
  readonly events: readonly DgdrEventIntent[];
}

/** Reasons and messages (upstream-notes/profiler.md §1.9 unless marked "ours"). */
export const REASON_VALIDATION_PASSED = 'ValidationPassed';
export const REASON_VALIDATION_FAILED = 'ValidationFailed';
export const REASON_DISCOVERING_HARDWARE = 'DiscoveringHardware';
export const REASON_INITIALIZING = 'Initializing';
export const REASON_PROFILING_RUNNING = 'ProfilingRunning';
export const REASON_PROFILING_COMPLETED = 'ProfilingCompleted';
export const REASON_PROFILING_FAILED = 'ProfilingFailed';
export const REASON_JOB_CREATION_FAILED = 'JobCreationFailed';
export const REASON_SPEC_GENERATED = 'SpecGenerated';
export const REASON_GENERATION_FAILED = 'GenerationFailed';
export const REASON_DEPLOYMENT_IN_PROGRESS = 'DeploymentInProgress';
export const REASON_DEPLOYMENT_READY = 'DeploymentReady';
export const REASON_DEPLOYMENT_DEGRADED = 'DeploymentDegraded';
export const REASON_DEPLOYMENT_DELETED = 'DeploymentDeleted';
export const REASON_DEPLOYMENT_REJECTED = 'DeploymentRejected';
/** Ours: upstream adopts a same-named DGD it did not create (profiler.md §1.7 "Collisions"). */
export const REASON_DEPLOYMENT_NAME_CONFLICT = 'DeploymentNameConflict';
/** Ours: a Job named `profile-<name>` that this request does not control. */
export const REASON_JOB_NAME_CONFLICT = 'JobNameConflict';
/** Ours (issue 20): a ConfigMap named `dgdr-output-<name>` that this request does not control; never read, never deleted. */
export const REASON_OUTPUT_NAME_CONFLICT = 'OutputConfigMapConflict';
/** Ours (issue 20 "the same rule everywhere"): a planner ConfigMap the profiling output names exists and was not created by this request; never adopted. */
export const REASON_PLANNER_CONFIG_MAP_CONFLICT = 'PlannerConfigMapConflict';

export const MESSAGE_DISCOVERING_HARDWARE = 'Discovering GPU hardware and preparing profiling job';
export const MESSAGE_SPEC_GENERATED = 'DynamoGraphDeployment spec generated successfully';
export const MESSAGE_SPEC_IN_ANNOTATION = `Generated spec is available in annotation ${ANNOTATION_GENERATED_DGD_SPEC}`;

const SUCCEEDED_BY_PHASE: Readonly<Record<DgdrPhase, { status: 'True' | 'False'; reason: string; message: string }>> = {
  Pending: { status: 'False', reason: 'Pending', message: 'DGDR is pending' },
  Profiling: { status: 'False', reason: 'Profiling', message: 'Profiling is in progress' },
  Ready: { status: 'True', reason: 'SpecGenerated', message: 'Profiling complete, spec available' },
  Deploying: { status: 'False', reason: 'Deploying', message: 'Deployment is in progress' },
  Deployed: { status: 'True', reason: 'Deployed', message: 'Deployment is healthy' },
  Failed: { status: 'False', reason: 'Failed', message: 'DGDR has failed' },
};

const FAILURE_PREFIXES: readonly (readonly [string, string])[] = [
  [CONDITION_VALIDATION, 'Validation failed: '],
  [CONDITION_PROFILING, 'Profiling failed: '],
  [CONDITION_SPEC_GENERATED, 'Spec generation failed: '],
  [CONDITION_DEPLOYMENT_READY, 'Deployment failed: '],
];

/** A condition as the decision writes it (lastTransitionTime is filled by {@link withCondition}). */
interface ConditionIntent {
  readonly type: string;
  readonly status: 'True' | 'False';
  readonly reason: string;
  readonly message: string;
}

/**
 * Sets a condition in a list keyed by `type`, keeping `lastTransitionTime` when the status did not
 * change (apimeta.SetStatusCondition). `DeploymentReady` carries no observedGeneration (upstream). Pure.
 */
function withCondition(conditions: readonly Condition[], intent: ConditionIntent, generation: number, now: Date): Condition[] {
  const previous = conditions.find((c) => c.type === intent.type);
  const lastTransitionTime = previous !== undefined && previous.status === intent.status ? previous.lastTransitionTime : now.toISOString();
  const condition: Condition = {
    ...intent,
    lastTransitionTime,
    ...(intent.type === CONDITION_DEPLOYMENT_READY ? {} : { observedGeneration: generation }),
  };
  const out = conditions.filter((c) => c.type !== intent.type);
  out.push(condition);
  return out.sort((a, b) => a.type.localeCompare(b.type));
}

/**
 * The aggregate `Succeeded` condition for a phase; for Failed, the first of Validation, Profiling,
 * SpecGenerated, DeploymentReady that is False with a message gives its reason and the prefixed message.
 * Source: upstream `setSucceededCondition` (upstream-notes/dgdr.md §1.3, table word for word). Pure.
 */
export function succeededCondition(phase: DgdrPhase, conditions: readonly Condition[]): ConditionIntent {
  const base = SUCCEEDED_BY_PHASE[phase];
  if (phase === 'Failed') {
    for (const [type, prefix] of FAILURE_PREFIXES) {
      const failed = conditions.find((c) => c.type === type && c.status === 'False' && c.message !== '');
      if (failed !== undefined) return { type: CONDITION_SUCCEEDED, status: 'False', reason: failed.reason, message: `${prefix}${failed.message}` };
    }
  }
  return { type: CONDITION_SUCCEEDED, ...base };
}

/** A status builder over the observed status: each step sets what it changes, then `build` adds Succeeded. */
class StatusDraft {
  private status: DgdrStatus;
  private conditions: Condition[];
  constructor(
    observed: DgdrStatus | undefined,
    private readonly generation: number,
    private readonly now: Date,
  ) {
    this.status = { ...(observed ?? {}) };
    this.conditions = [...(observed?.conditions ?? [])];
  }
  set(fields: Partial<DgdrStatus>): this {
    this.status = { ...this.status, ...fields };
    return this;
  }
  clear(...keys: (keyof DgdrStatus)[]): this {
    const next: Record<string, unknown> = { ...this.status };
    for (const key of keys) delete next[key];
    this.status = next as DgdrStatus;
    return this;
  }
  condition(type: string, status: 'True' | 'False', reason: string, message: string): this {
    this.conditions = withCondition(this.conditions, { type, status, reason, message }, this.generation, this.now);
    return this;
  }
  reasonOf(type: string): string | undefined {
    return this.conditions.find((c) => c.type === type)?.reason;
  }
  build(phase: DgdrPhase): DgdrStatus {
    const conditions = withCondition(this.conditions, succeededCondition(phase, this.conditions), this.generation, this.now);
    return { ...this.status, phase, observedGeneration: this.generation, conditions };
  }
}

const NOTHING: DgdrDesired = { hardware: undefined, deleteStaleOutput: undefined, job: undefined, annotations: undefined, configMaps: [], dgd: undefined, deleteConfigMaps: [], adoptConfigMaps: [], status: undefined, events: [] };

function only(status: DgdrStatus, events: readonly DgdrEventIntent[] = [], extra: Partial<DgdrDesired> = {}): DgdrDesired {
  return { ...NOTHING, ...extra, status, events };
}

/** The phase, with `""`/absent as Pending (upstream-notes/dgdr.md §1.1). Pure. */
export function currentPhase(status: DgdrStatus | undefined): DgdrPhase {
  return status?.phase ?? 'Pending';
}

/** Whether `child` is controlled by the DGDR with `uid` (an owner reference with controller: true). Pure. */
export function isControlledBy(child: ChildFacts, uid: string | undefined): boolean {
  return uid !== undefined && child.ownerReferences.some((r) => r.uid === uid && r.controller === true);
}

/** Who wrote the output ConfigMap, as far as the function can prove it. */
export type OutputOwnership = 'Absent' | 'Ours' | 'Foreign';

/**
 * Whether the ConfigMap `dgdr-output-<name>` is provably this request's: its output-copier writes it
 * with a controller owner reference to the request's uid (output-copier.ts), which a ConfigMap
 * created before the request cannot carry. Anything else of that name is `Foreign`: never read,
 * never deleted, reported as a conflict (DESIGN.md "Writes": never adopt; issue 20 "Own what you read").
 * In: the output's facts (undefined when it does not exist), the request's uid. Pure.
 */
export function classifyOutputConfigMap(output: ChildFacts | undefined, dgdr: Dgdr): OutputOwnership {
  if (output === undefined) return 'Absent';
  return isControlledBy(output, dgdr.metadata.uid) ? 'Ours' : 'Foreign';
}

/** The conflict message for a foreign output ConfigMap (ours, in the words of the Job conflict). Pure. */
export function outputConflictMessage(dgdrName: string): string {
  return `ConfigMap ${outputConfigMapName(dgdrName)} already exists and is not controlled by this DynamoGraphDeploymentRequest; it is left untouched (neither read nor deleted). Delete that ConfigMap or create the request under another name`;
}

function jobConflictMessage(jobName: string): string {
  return `Job ${jobName} already exists and is not controlled by this DynamoGraphDeploymentRequest; delete that Job or create the request under another name`;
}

/** Whether a child carries this request's labels `dgdr.nvidia.com/name` and `dgdr.nvidia.com/namespace` (dgdr-reference "Resource ownership": how the relation is tracked, not a proof). Pure. */
export function hasTrackingLabels(child: ChildFacts, dgdr: Dgdr): boolean {
  return child.labels[LABEL_DGDR_NAME] === dgdr.metadata.name && child.labels[LABEL_DGDR_NAMESPACE] === dgdr.metadata.namespace;
}

/** Whether `child` carries the label `dgdr.nvidia.com/uid` with this request's uid (stamped at creation, {@link creationLabels}). Pure. */
function isStampedBy(child: ChildFacts, dgdr: Dgdr): boolean {
  return dgdr.metadata.uid !== undefined && child.labels[LABEL_DGDR_UID] === dgdr.metadata.uid;
}

/**
 * Whether the DGD `status.dgdName` is provably this request's (issue 20 "the same rule everywhere";
 * DESIGN.md "Writes": never adopt). The DGD carries no owner reference (dgdr-reference "Resource
 * ownership": it outlives the request), so the proof is the label `dgdr.nvidia.com/uid` this
 * function stamps when it creates the DGD: a DGD made before the request existed cannot carry its
 * uid. A DGD with that label and another uid is never the request's (an earlier request of the same
 * name, or a forgery). A DGD without the label (switch-over: the upstream operator, or this function
 * before the stamp, created it) is the request's only when it carries the name labels and the request
 * had already observed it as its own: the annotation `nvidia.com/generated-dgd-spec` is cleared
 * only then (upstream-notes/dgdr.md §1.2 step 5, and here), and only the request's writers can
 * clear it. A same-named DGD planted before the creation finds the annotation still set and is a
 * conflict. In: the DGD's labels, the request's uid, name, namespace and annotations. Pure.
 */
export function isRequestsDgd(dgd: ChildFacts, dgdr: Dgdr): boolean {
  if (dgd.labels[LABEL_DGDR_UID] !== undefined) return isStampedBy(dgd, dgdr);
  const isObservedBefore = (dgdr.metadata.annotations?.[ANNOTATION_GENERATED_DGD_SPEC] ?? '') === '';
  return isObservedBefore && hasTrackingLabels(dgd, dgdr);
}

/**
 * Whether a planner ConfigMap the request observes (listed by its name labels, Ready, Deploying or
 * Deployed) is this request's (issue 20 "the same rule everywhere"): once a controller holds it,
 * only when that is the request's DGD (adopted; upstream's adoption before switch-over too); with
 * no controller, when it carries the label `dgdr.nvidia.com/uid` with the request's uid, which this
 * function stamps when it creates it from the profiling output, and never when that label carries
 * another uid (an earlier request of the same name). An ownerless ConfigMap with the request's
 * name labels and no uid label is one the upstream operator or an earlier version of this
 * function created (switch-over, upgrade): followed, as the unstamped DGD is ({@link isRequestsDgd}).
 * One planted before this function creates its own is refused when that create meets it
 * ({@link isPlannerConfigMapCreatedByUs}); replacing one after needs the right to delete it, as
 * editing it in place does (docs/known-limits.md). In: the ConfigMap's labels and owner
 * references, the request, the DGD's uid when it is the request's. Pure.
 */
export function isPlannerConfigMapOurs(configMap: ChildFacts, dgdr: Dgdr, dgdUid: string | undefined): boolean {
  const controller = configMap.ownerReferences.find((r) => r.controller === true);
  if (controller !== undefined) return dgdUid !== undefined && controller.uid === dgdUid;
  if (configMap.labels[LABEL_DGDR_UID] !== undefined) return isStampedBy(configMap, dgdr);
  return hasTrackingLabels(configMap, dgdr);
}

/**
 * Whether a planner ConfigMap this function's create found already there (409) is one an earlier
 * pass of this function created for this request: stamped with the request's uid and controlled
 * by nothing. Anything else, name labels or not, was there before the request made its own, and
 * fails the request ({@link decidePlannerConfigMapConflict}). Source: issue 20 "the same rule
 * everywhere". Pure.
 */
export function isPlannerConfigMapCreatedByUs(configMap: ChildFacts, dgdr: Dgdr): boolean {
  return !configMap.ownerReferences.some((r) => r.controller === true) && isStampedBy(configMap, dgdr);
}

/**
 * The names of the ConfigMaps the profiling output carries, from the request's annotation
 * `dgdr.nvidia.com/additional-resources` (the DGD's planner mounts them by name). The annotation
 * is this function's copy, but the request's author can edit it: a document that does not parse,
 * or that yaml refuses to expand (an alias bomb: `toJS` throws "Excessive alias count"), is
 * skipped, never thrown. Pure.
 */
export function plannerConfigMapNames(dgdr: Dgdr): string[] {
  const yaml = dgdr.metadata.annotations?.[ANNOTATION_ADDITIONAL_RESOURCES] ?? '';
  if (yaml === '') return [];
  return parseAllDocuments(yaml).flatMap((doc) => {
    if (doc.errors.length > 0) return [];
    let value: unknown;
    try {
      value = doc.toJS();
    } catch {
      return [];
    }
    if (!isObject(value) || value['kind'] !== 'ConfigMap' || value['apiVersion'] !== 'v1') return [];
    const name = isObject(value['metadata']) ? value['metadata']['name'] : undefined;
    return typeof name === 'string' ? [name] : [];
  });
}

/** The conflict message for a planner ConfigMap this request did not create (ours, in the words of the other conflicts). Pure. */
/**
 * The Warning for an output ConfigMap the API server refused with a permanent error (an invalid
 * name, annotations over the size limit, ...): upstream's `ConfigMapCreationFailed`, "Failed to
 * create ConfigMaps from profiling output: failed to create ConfigMap <name>: <error>". Not fatal:
 * the step goes on (the DGD, the status), as upstream's does ("Don't fail the DGDR ... ConfigMaps
 * can be created manually"), and the output's later ConfigMaps are not created (upstream stops at
 * the first failure). Source: upstream-notes/profiler.md §1.6 step 7, dgdr.md §3. Pure.
 */
export function configMapCreationFailedEvent(name: string, error: string): DgdrEventIntent {
  return { type: 'Warning', reason: 'ConfigMapCreationFailed', action: 'Create', note: `Failed to create ConfigMaps from profiling output: failed to create ConfigMap ${name}: ${error}` };
}

export function plannerConfigMapConflictMessage(name: string): string {
  return `ConfigMap ${name} (named by the profiling output) already exists and was not created by this DynamoGraphDeploymentRequest; it is left untouched (neither adopted nor deployed). Delete that ConfigMap and create a new request`;
}

/**
 * A planner ConfigMap the profiling output names that is not this request's: Failed,
 * `DeploymentReady=False` reason `PlannerConfigMapConflict` naming it, Warning
 * `ConfigMapCreationFailed` (upstream's reason for this step, profiler.md §1.7), and no DGD: its
 * planner would read that ConfigMap. `status` is the status to fail from (the step's own when the
 * create found it, else the observed one). Source: issue 20 "the same rule everywhere". Pure.
 */
export function decidePlannerConfigMapConflict(dgdr: Dgdr, status: DgdrStatus | undefined, name: string, now: Date): DgdrDesired {
  return plannerConfigMapConflict(new StatusDraft(status, dgdr.metadata.generation ?? 0, now), name);
}

function plannerConfigMapConflict(draft: StatusDraft, name: string): DgdrDesired {
  return failWith(draft, CONDITION_DEPLOYMENT_READY, REASON_PLANNER_CONFIG_MAP_CONFLICT, plannerConfigMapConflictMessage(name), { reason: 'ConfigMapCreationFailed', action: 'Create' });
}

/**
 * The planner ConfigMaps the profiling output names that this request created and nothing owns yet ({@link isPlannerConfigMapCreatedByUs}), with the version read.
 * One being deleted already is left to its finalizers: deleting it again changes nothing, and a Failed request would send that delete at every pass. Pure.
 */
function ownPlannerConfigMaps(observed: DgdrObserved): DgdrDesired['deleteConfigMaps'] {
  const names = new Set(plannerConfigMapNames(observed.dgdr));
  return observed.configMaps.filter((cm) => names.has(cm.name) && cm.isDeleting !== true && isPlannerConfigMapCreatedByUs(cm, observed.dgdr)).map((cm) => ({ name: cm.name, resourceVersion: cm.resourceVersion }));
}

/** The first planner ConfigMap the profiling output names that is present and not the request's (see {@link isPlannerConfigMapOurs}). Pure. */
function foreignPlannerConfigMap(observed: DgdrObserved, dgdUid: string | undefined): string | undefined {
  const names = new Set(plannerConfigMapNames(observed.dgdr));
  return observed.configMaps
    .filter((cm) => names.has(cm.name) && !isPlannerConfigMapOurs(cm, observed.dgdr, dgdUid))
    .map((cm) => cm.name)
    .sort((a, b) => a.localeCompare(b))[0];
}

/**
 * Decides one step of a DGDR's lifecycle.
 * In: the observed DGDR and children (see {@link DgdrObserved}), the Job config, the time.
 * Out: the writes ({@link DgdrDesired}); `status` undefined means the status stays as it is.
 * Failures: none thrown; every failure is a `Failed` phase with its condition and a Warning Event.
 * Source: see the module docstring. Pure.
 */
export function decideDgdr(observed: DgdrObserved, config: ProfilingJobConfig, now: Date): DgdrDesired {
  const { dgdr } = observed;
  const generation = dgdr.metadata.generation ?? 0;
  const phase = currentPhase(dgdr.status);
  const draft = new StatusDraft(dgdr.status, generation, now);
  if (dgdr.status?.phase !== undefined && !(['Pending', 'Profiling', 'Ready', 'Deploying', 'Deployed', 'Failed'] as const).includes(dgdr.status.phase)) {
    return only(draft.condition(CONDITION_VALIDATION, 'False', REASON_VALIDATION_FAILED, 'Invalid state').build('Failed'));
  }
  if (phase === 'Failed') return decideFailed(observed, draft);
  const rejected = decideSpecChangeRejected(dgdr, phase);
  if (rejected !== undefined) return rejected;
  switch (phase) {
    case 'Pending':
      return decidePending(observed, config, draft);
    case 'Profiling':
      return decideProfiling(observed, draft);
    case 'Ready':
      return decideReady(observed, draft);
    case 'Deploying':
      return decideDeploying(observed, draft);
    case 'Deployed':
      return decideDeployed(observed, draft);
    default: {
      const unreachable: never = phase;
      return unreachable;
    }
  }
}

/** Failed is terminal: only `Succeeded` is re-derived (upstream-notes/dgdr.md §1.2 step 9). */
function decideFailed(observed: DgdrObserved, draft: StatusDraft): DgdrDesired {
  const { dgdr } = observed;
  const status = draft.set({ observedGeneration: dgdr.status?.observedGeneration ?? dgdr.metadata.generation }).build('Failed');
  const decided = isDeepEqual(status.conditions, dgdr.status?.conditions) ? NOTHING : only({ ...status, observedGeneration: dgdr.status?.observedGeneration ?? status.observedGeneration });
  // Level-triggered: a pass that read the request before it failed can create one of its planner
  // ConfigMaps again after the failing pass deleted them (or be interrupted before its own delete);
  // a request whose DGD was refused (DeploymentRejected) deletes at its next pass those it created.
  // Only while no DGD of that name exists at all: one the user made by hand from the stored spec
  // (without the request's uid label) may mount them by name.
  const isHalfWritten = isFailedBeforeItsDgd(dgdr.status) && observed.dgd === undefined;
  return isHalfWritten ? { ...decided, deleteConfigMaps: ownPlannerConfigMaps(observed) } : decided;
}

/**
 * Whether the request failed with planner ConfigMaps it may have created and no DGD of its own to
 * take them: `PlannerConfigMapConflict`, or `DeploymentRejected` (the API server refused its DGD
 * for good; the output's ConfigMaps were created, stamped and ownerless, at the end of profiling).
 * Nothing owns those, so left they would stay forever and a new request of that name from the
 * same output would fail `PlannerConfigMapConflict` on them: such a request deletes them at every
 * pass while no DGD of that name exists ({@link decideFailed}), and reads its DGD and its
 * tracking-labelled ConfigMaps to do so. In: the stored status. Pure.
 */
export function isFailedBeforeItsDgd(status: DgdrStatus | undefined): boolean {
  return status?.phase === 'Failed' && (status.conditions ?? []).some((c) => c.type === CONDITION_DEPLOYMENT_READY && (c.reason === REASON_PLANNER_CONFIG_MAP_CONFLICT || c.reason === REASON_DEPLOYMENT_REJECTED));
}

/**
 * A spec changed after profiling started (generation ahead of observedGeneration) and it is not one
 * of the deferred runtime-version / auto-apply updates: Warning `SpecChangeRejected`, status untouched.
 * Source: upstream-notes/dgdr.md §1.4 "Controller guard" (message word for word). Pure.
 */
function decideSpecChangeRejected(dgdr: Dgdr, phase: DgdrPhase): DgdrDesired | undefined {
  if (phase === 'Pending') return undefined;
  const observedGeneration = dgdr.status?.observedGeneration;
  if (observedGeneration === undefined || observedGeneration === dgdr.metadata.generation) return undefined;
  const autoApply = dgdr.spec.autoApply;
  const isDeferredRuntimeVersionUpdate = autoApply === false && (phase === 'Profiling' || phase === 'Ready');
  const isReadyAutoApplyActivation = phase === 'Ready' && autoApply !== false;
  if (isDeferredRuntimeVersionUpdate || isReadyAutoApplyActivation) return undefined;
  return {
    ...NOTHING,
    events: [
      {
        type: 'Warning',
        reason: 'SpecChangeRejected',
        action: 'Validate',
        note: `Cannot modify spec in phase '${phase}'. DynamoGraphDeploymentRequest is immutable once profiling starts. Create a new resource with a different name instead.`,
      },
    ],
  };
}

function failWith(draft: StatusDraft, type: string, reason: string, message: string, event: { reason: string; action: string }): DgdrDesired {
  return only(draft.condition(type, 'False', reason, message).build('Failed'), [{ type: 'Warning', reason: event.reason, action: event.action, note: message }]);
}

/**
 * Pending: validate (thorough+auto, the model-cache PVC, hardware discovery), persist discovered
 * hardware, create the Job; once the Job is observed, enter Profiling. A Job of that name this
 * request does not control is a conflict (never adopted). Source: upstream-notes/dgdr.md §1.2 steps 1-2.
 */
function decidePending(observed: DgdrObserved, config: ProfilingJobConfig, draft: StatusDraft): DgdrDesired {
  const { dgdr, job } = observed;
  const name = dgdr.metadata.name ?? '';
  const jobName = profilingJobName(name);
  if (job !== undefined) {
    if (!isControlledBy(job, dgdr.metadata.uid)) {
      return failWith(draft, CONDITION_PROFILING, REASON_JOB_NAME_CONFLICT, jobConflictMessage(jobName), { reason: 'ProfilingJobFailed', action: 'Create' });
    }
    const status = draft
      .set({ profilingJobName: jobName, profilingPhase: 'Initializing' })
      .condition(CONDITION_PROFILING, 'False', REASON_INITIALIZING, MESSAGE_DISCOVERING_HARDWARE)
      .build('Profiling');
    return only(status, [{ type: 'Normal', reason: 'ProfilingJobCreated', action: 'Create', note: 'Profiling job created' }]);
  }
  const outputOwnership = classifyOutputConfigMap(observed.output, dgdr);
  if (outputOwnership === 'Foreign') {
    return failWith(draft, CONDITION_PROFILING, REASON_OUTPUT_NAME_CONFLICT, outputConflictMessage(name), { reason: 'ProfilingJobFailed', action: 'Create' });
  }
  const problems: string[] = [];
  const spec = dgdr.spec;
  if (spec.searchStrategy === 'thorough' && (spec.backend ?? 'auto') === 'auto') {
    problems.push('spec.searchStrategy "thorough" is incompatible with spec.backend "auto": set spec.backend to a specific backend (sglang, trtllm, or vllm)');
  }
  if (observed.modelCachePvcExists === false) problems.push(`model cache PVC ${spec.modelCache?.pvcName ?? ''} not found in namespace ${dgdr.metadata.namespace ?? ''}`);
  let hardware = spec.hardware;
  if (needsHardwareDiscovery(spec.hardware)) {
    const discovered = discoverHardware(spec.hardware, observed.nodes ?? [], observed.discoverySignals);
    if (discovered.ok) hardware = discovered.hardware;
    else problems.push(`GPU hardware discovery failed: ${discovered.message}`);
  } else if (spec.hardware !== undefined && needsHardwareMetadataDiscovery(spec.hardware)) {
    hardware = discoverHardwareMetadata(spec.hardware, observed.nodes ?? [], observed.discoverySignals);
  }
  if (problems.length > 0) return failWith(draft, CONDITION_VALIDATION, REASON_VALIDATION_FAILED, problems.join('; '), { reason: 'ValidationFailed', action: 'Validate' });
  const enriched: Dgdr = { ...dgdr, spec: { ...spec, ...(hardware === undefined ? {} : { hardware }) } };
  const built = buildProfilingJob(enriched, config);
  if (!built.ok) return failWith(draft, CONDITION_PROFILING, REASON_JOB_CREATION_FAILED, built.message, { reason: 'ProfilingJobFailed', action: 'Create' });
  const status = draft
    .set({ profilingJobName: jobName })
    .condition(CONDITION_VALIDATION, 'True', REASON_VALIDATION_PASSED, 'DGDR spec validation passed')
    .condition(CONDITION_PROFILING, 'False', REASON_DISCOVERING_HARDWARE, MESSAGE_DISCOVERING_HARDWARE)
    .build('Pending');
  return {
    ...NOTHING,
    hardware: isDeepEqual(hardware, spec.hardware) ? undefined : hardware,
    deleteStaleOutput: outputOwnership === 'Ours' ? { name: outputConfigMapName(name), resourceVersion: observed.output?.resourceVersion } : undefined,
    job: built.job,
    status,
    events: [{ type: 'Normal', reason: 'Initialized', action: 'Validate', note: 'DGDR initialized successfully' }],
  };
}

/** `<Phase>Failed`, or `ProfilingFailed` when no sub-phase was reached (upstream-notes/dgdr.md §1.2 step 3). Pure. */
export function profilingFailureReason(profilingPhase: ProfilingPhase | undefined): string {
  return profilingPhase === undefined ? REASON_PROFILING_FAILED : `${profilingPhase}Failed`;
}

/**
 * Profiling: follow the sub-phase, then the Job's outcome; generate the DGD from the output.
 * Leaving Profiling (to Failed, Ready or Deploying) clears `status.profilingPhase`; the failure
 * reason still names the sub-phase reached (`<Phase>Failed`).
 * Source: upstream-notes/dgdr.md §1.2 step 3; dgdr-reference "status.profilingPhase" ("Only
 * meaningful while phase is Profiling; cleared when profiling completes or fails": the reference
 * wins over upstream, which keeps it after a failure).
 */
function decideProfiling(observed: DgdrObserved, draft: StatusDraft): DgdrDesired {
  const { dgdr, job } = observed;
  // Read only what this request's Job provably wrote (issue 20): anyone may write a ConfigMap of that name.
  const ownership = classifyOutputConfigMap(observed.output, dgdr);
  if (ownership === 'Foreign') {
    return failWith(draft.clear('profilingPhase'), CONDITION_PROFILING, REASON_OUTPUT_NAME_CONFLICT, outputConflictMessage(dgdr.metadata.name ?? ''), { reason: 'ProfilingCheckFailed', action: 'Get' });
  }
  // Likewise its Job: one of that name the request does not control (deleted and recreated by someone else) is not read.
  if (job !== undefined && !isControlledBy(job, dgdr.metadata.uid)) {
    return failWith(draft.clear('profilingPhase'), CONDITION_PROFILING, REASON_JOB_NAME_CONFLICT, jobConflictMessage(profilingJobName(dgdr.metadata.name ?? '')), { reason: 'ProfilingCheckFailed', action: 'Get' });
  }
  const output = ownership === 'Ours' ? readProfilerOutput(observed.outputData) : undefined;
  if (output?.phase !== undefined && output.phase !== dgdr.status?.profilingPhase) {
    draft.set({ profilingPhase: output.phase }).condition(CONDITION_PROFILING, 'False', output.phase === 'Done' ? 'Completed' : output.phase, output.message);
  }
  const profilingPhase = output?.phase ?? dgdr.status?.profilingPhase;
  const failureReason = profilingFailureReason(profilingPhase);
  const fail = (message: string): DgdrDesired => failWith(draft.clear('profilingPhase'), CONDITION_PROFILING, failureReason, message, { reason: 'ProfilingCheckFailed', action: 'Get' });
  if (job === undefined) return fail(`profiling job ${profilingJobName(dgdr.metadata.name ?? '')} not found`);
  const outcome = readJobOutcome(job.conditions);
  if (outcome.kind === 'failed') return fail(output?.status === 'failed' ? `profiling failed: ${output.error}` : describeJobFailure(outcome.message, observed.jobPods));
  if (outcome.kind === 'running') {
    if (draft.reasonOf(CONDITION_PROFILING) === REASON_INITIALIZING) draft.condition(CONDITION_PROFILING, 'False', REASON_PROFILING_RUNNING, 'Profiling is in progress');
    return only(draft.build('Profiling'));
  }
  if (output?.status === 'failed') return fail(`profiling failed: ${output.error}`);
  if (output?.finalConfig === undefined) return only(draft.build('Profiling')); // The output is not relayed yet: wait.
  return decideGenerated(observed, output.finalConfig, draft);
}

function decideGenerated(observed: DgdrObserved, finalConfig: string, draft: StatusDraft): DgdrDesired {
  const { dgdr } = observed;
  const name = dgdr.metadata.name ?? '';
  const namespace = dgdr.metadata.namespace ?? '';
  const dgdName = generatedDgdName(name, dgdr.spec);
  const generated = splitGeneratedOutput(finalConfig, dgdName);
  draft.clear('profilingPhase');
  if (!generated.ok) return failWith(draft, CONDITION_SPEC_GENERATED, REASON_GENERATION_FAILED, generated.message, { reason: 'GenerationFailed', action: 'Create' });
  const additionalYaml = generated.additional.map((d) => stringifyYaml(d)).join('---\n');
  if (Buffer.byteLength(additionalYaml) > MAX_ADDITIONAL_RESOURCES_BYTES) {
    const message = `additional resources YAML size (${Buffer.byteLength(additionalYaml)} bytes) exceeds maximum annotation size (${MAX_ADDITIONAL_RESOURCES_BYTES} bytes); consider reducing the number of resources or storing them separately`;
    return failWith(draft, CONDITION_SPEC_GENERATED, REASON_GENERATION_FAILED, message, { reason: 'GenerationFailed', action: 'Create' });
  }
  // Profiling-Job settings never reach the deployment (the 1.6.1 profiler copies the Job's tolerations into it).
  const dgd = applyRuntimeVersionOverride(stripProfilingJobTolerations(generated.dgd, dgdr.spec.overrides), dgdr.spec.runtimeVersionOverride);
  const isAutoApply = dgdr.spec.autoApply !== false;
  const status = draft
    .set({ dgdName, profilingResults: { ...dgdr.status?.profilingResults, selectedConfig: dgd } })
    .condition(CONDITION_PROFILING, 'True', REASON_PROFILING_COMPLETED, 'Profiling job completed successfully')
    .condition(CONDITION_SPEC_GENERATED, 'True', REASON_SPEC_GENERATED, isAutoApply ? MESSAGE_SPEC_GENERATED : MESSAGE_SPEC_IN_ANNOTATION)
    .build(isAutoApply ? 'Deploying' : 'Ready');
  const configMaps = generated.additional
    .filter((d) => d['kind'] === 'ConfigMap' && d['apiVersion'] === 'v1')
    // Stamped with the request's uid (issue 20): the proof read before adopting one into the DGD.
    // Only its name and annotations are taken from the output: the profiling output is the request author's to write
    // (overrides.profilingJob), and an owner reference or finalizer in it would have this function forge another
    // object's proof (a controller reference to another request's uid); upstream creates them with no owner.
    .map((cm) => ({ ...cm, metadata: { ...outputMetadata(cm), namespace, labels: { ...labelsOf(cm), ...creationLabels(dgdr) } } }));
  return {
    ...NOTHING,
    annotations: { [ANNOTATION_GENERATED_DGD_SPEC]: stringifyYaml(dgd), ...(additionalYaml === '' ? {} : { [ANNOTATION_ADDITIONAL_RESOURCES]: additionalYaml }) },
    configMaps,
    status,
    events: [
      { type: 'Normal', reason: 'SpecGenerated', action: 'Create', note: MESSAGE_SPEC_GENERATED },
      // "A recognized deprecated name may be translated ... with a warning": the profiler logs it; the request shows it.
      ...findDeprecatedTargetTranslations(dgd, dgdr.spec.overrides?.dgd).map((warning) => ({ type: 'Warning' as const, reason: 'DeprecatedOverrideTarget', action: 'Create', note: formatOverrideWarning(warning) })),
    ],
  };
}

/** The `metadata.name` and `metadata.annotations` of a profiling-output object, nothing else of its metadata. Pure. */
function outputMetadata(object: Obj): Obj {
  const metadata = isObject(object['metadata']) ? object['metadata'] : {};
  return Object.fromEntries((['name', 'annotations'] as const).filter((key) => metadata[key] !== undefined).map((key) => [key, metadata[key]]));
}

function labelsOf(object: Obj): Record<string, string> {
  const metadata = object['metadata'];
  const labels = isObject(metadata) ? metadata['labels'] : undefined;
  return isObject(labels) ? (labels as Record<string, string>) : {};
}

/** The labels tying children to the request: `dgdr.nvidia.com/name`, `dgdr.nvidia.com/namespace`, `nvidia.com/managed-by` (dgdr-reference "Resource ownership"). Pure. */
export function trackingLabels(dgdr: Dgdr): Record<string, string> {
  return { [LABEL_DGDR_NAME]: dgdr.metadata.name ?? '', [LABEL_DGDR_NAMESPACE]: dgdr.metadata.namespace ?? '', [LABEL_MANAGED_BY]: LABEL_VALUE_DYNAMO_OPERATOR };
}

/**
 * The labels of what the request creates (the DGD, the planner ConfigMaps): the tracking labels and
 * `dgdr.nvidia.com/uid` with the request's uid (omitted when it has none: never stored). Upstream
 * sets the first three; the uid is ours (issue 20 "the same rule everywhere"). Pure.
 */
export function creationLabels(dgdr: Dgdr): Record<string, string> {
  return { ...trackingLabels(dgdr), ...(dgdr.metadata.uid === undefined ? {} : { [LABEL_DGDR_UID]: dgdr.metadata.uid }) };
}

/**
 * Ready: wait for autoApply; once it is on, Deploying (upstream-notes/dgdr.md §1.2 step 4). While
 * Ready, `deploymentInfo` follows the DGD `status.dgdName` when the user created it by hand (from
 * the stored spec; it need not carry the tracking labels), and is cleared when there is none.
 * Source: dgdr-reference "status.deploymentInfo" ("Populated once a DGD has been created (via
 * autoApply or manually)").
 */
function decideReady(observed: DgdrObserved, draft: StatusDraft): DgdrDesired {
  const { dgdr, dgd } = observed;
  if (dgdr.spec.autoApply === false) {
    if (dgd === undefined) draft.clear('deploymentInfo');
    else draft.set({ deploymentInfo: deploymentInfo(dgd) });
    const status = draft.build('Ready');
    return isDeepEqual(status, dgdr.status) ? NOTHING : only(status);
  }
  return only(draft.condition(CONDITION_SPEC_GENERATED, 'True', REASON_SPEC_GENERATED, MESSAGE_SPEC_GENERATED).build('Deploying'));
}

/**
 * The DGD to create from the stored annotation: the current `runtimeVersionOverride` applied, the
 * request's labels and its uid label ({@link creationLabels}), namespace = the DGDR's, and no owner
 * reference (the DGD outlives the request).
 * Source: upstream-notes/dgdr.md §1.2 step 6; dgdr-reference "Resource ownership". Pure.
 */
export function dgdToCreate(dgdr: Dgdr, annotation: string): { readonly ok: true; readonly dgd: Obj } | { readonly ok: false; readonly message: string } {
  const generated = splitGeneratedOutput(annotation, dgdr.status?.dgdName ?? generatedDgdName(dgdr.metadata.name ?? '', dgdr.spec));
  if (!generated.ok) return generated;
  const dgd = applyRuntimeVersionOverride(stripProfilingJobTolerations(generated.dgd, dgdr.spec.overrides), dgdr.spec.runtimeVersionOverride);
  const metadata = dgd['metadata'] as Obj;
  return {
    ok: true,
    dgd: { ...dgd, apiVersion: DGD_V1BETA1, kind: DGD_KIND, metadata: { ...metadata, namespace: dgdr.metadata.namespace, labels: { ...labelsOf(dgd), ...creationLabels(dgdr) } } },
  };
}

function deploymentInfo(dgd: NonNullable<DgdrObserved['dgd']>): NonNullable<DgdrStatus['deploymentInfo']> {
  return {
    replicas: dgd.components.reduce((sum, c) => sum + (c.replicas ?? 0), 0),
    availableReplicas: dgd.components.reduce((sum, c) => sum + (c.availableReplicas ?? 0), 0),
  };
}

function deploymentDeleted(draft: StatusDraft, dgdName: string): DgdrDesired {
  const status = draft
    .clear('dgdName', 'deploymentInfo')
    .condition(CONDITION_DEPLOYMENT_READY, 'False', REASON_DEPLOYMENT_DELETED, 'Deployment was deleted by user. Create a new DGDR to redeploy.')
    .build('Failed');
  return only(status, [{ type: 'Warning', reason: 'DeploymentDeleted', action: 'Delete', note: `DGD ${dgdName} was deleted. DGDR will not recreate it. Delete this DGDR and create a new one to redeploy.` }]);
}

function nameConflict(draft: StatusDraft, dgdName: string): DgdrDesired {
  const message = `DynamoGraphDeployment ${dgdName} already exists and was not created by this DynamoGraphDeploymentRequest (its label ${LABEL_DGDR_UID} does not carry this request's uid); it is left untouched. Delete it, or create a new request with another spec.overrides.dgd.metadata.name`;
  return failWith(draft, CONDITION_DEPLOYMENT_READY, REASON_DEPLOYMENT_NAME_CONFLICT, message, { reason: 'DeploymentCreationFailed', action: 'Create' });
}

/** Deploying: create the DGD once, then follow its state (upstream-notes/dgdr.md §1.2 steps 5-6, 8). */
function decideDeploying(observed: DgdrObserved, draft: StatusDraft): DgdrDesired {
  const { dgdr, dgd } = observed;
  if (dgdr.spec.autoApply === false) return only(draft.build('Ready'));
  const dgdName = dgdr.status?.dgdName ?? generatedDgdName(dgdr.metadata.name ?? '', dgdr.spec);
  const annotation = dgdr.metadata.annotations?.[ANNOTATION_GENERATED_DGD_SPEC] ?? '';
  if (dgd === undefined) {
    if (annotation === '') return deploymentDeleted(draft, dgdName);
    // No DGD whose planner would read a ConfigMap this request did not create (issue 20).
    const foreign = foreignPlannerConfigMap(observed, undefined);
    if (foreign !== undefined) return { ...plannerConfigMapConflict(draft, foreign), deleteConfigMaps: ownPlannerConfigMaps(observed) };
    const created = dgdToCreate(dgdr, annotation);
    if (!created.ok) return failWith(draft, CONDITION_SPEC_GENERATED, REASON_GENERATION_FAILED, created.message, { reason: 'GenerationFailed', action: 'Create' });
    const status = draft.set({ dgdName }).condition(CONDITION_DEPLOYMENT_READY, 'False', REASON_DEPLOYMENT_IN_PROGRESS, `DGD ${dgdName} is being created`).build('Deploying');
    return { ...NOTHING, dgd: created.dgd, status, events: [{ type: 'Normal', reason: 'DeploymentCreated', action: 'Create', note: `DynamoGraphDeployment ${dgdName} created successfully` }] };
  }
  if (!isRequestsDgd(dgd, dgdr)) return nameConflict(draft, dgdName);
  const foreign = foreignPlannerConfigMap(observed, dgd.uid);
  if (foreign !== undefined) return plannerConfigMapConflict(draft, foreign);
  const adoptConfigMaps = configMapsToAdopt(observed, dgd);
  // Observed: the stored copy is no longer needed to create it (upstream clears the annotation).
  const additional = dgdr.metadata.annotations?.[ANNOTATION_ADDITIONAL_RESOURCES];
  const annotations: Record<string, string> | undefined = annotation === '' ? undefined : additional === undefined ? {} : { [ANNOTATION_ADDITIONAL_RESOURCES]: additional };
  draft.set({ deploymentInfo: deploymentInfo(dgd) });
  if (dgd.state === 'successful') {
    const status = draft.condition(CONDITION_DEPLOYMENT_READY, 'True', REASON_DEPLOYMENT_READY, `DynamoGraphDeployment ${dgdName} is ready`).build('Deployed');
    return { ...only(status, [{ type: 'Normal', reason: 'DeploymentReady', action: 'Update', note: `DynamoGraphDeployment ${dgdName} is ready` }]), annotations, adoptConfigMaps };
  }
  const status = draft.condition(CONDITION_DEPLOYMENT_READY, 'False', REASON_DEPLOYMENT_IN_PROGRESS, `DGD ${dgdName} is in ${dgd.state ?? 'unknown'} state`).build('Deploying');
  return { ...only(status, imagePullFailures(observed)), annotations, adoptConfigMaps };
}

/**
 * One Warning `ImagePullFailed` per DGD pod container (init or regular) waiting in `ErrImagePull` or
 * `ImagePullBackOff`: `pod <p> container <c>: <reason>[: <message>]`.
 * Source: upstream-notes/dgdr.md §1.2 step 5 (text word for word). Pure.
 */
export function imagePullFailures(observed: DgdrObserved): DgdrEventIntent[] {
  return observed.dgdPodContainers
    .filter((c) => c.reason === 'ErrImagePull' || c.reason === 'ImagePullBackOff')
    .map((c) => ({ type: 'Warning', reason: 'ImagePullFailed', action: 'Get', note: `pod ${c.pod} container ${c.container}: ${c.reason}${c.message === '' ? '' : `: ${c.message}`}` }));
}

/**
 * The planner ConfigMaps (tracking labels, not the output `dgdr-output-<name>`) not yet controlled by
 * the DGD: once it exists they live and die with it. Only those this request created (ownerless and
 * stamped with its uid, {@link isPlannerConfigMapOurs}): an ownerless one with only the name labels is
 * anyone's and stays untouched (issue 20 "the same rule everywhere"). Source: upstream
 * `adoptAdditionalResources` (upstream-notes/profiler.md §1.7; the output ConfigMap keeps its DGDR owner). Pure.
 */
export function configMapsToAdopt(observed: DgdrObserved, dgd: NonNullable<DgdrObserved['dgd']>): DgdrDesired['adoptConfigMaps'] {
  if (dgd.uid === undefined) return [];
  const output = outputConfigMapName(observed.dgdr.metadata.name ?? '');
  const named = new Set(plannerConfigMapNames(observed.dgdr));
  return observed.configMaps
    // A ConfigMap someone else controls, or one this request did not create, is never taken over, whatever its labels say (DESIGN.md "Writes": never adopt);
    // an unstamped one (created before the stamp: upgrade, switch-over) only when the output names it.
    .filter((cm) => cm.name !== output && !cm.ownerReferences.some((r) => r.controller === true) && (isStampedBy(cm, observed.dgdr) || (named.has(cm.name) && isPlannerConfigMapOurs(cm, observed.dgdr, dgd.uid))))
    // Only the version proved (a ConfigMap replaced since the read is a 409, decided again), and only the object
    // read: with its uid, an apply to a ConfigMap deleted since is a 409 too, where the version alone would create it anew.
    .map((cm) => ({ name: cm.name, ...(cm.resourceVersion === undefined ? {} : { resourceVersion: cm.resourceVersion }), ...(cm.uid === undefined ? {} : { uid: cm.uid }), ownerReferences: [{ apiVersion: DGD_V1BETA1, kind: DGD_KIND, name: dgd.name, uid: dgd.uid, controller: true, blockOwnerDeletion: true }] }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** Deployed: follow the DGD; degraded goes back to Deploying, deleted fails (upstream-notes/dgdr.md §1.2 steps 7-8). */
function decideDeployed(observed: DgdrObserved, draft: StatusDraft): DgdrDesired {
  const { dgdr, dgd } = observed;
  const dgdName = dgdr.status?.dgdName ?? '';
  if (dgd === undefined) return deploymentDeleted(draft, dgdName);
  if (!isRequestsDgd(dgd, dgdr)) return nameConflict(draft, dgdName);
  const foreign = foreignPlannerConfigMap(observed, dgd.uid);
  if (foreign !== undefined) return plannerConfigMapConflict(draft, foreign);
  draft.set({ deploymentInfo: deploymentInfo(dgd) });
  const adoptConfigMaps = configMapsToAdopt(observed, dgd);
  if (dgd.state !== 'successful') {
    const state = dgd.state ?? 'unknown';
    const status = draft.condition(CONDITION_DEPLOYMENT_READY, 'False', REASON_DEPLOYMENT_DEGRADED, `Deployment degraded to ${state}`).build('Deploying');
    return { ...only(status, [{ type: 'Warning', reason: 'DeploymentDegraded', action: 'Update', note: `DynamoGraphDeployment ${dgdName} degraded from Ready to ${state}` }]), adoptConfigMaps };
  }
  const status = draft.build('Deployed');
  return isDeepEqual(status, dgdr.status) ? { ...NOTHING, adoptConfigMaps } : { ...only(status), adoptConfigMaps };
}

/**
 * The API server rejected the DGD (400/403/422): Failed, `DeploymentReady=False` reason
 * `DeploymentRejected` with the API error, Warning `DeploymentCreationFailed`.
 * Source: upstream-notes/profiler.md §1.7 `createDGD`. Pure.
 */
export function decideDgdRejected(dgdr: Dgdr, message: string, now: Date): DgdrDesired {
  const draft = new StatusDraft(dgdr.status, dgdr.metadata.generation ?? 0, now);
  return failWith(draft, CONDITION_DEPLOYMENT_READY, REASON_DEPLOYMENT_REJECTED, message, { reason: 'DeploymentCreationFailed', action: 'Create' });
}

