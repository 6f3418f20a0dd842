/**
 * LPX APIs: our LPXGraphDeployment (`nvidia.com/v1alpha1`, generated from this zod schema),
 * the LPX component stanza (`spec.components[].lpx`) as the LPX path reads it, and the
 * scheduler's LpuPipelineRequest (`scheduling.lpu.nvidia.com/v1alpha1`, installed by the LPX
 * scheduler, never by us) as far as we write and read it. Also every LPX API string.
 *
 * Sources: ../shared/reference/lpx-integration-review.txt; ../shared/upstream-notes/lpx.md
 * §1.1 (LPXConfig), §2 (LPXGD CRD, spec, status, ownership), §3.1 (LPR API), §7 (config);
 * ../shared/crds/dynamo/nvidia.com_lpxgraphdeployments.yaml (upstream's CRD shape).
 * @module
 */
import { z } from 'zod';
import { ConditionSchema, ObjectMetaSchema, looseObject } from './core.js';
import { ComponentReplicaStatusSchema } from './dgd.js';
import { LpxExperimentalSchema } from './lpx-local-partitions.js';

export const LPXGD_KIND = 'LPXGraphDeployment';
export const LPXGD_API_VERSION = 'nvidia.com/v1alpha1';
export const LPXGD_PLURAL = 'lpxgraphdeployments';
export const LPXGD_SHORT_NAME = 'lpxgd';

/** The LPX scheduler's request kind (lpx.md §3.1): Go type LPUPipelineRequest, Kind spelled `LpuPipelineRequest`. */
export const LPR_API_VERSION = 'scheduling.lpu.nvidia.com/v1alpha1';
export const LPR_KIND = 'LpuPipelineRequest';
export const LPR_PLURAL = 'lpupipelinerequests';
/** Grove's PodGang API, required by LPX (lpx.md §5.4, §7). */
export const PODGANG_API_VERSION = 'scheduler.grove.io/v1alpha1';
export const PODGANG_KIND = 'PodGang';

/** Upstream's startup errors when `lpx.enabled=true` and an API is missing (lpx.md §5.4). */
export const LPX_MISSING_LPR_API_MESSAGE =
  'LPX is explicitly enabled in config but the scheduling.lpu.nvidia.com/v1alpha1 LpuPipelineRequest API was not detected in the cluster';
export const LPX_MISSING_PODGANG_API_MESSAGE =
  'LPX is explicitly enabled in config but the scheduler.grove.io/v1alpha1 PodGang API was not detected in the cluster';

/** LPXGD annotation carrying the restart token (lpx.md §2.1). */
export const ANNOTATION_LPX_RESTART_ID = 'lpx.nvidia.com/restart-id';
/** Label on LPRs (and ConfigMaps) naming the LPXGD's UID (lpx.md §2.3). */
export const LABEL_LPX_DEPLOYMENT_UID = 'lpx.nvidia.com/deployment-uid';
/** Annotation routing Grove child and LPR events to the LPXGD (lpx.md §2.3). */
export const ANNOTATION_LPX_DEPLOYMENT_NAME = 'lpx.nvidia.com/deployment-name';
export const ANNOTATION_LPX_WORKLOAD_DIGEST = 'scheduling.lpu.nvidia.com/dynamo-workload-digest';
/** The compiler provenance of a model's build: its snapshot content id (lpx.md §3.2 LPR annotations; upstream `CompilerSnapshotDigestAnnotation`, also on Agent pods). */
export const ANNOTATION_LPX_COMPILER_SNAPSHOT_DIGEST = 'scheduling.lpu.nvidia.com/compiler-snapshot-digest';
export const ANNOTATION_LPX_DYNAMO_MODEL = 'scheduling.lpu.nvidia.com/dynamo-model';
export const ANNOTATION_LPX_POD_ROLE = 'scheduling.lpu.nvidia.com/role';
export const ANNOTATION_LPX_POD_MODEL = 'scheduling.lpu.nvidia.com/model';
/** The scheduler workload mode of an Agent clique (upstream `WorkloadModeAnnotation`, lpx.md §2.3). */
export const ANNOTATION_LPX_WORKLOAD_MODE = 'scheduling.lpu.nvidia.com/workload-mode';
/** The pod role of a hybrid engine's Cyborg GPU runtime (upstream scheduler API `PodRoleCyborgWorker`, lpx.md §3.1). */
export const LPX_POD_ROLE_CYBORG_WORKER = 'cyborg-worker';
/** Label selecting the conductor pods for the serving Service (lpx.md §2.3). */
export const LABEL_LPX_SERVING = 'lpx.nvidia.com/serving';

/** LPXGD `Ready` reasons (lpx.md §2.2: LPXReadyReasonReady/Pending/Failed). */
export const LPX_REASON_READY = 'Ready';
export const LPX_REASON_PENDING = 'Pending';
export const LPX_REASON_FAILED = 'Failed';
export const CONDITION_SCHEDULING_FAILED = 'SchedulingFailed';
export const CONDITION_SCALING_DEFERRED = 'ScalingDeferred';
export const REASON_LPX_DEADLINE_EXCEEDED = 'LPXSchedulingDeadlineExceeded';
export const MESSAGE_LPX_DEADLINE_EXCEEDED = 'An LPX request exceeded its scheduling deadline';
/** Ready=Pending after removed requests were deleted (lpx.md §5.3 step 15). */
export const MESSAGE_LPX_CAPACITY_CHANGES = 'Waiting to observe LPX capacity changes';
/** Ready=Pending while an engine replica's requests no longer match their intent (upstream `reconcilePipelineRequests`, design D). */
export const MESSAGE_LPX_DESIRED_BUILD = 'Waiting for Grove replicas and their LPX requests to reach the desired build';
/** Ready=Pending while a desired request name is held by a terminating request (lpx.md §5.3 step 18). */
export const MESSAGE_LPX_REMOVED_REQUESTS = 'Waiting for removed LPX requests to finish deletion';
/** Ready=Pending after requests were created (lpx.md §3.2 Publication). */
export const MESSAGE_LPX_PUBLISHED_REQUESTS = 'Waiting for published LPX requests to appear in the cache';
export const REASON_LPX_RETRY_AUTHORIZED = 'LPXSchedulingRetryAuthorized';
export const MESSAGE_LPX_RETRY_AUTHORIZED = 'The current input revision supersedes the previous scheduling failure';
export const REASON_SCALING_ALLOWED = 'ScalingAllowed';
/** A component `Ready` not evaluated in a pass (lpx.md §2.2 "Unknown/NotObserved"). */
export const REASON_COMPONENT_NOT_OBSERVED = 'NotObserved';
export const MESSAGE_COMPONENT_NOT_OBSERVED = 'Component readiness has not been observed';
export const MESSAGE_SCALING_ALLOWED = 'No Grove replica changes are deferred';
export const REASON_GROVE_UPDATE_PENDING = 'GroveUpdatePending';
export const MESSAGE_GROVE_UPDATE_PENDING = 'Replica changes are deferred until Grove observes the desired PodCliqueSet and any coherent update completes';
/** DGD-side reason while the LPX child is not current (lpx.md §6.1 mergeLPXChildStatus). */
export const REASON_LPX_CHILD_PENDING = 'LPXChildPending';
export const MESSAGE_LPX_CHILD_PENDING = 'Waiting for the current LPX engine revision and readiness';

/** Largest `attemptDeadlineSeconds`: keeps seconds x 1e9 inside int64 (lpx.md §1.1). */
export const MAX_ATTEMPT_DEADLINE_SECONDS = 9_223_372_036;
/** Largest LPX engine replica count (lpx.md §1.1). */
export const MAX_LPX_REPLICAS = 2496;

// The LPX runtime ConfigMaps (upstream internal/dynamo/lpx/lpu_configmap.go, controller/lpx/render.go).
/** Annotation naming the owning DGD's uid on the LPX runtime ConfigMaps (upstream `DGDUIDAnnotation`). */
export const ANNOTATION_LPX_RUNTIME_DGD_UID = 'scheduling.lpu.nvidia.com/dgd-uid';
/** The runtime ConfigMap content hash on the cliques that mount it (upstream `AnnotationExtraResourcesHash`). */
export const ANNOTATION_LPX_EXTRA_RESOURCES_HASH = 'nvidia.com/extra-resources-hash';
/** The pod volume of the runtime ConfigMap and its mount path in the main container (upstream `lpuConfigVolumeName`, `lpuConfigMountPath`). */
export const LPX_CONFIG_VOLUME_NAME = 'config';
export const LPX_CONFIG_MOUNT_PATH = '/configs';
/** Bytes of data one rendered ConfigMap may hold (upstream `corev1.MaxSecretSize`, 1 MiB). */
export const LPX_MAX_CONFIGMAP_DATA_BYTES = 1024 * 1024;

/**
 * The `lpx` stanza of a component (lpx.md §1.1 LPXConfig, design D and D+). Loose: admission
 * reports field errors on it with paths; the LPX path reads only these fields.
 */
export const LpxConfigSchema = z
  .object({
    buildId: z.string().optional(),
    scheduling: z.object({ attemptDeadlineSeconds: z.number().int().optional() }).loose().optional(),
    /** Design D's `localPartitions{all|ids}`: accepted with design D's bounds and a deprecation warning (D+ moved it to `experimental.localPartitions`). */
    localPartitions: z.object({ all: z.boolean().optional(), ids: z.array(z.number().int()).optional() }).loose().optional(),
    checkpoint: looseObject().optional(),
    /** D+: `experimental.localPartitions{mode: All|IDs, ids}` and `experimental.checkpoint`. */
    experimental: LpxExperimentalSchema.optional(),
  })
  .loose();
export type LpxConfig = z.infer<typeof LpxConfigSchema>;

export const LpxGraphDeploymentSpecSchema = z.object({
  inputRevision: z
    .string()
    .regex(/^sha256:[a-f0-9]{64}$/)
    .describe('inputRevision hashes only effective LPX inputs, including its selected restart token. Unrelated component edits do not create an LPX revision.'),
});

export const LpxComponentStatusSchema = ComponentReplicaStatusSchema.extend({
  scheduledReplicas: z.number().int().optional(),
  ready: z.boolean().optional(),
  /** Beyond upstream: the externally managed engine count, kept across PodCliqueSet replacement (omitted replicas only). */
  retainedReplicas: z.number().int().min(0).optional(),
  conditions: z.array(ConditionSchema).meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] }).optional(),
});
export type LpxComponentStatus = z.infer<typeof LpxComponentStatusSchema>;

export const LpxGraphDeploymentStatusSchema = z.object({
  observedGeneration: z.number().int().optional(),
  conditions: z.array(ConditionSchema).meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] }).optional(),
  components: z.record(z.string(), LpxComponentStatusSchema).optional(),
  modelDownload: z.object({ builds: z.array(z.string()).optional(), lastCheckedAt: z.string().optional() }).optional(),
});
export type LpxGraphDeploymentStatus = z.infer<typeof LpxGraphDeploymentStatusSchema>;

export const LpxGraphDeploymentSchema = z.object({
  apiVersion: z.literal(LPXGD_API_VERSION),
  kind: z.literal(LPXGD_KIND),
  metadata: ObjectMetaSchema,
  spec: LpxGraphDeploymentSpecSchema,
  status: LpxGraphDeploymentStatusSchema.optional(),
});
export type LpxGraphDeployment = z.infer<typeof LpxGraphDeploymentSchema>;

/** Scheduler phases (lpx.md §3.1 RequestPhase; lower camel case, there is no "Scheduled"). */
export const LPR_PHASES = ['pending', 'noFit', 'unsupported', 'planned', 'reserving', 'binding', 'bound', 'degraded', 'releasing', 'released'] as const;
export type LprPhase = (typeof LPR_PHASES)[number];

/** An LpuPipelineRequest as we read it: the fields readiness and deadlines use (lpx.md §3.1). */
export const LpuPipelineRequestSchema = z.object({
  apiVersion: z.literal(LPR_API_VERSION),
  kind: z.literal(LPR_KIND),
  metadata: ObjectMetaSchema,
  spec: z.record(z.string(), z.unknown()),
  status: z
    .object({
      phase: z.string().optional(),
      observedGeneration: z.number().int().optional(),
      schedulingStartedAt: z.string().nullable().optional(),
      diagnostics: z.array(z.object({ code: z.string().optional(), subject: z.string().optional(), detail: z.string().optional() }).loose()).optional(),
      committed: z.object({ execution: z.object({ acceptedGeneration: z.number().int().optional() }).loose().optional() }).loose().nullable().optional(),
    })
    .loose()
    .nullable()
    .optional(),
});
export type LpuPipelineRequest = z.infer<typeof LpuPipelineRequestSchema>;
