/**
 * API strings used across functions: groups, kinds, annotation and label keys, field managers,
 * condition types and reasons. Each is defined once, here.
 *
 * Sources: ../shared/reference/dgd-reference.txt; ../shared/upstream-notes/dgd.md §2.4, §2.5, §4.
 * @module
 */

export const DYNAMO_GROUP = 'nvidia.com';
export const DGD_KIND = 'DynamoGraphDeployment';
export const DGD_V1BETA1 = 'nvidia.com/v1beta1';
export const DGD_V1ALPHA1 = 'nvidia.com/v1alpha1';
export const DGD_PLURAL = 'dynamographdeployments';
export const DGD_SHORT_NAME = 'dgd';
/** The category of all our kinds: `kubectl get dynamo` lists them (Kubernetes CRD `names.categories`). */
export const CRD_CATEGORY = 'dynamo';

export const GROVE_API_VERSION = 'grove.io/v1alpha1';
export const PODCLIQUESET_KIND = 'PodCliqueSet';

/** Field manager of the reconcile function's server-side applies (DESIGN.md "Writes"). */
export const FIELD_MANAGER_RECONCILE = 'dynamo-reconcile';

/** DGD metadata annotation selecting the Grove update strategy (dgd-reference "Grove update strategy"). */
export const ANNOTATION_GROVE_UPDATE_STRATEGY = 'nvidia.com/grove-update-strategy';
/** `"false"` (case-insensitive) opts a DGD out of Grove (upstream-notes/dgd.md §2.5). */
export const ANNOTATION_ENABLE_GROVE = 'nvidia.com/enable-grove';
/** Controller-owned, immutable graph workload provider, materialized by admission on CREATE (upstream-notes/dgd.md §2.5; upstream `KubeAnnotationWorkloadProvider`). */
export const ANNOTATION_WORKLOAD_PROVIDER = 'nvidia.com/workload-provider';
/** The Grove workload provider: the only one this control plane renders. */
export const WORKLOAD_PROVIDER_GROVE = 'grove';
/** Upstream's DynamoComponentDeployment workload provider (`nvidia.com/enable-grove: "false"`). */
export const WORKLOAD_PROVIDER_COMPONENT = 'component';
/** `"false"` disables the metrics label on pod templates (upstream-notes/dgd.md §4.5). */
export const ANNOTATION_ENABLE_METRICS = 'nvidia.com/enable-metrics';

export const GROVE_UPDATE_STRATEGIES = ['Coherent', 'RollingRecreate', 'OnDelete'] as const;
export type GroveUpdateStrategy = (typeof GROVE_UPDATE_STRATEGIES)[number];

export const LABEL_SELECTOR = 'nvidia.com/selector';
export const LABEL_GRAPH_DEPLOYMENT_NAME = 'nvidia.com/dynamo-graph-deployment-name';
export const LABEL_COMPONENT = 'nvidia.com/dynamo-component';
export const LABEL_COMPONENT_TYPE = 'nvidia.com/dynamo-component-type';
export const LABEL_DYNAMO_NAMESPACE = 'nvidia.com/dynamo-namespace';
export const LABEL_WORKER_HASH = 'nvidia.com/dynamo-worker-hash';
export const LABEL_METRICS_ENABLED = 'nvidia.com/metrics-enabled';
/** Rendering labels and annotations of upstream `internal/consts/consts.go` (issue 7). */
export const LABEL_COMPONENT_CLASS = 'nvidia.com/dynamo-component-class';
export const LABEL_SUB_COMPONENT_TYPE = 'nvidia.com/dynamo-sub-component-type';
export const LABEL_DISCOVERY_BACKEND = 'nvidia.com/dynamo-discovery-backend';
export const LABEL_DISCOVERY_ENABLED = 'nvidia.com/dynamo-discovery-enabled';
export const LABEL_KAI_QUEUE = 'kai.scheduler/queue';
export const ANNOTATION_DISCOVERY_BACKEND = 'nvidia.com/dynamo-discovery-backend';
export const ANNOTATION_KUBE_DISCOVERY_MODE = 'nvidia.com/dynamo-kube-discovery-mode';
export const ANNOTATION_OPERATOR_ORIGIN_VERSION = 'nvidia.com/dynamo-operator-origin-version';
/** The active worker generation hash (algorithm `dgd-worker-rollout-v2`), committed by reconcile once every worker runs it (upstream-notes/dgd.md §2.5, §4.3). */
export const ANNOTATION_CURRENT_WORKER_HASH_V2 = 'nvidia.com/current-worker-hash-v2';
/**
 * The legacy (v1) active worker generation hash that upstream operators before the v2 algorithm
 * wrote, and upstream still reads and writes beside v2 (`currentWorkerHashes`): kept as an opaque
 * suffix until the worker generation changes (upstream `dgd_worker_rollout_reconciler.go`).
 */
export const ANNOTATION_CURRENT_WORKER_HASH = 'nvidia.com/current-worker-hash';
/** Upstream `consts.LegacyWorkerHash`: the v1 sentinel of pre-rolling-update worker DCDs (never migrated as a hash). */
export const LEGACY_WORKER_HASH_SENTINEL = 'legacy';
/** Upstream's Event when it records v2 beside a v1-only DGD (`migrateCurrentWorkerHashIfNeeded`). */
export const REASON_WORKER_HASH_MIGRATED = 'WorkerHashMigrated';
export const MESSAGE_WORKER_HASH_MIGRATED = 'Recorded v2 worker hash annotation without rolling workers';
export const ANNOTATION_VLLM_DISTRIBUTED_EXECUTOR_BACKEND = 'nvidia.com/vllm-distributed-executor-backend';
export const ANNOTATION_KAI_QUEUE = 'nvidia.com/kai-scheduler-queue';
export const ANNOTATION_VOLCANO_QUEUE = 'nvidia.com/volcano-queue';
/** The PodCliqueSet annotation Grove reads the Volcano queue from. */
export const GROVE_ANNOTATION_VOLCANO_QUEUE = 'scheduling.grove.io/volcano-queue';
export const DEFAULT_KAI_QUEUE = 'dynamo';
export const KAI_SCHEDULER_NAME = 'kai-scheduler';
export const VOLCANO_SCHEDULER_NAME = 'volcano';

export const ENV_DYN_NAMESPACE = 'DYN_NAMESPACE';
export const ENV_DYN_COMPONENT = 'DYN_COMPONENT';
export const ENV_DYN_PARENT_DGD_K8S_NAME = 'DYN_PARENT_DGD_K8S_NAME';
export const ENV_DYN_PARENT_DGD_K8S_NAMESPACE = 'DYN_PARENT_DGD_K8S_NAMESPACE';
export const ENV_DYN_NAMESPACE_WORKER_SUFFIX = 'DYN_NAMESPACE_WORKER_SUFFIX';

/** Worker system port and frontend HTTP port (upstream-notes/dgd.md §4.4, §4.6). */
export const WORKER_SYSTEM_PORT = 9090;
export const FRONTEND_HTTP_PORT = 8000;
export const EPP_GRPC_PORT = 9002;

/** The main container of every component pod template (upstream-notes/dgd.md §2.3). */
export const MAIN_CONTAINER_NAME = 'main';

/** Grove's limit on PCS name + clique (+ scaling group) name (upstream-notes/grove.md §A.8). */
export const GROVE_MAX_COMBINED_NAME_LENGTH = 45;

export const CONDITION_READY = 'Ready';

/** Ready=False reason when a DGD cannot be rendered (our wording; upstream uses kebab reasons for program failures). */
export const REASON_INVALID_SPEC = 'InvalidSpec';
/** Ready=False reason while the rendered objects are applied but not yet observed ready. */
export const REASON_RESOURCES_NOT_READY = 'some_resources_are_not_ready';
/** Ready=True reason (upstream-notes/dgd.md §2.4). */
export const REASON_ALL_RESOURCES_READY = 'all_resources_are_ready';
/** Ready=False reasons of upstream's Grove readiness classification (upstream-notes/dgd.md §2.4, §4.7 step 5; upstream `DGDReadyReason*`). */
export const REASON_INSUFFICIENT_CAPACITY = 'insufficient_capacity';
export const REASON_PODS_NOT_READY = 'pods_not_ready';
export const REASON_UPDATING = 'updating';
export const REASON_MIXED_NOT_READY = 'mixed_not_ready_reasons';
/** Ready=False reason when LPX components are disabled by `lpx.enabled=false` (dgd-reference). */
export const REASON_LPX_DISABLED = 'LPXDisabled';

/** LPX role names (upstream-notes/lpx.md §1.1: `ComponentRoleLPXAgent`, `ComponentRoleLPXConductor`). */
export const LPX_ROLE_AGENT = 'agent';
export const LPX_ROLE_CONDUCTOR = 'conductor';
/** The scheduler LPX roles are bound to; controller-owned (upstream-notes/lpx.md §1.3 `LPXSchedulerName`). */
export const LPX_SCHEDULER_NAME = 'lpx-scheduler';
/** The Kubernetes default scheduler's name, which an LPX role template may still name. */
export const DEFAULT_SCHEDULER_NAME = 'default-scheduler';

export const PODCLIQUE_KIND = 'PodClique';
export const PODCLIQUESCALINGGROUP_KIND = 'PodCliqueScalingGroup';
/** Grove's label naming the PodCliqueSet a PodClique or PodCliqueScalingGroup belongs to (upstream-notes/grove.md §A.8). */
export const LABEL_GROVE_PART_OF = 'app.kubernetes.io/part-of';

// CONDITION_SCALING_DEFERRED, REASON_SCALING_ALLOWED and MESSAGE_SCALING_ALLOWED (upstream-notes/dgd.md
// §4.7 step 6) are defined once, in ./lpx.ts, which the LPX child shares.
/** ScalingDeferred=True while a Coherent update holds back replica changes (upstream-notes/dgd.md §4.7 step 6). */
export const REASON_COHERENT_UPDATE_IN_PROGRESS = 'CoherentUpdateInProgress';
export const MESSAGE_COHERENT_UPDATE_IN_PROGRESS = 'Replica changes are deferred until the Grove coherent update completes';
/** Ready=False reason while ScalingDeferred=True (upstream-notes/dgd.md §2.4). */
export const REASON_SCALING_DEFERRED = 'scaling_deferred';
/** Ready=False reason while a WaitForCheckpoint component waits for its checkpoint (upstream `reasonWaitingForCheckpoint`). */
export const REASON_WAITING_FOR_CHECKPOINT = 'waiting_for_checkpoint';
/** Ready=False reason when an object of a rendered name exists and this DGD does not control it (DESIGN.md "Writes": never adopt). */
export const REASON_OWNERSHIP_CONFLICT = 'OwnershipConflict';

/** DynamoGraphDeploymentScalingAdapter (../shared/crds/dynamo/nvidia.com_dynamographdeploymentscalingadapters.yaml). */
export const DGDSA_KIND = 'DynamoGraphDeploymentScalingAdapter';
export const DGDSA_V1BETA1 = 'nvidia.com/v1beta1';
export const DGDSA_V1ALPHA1 = 'nvidia.com/v1alpha1';
export const DGDSA_PLURAL = 'dynamographdeploymentscalingadapters';
export const DGDSA_SHORT_NAME = 'dgdsa';
/** Pod label naming a pod's component (upstream `consts.KubeLabelDynamoComponent`); the DGDSA selector uses it. */
export const LABEL_DYNAMO_COMPONENT = LABEL_COMPONENT;

/**
 * Reserved DGD annotations that carry what one served version cannot express, so a
 * v1alpha1 <-> v1beta1 round trip loses nothing (upstream api/v1alpha1/dynamographdeployment_conversion.go:
 * `nvidia.com/dgd-spec`; the whole `nvidia.com/dgd-` prefix is operator-owned and consumed by
 * every conversion, `nvidia.com/dgd-status` included, which our status renaming never needs).
 */
export const DGD_CONVERSION_ANNOTATION_PREFIX = 'nvidia.com/dgd-';
export const ANNOTATION_DGD_SPEC = 'nvidia.com/dgd-spec';

/** The Planner's service account name, allowed to change adapter-managed replicas in any namespace (upstream `consts.PlannerServiceAccountName`). */
export const PLANNER_SERVICE_ACCOUNT_NAME = 'planner-serviceaccount';

/**
 * Kubernetes discovery RBAC (upstream `deploy/operator/internal/discovery/resource.go`): the
 * ServiceAccount `<dgd>-k8s-service-discovery`, its Role `<sa>-role` and RoleBinding
 * `<sa>-binding`, labelled as upstream labels them.
 */
export const K8S_DISCOVERY_SERVICE_ACCOUNT_SUFFIX = '-k8s-service-discovery';
export const LABEL_APP_MANAGED_BY = 'app.kubernetes.io/managed-by';
export const LABEL_APP_COMPONENT = 'app.kubernetes.io/component';
export const LABEL_APP_NAME = 'app.kubernetes.io/name';
export const K8S_DISCOVERY_MANAGED_BY = 'dynamo-operator';
export const K8S_DISCOVERY_COMPONENT = 'rbac';
export const PERSISTENT_VOLUME_CLAIM_KIND = 'PersistentVolumeClaim';
