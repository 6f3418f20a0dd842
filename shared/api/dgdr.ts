/**
 * DynamoGraphDeploymentRequest `nvidia.com/v1beta1` (the storage version): the zod schema is the
 * single source of the TS type, the CRD's structural schema and the structural checks; the API
 * strings the profile function and admission share are defined here, once.
 *
 * Source: ../shared/reference/dgdr-reference.txt "Spec reference", "SKU format", "Status",
 * "Lifecycle", "Conditions", "Resource ownership"; upstream
 * deploy/operator/api/v1beta1/dynamographdeploymentrequest_types.go (names, enums, defaults,
 * printer columns); ../shared/upstream-notes/dgdr.md §1, §2.
 * @module
 */
import { z } from 'zod';
import { ConditionSchema, ObjectMetaSchema, looseObject } from './core.js';
import { DYNAMO_GROUP } from './constants.js';

export const DGDR_KIND = 'DynamoGraphDeploymentRequest';
export const DGDR_V1BETA1 = 'nvidia.com/v1beta1';
export const DGDR_V1ALPHA1 = 'nvidia.com/v1alpha1';
export const DGDR_PLURAL = 'dynamographdeploymentrequests';
export const DGDR_SHORT_NAME = 'dgdr';

/** Field manager of the profile function's writes (DESIGN.md "Writes": one per function). */
export const FIELD_MANAGER_PROFILE = 'dynamo-profile';

/** `status.phase` values (dgdr-reference "Status"). */
export const DGDR_PHASES = ['Pending', 'Profiling', 'Ready', 'Deploying', 'Deployed', 'Failed'] as const;
export type DgdrPhase = (typeof DGDR_PHASES)[number];
/** `status.profilingPhase` values, in pipeline order (dgdr-reference "Status"). */
export const PROFILING_PHASES = ['Initializing', 'SweepingPrefill', 'SweepingDecode', 'SelectingConfig', 'BuildingCurves', 'GeneratingDGD', 'Done'] as const;
export type ProfilingPhase = (typeof PROFILING_PHASES)[number];

/** `spec.hardware.gpuSku` values, in the reference's order (dgdr-reference "SKU format"). */
export const GPU_SKUS = ['vr_nvl72', 'gb200', 'gb200_sxm', 'gb10', 'b300_sxm', 'b200_sxm', 'h200_sxm', 'h100_sxm', 'h100_pcie', 'a100_sxm', 'a100_pcie', 'a30', 'l40s', 'l40', 'l4', 'v100_sxm', 'v100_pcie', 't4', 'mi200', 'mi300'] as const;
export type GpuSku = (typeof GPU_SKUS)[number];
/** Deprecated SKU: admitted with a warning (dgdr-reference "SKU format"). */
export const DEPRECATED_GPU_SKU_GB200_SXM = 'gb200_sxm';

export const DGDR_BACKENDS = ['auto', 'vllm', 'sglang', 'trtllm'] as const;
export const SEARCH_STRATEGIES = ['rapid', 'thorough'] as const;
export const OPTIMIZATION_TYPES = ['latency', 'throughput'] as const;

/** Condition types (dgdr-reference "Conditions"). */
export const CONDITION_SUCCEEDED = 'Succeeded';
export const CONDITION_VALIDATION = 'Validation';
export const CONDITION_PROFILING = 'Profiling';
export const CONDITION_SPEC_GENERATED = 'SpecGenerated';
export const CONDITION_DEPLOYMENT_READY = 'DeploymentReady';

/** Labels (dgdr-reference "Resource ownership"; upstream types file `Label*`). */
export const LABEL_APP = 'app';
export const LABEL_DGDR = 'dgdr';
export const LABEL_DGDR_NAME = 'dgdr.nvidia.com/name';
export const LABEL_DGDR_NAMESPACE = 'dgdr.nvidia.com/namespace';
/**
 * Ours (issue 20 "the same rule everywhere"): the uid of the request that created the object, stamped
 * at creation on the generated DGD and the planner ConfigMaps. A name label names a request anyone
 * can guess; the uid exists only once the request does, so an object planted before it cannot carry it.
 */
export const LABEL_DGDR_UID = 'dgdr.nvidia.com/uid';
export const LABEL_MANAGED_BY = 'nvidia.com/managed-by';
export const LABEL_VALUE_DYNAMO_PROFILER = 'dynamo-profiler';
export const LABEL_VALUE_DYNAMO_OPERATOR = 'dynamo-operator';
/** The Job controller's pod label naming its Job. */
export const LABEL_JOB_NAME = 'job-name';

/** Annotations on the DGDR holding the generated DGD and its extra resources (upstream-notes/dgdr.md §4.1). */
export const ANNOTATION_GENERATED_DGD_SPEC = 'nvidia.com/generated-dgd-spec';
export const ANNOTATION_ADDITIONAL_RESOURCES = 'dgdr.nvidia.com/additional-resources';
/** Upstream's limit on the additional-resources annotation, bytes (upstream-notes/profiler.md §1.7 `MaxAnnotationSize`). */
export const MAX_ADDITIONAL_RESOURCES_BYTES = 250_000;

/** Default profiler image repository; the tag is the operator version (dgdr-reference "Profiler image version compatibility"). */
export const DEFAULT_PLANNER_IMAGE_REPOSITORY = 'nvcr.io/nvidia/ai-dynamo/dynamo-planner';
/** The Dynamo release whose operator contract this control plane implements (profiler 1.6.1, upstream-notes/profiler.md §0). */
export const DEFAULT_OPERATOR_VERSION = '1.6.1';

/** `runtimeVersionOverride`: canonical MAJOR.MINOR.PATCH, each part 0-9999, no leading zeros (dgdr-reference "runtimeVersionOverride"). */
export const RUNTIME_VERSION_PATTERN = /^(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})$/;

const positiveNumber = () => z.number();

export const DgdrHardwareSchema = z.object({
  gpuSku: z.enum(GPU_SKUS).optional().describe('GPU type to target; auto-detected when omitted (see SKU format).'),
  vramMb: positiveNumber().optional().describe('VRAM per GPU in MiB; auto-detected when omitted.'),
  totalGpus: z.number().int().min(0).max(2_147_483_647).optional().describe('GPU budget; discovered from nodes of the selected shape when omitted, capped at 32.'),
  numGpusPerNode: z.number().int().min(0).max(2_147_483_647).optional().describe('GPUs per node; auto-detected when omitted.'),
  interconnect: z.string().optional().describe('Primary GPU-to-GPU interconnect within a node, e.g. nvlink or pcie. Capability metadata only.'),
  rdma: z.boolean().optional().describe('Whether RDMA-capable networking is available. Capability metadata only.'),
});
export type DgdrHardware = z.infer<typeof DgdrHardwareSchema>;

export const DgdrSpecSchema = z.object({
  model: z.string().min(1).describe('Model to deploy: a HuggingFace ID or a private model name. Must be non-empty.'),
  image: z.string().optional().describe('Container image of the profiling Job (the planner image); defaulted from the operator version on create.'),
  runtimeVersionOverride: z.string().regex(RUNTIME_VERSION_PATTERN, 'must be a canonical MAJOR.MINOR.PATCH version such as "1.4.0"').optional().describe('Dynamo runtime version for generated components without their own; required when spec.image has no parseable semantic-version tag.'),
  backend: z.enum(DGDR_BACKENDS).optional().describe('Inference backend used for profiling and deployment. Defaults to auto.'),
  searchStrategy: z.enum(SEARCH_STRATEGIES).optional().describe('Profiling depth. Defaults to rapid.'),
  autoApply: z.boolean().optional().describe('Create the DGD after profiling completes. Defaults to true.'),
  workload: z
    .object({
      isl: z.number().int().min(-2_147_483_648).max(2_147_483_647).optional().describe('Input sequence length in tokens. Defaults to 4000.'),
      osl: z.number().int().min(-2_147_483_648).max(2_147_483_647).optional().describe('Output sequence length in tokens. Defaults to 1000.'),
      concurrency: z.number().optional().describe('Target concurrency; mutually exclusive with requestRate.'),
      requestRate: z.number().optional().describe('Target request rate, requests per second; mutually exclusive with concurrency.'),
    })
    .optional(),
  sla: z
    .object({
      ttft: z.number().optional().describe('Time to first token target, milliseconds. Defaults to 2000.'),
      itl: z.number().optional().describe('Inter-token latency target, milliseconds. Defaults to 30.'),
      e2eLatency: z.number().optional().describe('End-to-end latency target, milliseconds; cannot be combined with ttft/itl.'),
      optimizationType: z.enum(OPTIMIZATION_TYPES).optional(),
    })
    .optional(),
  hardware: DgdrHardwareSchema.optional(),
  modelCache: z
    .object({
      pvcName: z.string().optional().describe('ReadWriteMany PVC with cached model weights, in the DGDR namespace.'),
      pvcModelPath: z.string().optional().describe('Model checkpoint directory within the PVC.'),
      pvcMountPath: z.string().optional().describe('Mount path of the PVC in the container. Defaults to /opt/model-cache.'),
    })
    .optional(),
  features: z
    .object({
      planner: looseObject().optional().describe('PlannerConfig passed through to the Planner; its presence enables the planner.'),
      kvRouter: z.object({ enabled: z.boolean().optional() }).optional(),
      mocker: z.object({ enabled: z.boolean().optional() }).optional(),
    })
    .optional(),
  overrides: z
    .object({
      profilingJob: looseObject().optional().describe('batch/v1 JobSpec fields merged into the profiling Job.'),
      trustRemoteCode: z.boolean().optional(),
      dgd: looseObject().optional().describe('A partial, versioned DGD merged into the generated deployment.'),
    })
    .optional(),
});
export type DgdrSpec = z.infer<typeof DgdrSpecSchema>;

export const DgdrStatusSchema = z
  .object({
    phase: z.enum(DGDR_PHASES).optional(),
    profilingPhase: z.enum(PROFILING_PHASES).optional(),
    dgdName: z.string().optional(),
    profilingJobName: z.string().optional(),
    conditions: z.array(ConditionSchema).meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] }).optional(),
    profilingResults: z
      .object({
        pareto: z.array(z.object({ config: looseObject() })).optional().describe('Deprecated; not populated.'),
        selectedConfig: looseObject().optional(),
      })
      .optional(),
    deploymentInfo: z.object({ replicas: z.number().int().optional(), availableReplicas: z.number().int().optional() }).optional(),
    observedGeneration: z.number().int().optional(),
  })
  .loose();
export type DgdrStatus = z.infer<typeof DgdrStatusSchema>;

export const DgdrSchema = z.object({
  apiVersion: z.literal(DGDR_V1BETA1),
  kind: z.literal(DGDR_KIND),
  metadata: ObjectMetaSchema,
  spec: DgdrSpecSchema,
  status: DgdrStatusSchema.optional(),
});
/** A DynamoGraphDeploymentRequest in its storage version (v1beta1). */
export type Dgdr = z.infer<typeof DgdrSchema>;

/** Printer columns of the v1beta1 version (upstream types file `+kubebuilder:printcolumn`). */
export const DGDR_PRINTER_COLUMNS = [
  { name: 'Model', type: 'string', jsonPath: '.spec.model' },
  { name: 'Backend', type: 'string', jsonPath: '.spec.backend' },
  { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
  { name: 'Profiling', type: 'string', jsonPath: '.status.profilingPhase' },
  { name: 'Reason', type: 'string', jsonPath: `.status.conditions[?(@.type=="${CONDITION_SUCCEEDED}")].reason`, priority: 1 },
  { name: 'Message', type: 'string', jsonPath: `.status.conditions[?(@.type=="${CONDITION_SUCCEEDED}")].message`, priority: 1 },
  { name: 'DGD', type: 'string', jsonPath: '.status.dgdName' },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
] as const;

export const DGDR_GROUP = DYNAMO_GROUP;
