/**
 * The experimental `nvidia.com/v1beta2` API behind the `dgdrV1Beta2.enabled` gate:
 * DynamoGraphDeploymentRequest v1beta2 (its spec and status), DynamoGraphDeploymentRun (one per
 * accepted request generation, its spec an exact frozen copy of the request's) and
 * DynamoGraphDeploymentCandidate (exactly a DGD spec, kept even when invalid).
 *
 * The shapes follow ../shared/reference/dgdr-reference.txt ("v1beta2 hardware SKU", "v1beta2 DGD
 * Overrides", "Candidate status", "Replay a recorded trace", "Trace claim lifecycle"), which wins
 * over upstream's competing v1beta2 drafts (upstream-notes/profiler.md §4; dgdr.md §5). Status
 * fields the reference leaves open (phase, jobRef, candidateRefs, times) follow upstream's Run
 * type (`deploy/operator/api/v1beta2`, described in profiler.md §4).
 * @module
 */
import { z } from 'zod';
import { ConditionSchema, ObjectMetaSchema, int32, looseObject } from './core.js';
import { BACKEND_FRAMEWORKS } from './dgd.js';
import bundledRecommendInputSchema from './aisimulate-recommend-input.schema.json' with { type: 'json' };

export const DGDR_V1BETA2 = 'nvidia.com/v1beta2';
export const DGDR_V1BETA2_KIND = 'DynamoGraphDeploymentRequest';
export const RUN_KIND = 'DynamoGraphDeploymentRun';
export const RUN_PLURAL = 'dynamographdeploymentruns';
/** Short name of the Run (upstream `dgdrrun`, profiler.md §4). */
export const RUN_SHORT_NAME = 'dgdrrun';
export const CANDIDATE_KIND = 'DynamoGraphDeploymentCandidate';
export const CANDIDATE_PLURAL = 'dynamographdeploymentcandidates';
/** Short name of the Candidate (upstream `dgdc`, profiler.md §4). */
export const CANDIDATE_SHORT_NAME = 'dgdc';

/** Field managers of the v1beta2 writers (DESIGN.md "Writes": the publisher owns Published, the Run logic Completed). */
export const FIELD_MANAGER_PROFILE_RUN = 'dynamo-profile-run';
export const FIELD_MANAGER_PROFILE_PUBLISHER = 'dynamo-profile-publisher';
export const FIELD_MANAGER_CLEANUP = 'dynamo-cleanup';

/** The claim finalizer prefix; the full finalizer is `nvidia.com/dgdr-run-<run-uid>` (reference "Trace claim lifecycle"). */
export const TRACE_CLAIM_FINALIZER_PREFIX = 'nvidia.com/dgdr-run-';

/** Reserved Candidate labels and annotations (reference "v1beta2 DGD Overrides"). */
export const LABEL_DGDR_RUN_UID = 'nvidia.com/dgdr-run-uid';
export const LABEL_DGDR_CANDIDATE_ID = 'nvidia.com/dgdr-candidate-id';
// `dgdr.nvidia.com/additional-resources` (ANNOTATION_ADDITIONAL_RESOURCES) is reserved too; defined in ./dgdr.ts.
export const ANNOTATION_PREFIX_DGD_CONVERSION = 'nvidia.com/dgd-';
/** The request generation a Run evaluates (upstream docs name `nvidia.com/dgdr-generation`, dgdr.md §5). */
export const LABEL_DGDR_GENERATION = 'nvidia.com/dgdr-generation';

/** Where the Job mounts the trace file (reference "Replay a recorded trace"). */
export const TRACE_MOUNT_DIR = '/var/run/aisimulate/trace';
/** The supplemental group of the Job's pod, so a group-readable trace is readable (reference "Replay a recorded trace"). */
export const TRACE_SUPPLEMENTAL_GROUP = 65532;
/** The AISimulate container of a Run's Job: the only container the trace is mounted into. */
export const AISIMULATE_CONTAINER_NAME = 'aisimulate';

/**
 * Where a Run's Job leaves AISimulate's `recommendation.json` for the publisher: the ConfigMap
 * `<run>-aisimulate-output`, key `recommendation.json` (as the v1beta1 Job's output-copier
 * leaves `dgdr-output-<name>`, upstream-notes/dgdr.md §7).
 */
export const RUN_OUTPUT_CONFIGMAP_SUFFIX = '-aisimulate-output';
export const RUN_OUTPUT_RECOMMENDATION_KEY = 'recommendation.json';

/** How many finished Runs per request are kept (reference "Trace claim lifecycle", last paragraph). */
export const RUN_RETENTION_FINISHED = 5;

/** Default of `recommendation.maxCandidates` (upstream v1beta2 type, dgdr.md §5). */
export const DEFAULT_MAX_CANDIDATES = 5;

/**
 * The SKUs of the AISimulate system catalog bundled with this release; admission warns on
 * others but passes them through (reference "v1beta2 hardware SKU").
 */
export const BUNDLED_AISIMULATE_SKUS = [
  'a100_pcie', 'a100_sxm', 'a30', 'b200_sxm', 'b300_sxm', 'b60', 'gb200', 'gb300',
  'h100_pcie', 'h100_sxm', 'h200_sxm', 'l4', 'l40s', 'rtx_pro_6000_server',
] as const;

/**
 * The JSON Schema of the AISimulate `recommend` input of the bundled release (0.13.0.dev85,
 * generated from it by scripts/aisimulate-input-schema.ts): request and Run admission validate the
 * merged input against it (reference "v1beta2 hardware SKU"; upstream-notes/profiler.md §3.5).
 */
export const BUNDLED_AISIMULATE_RECOMMEND_INPUT_SCHEMA: Readonly<Record<string, unknown>> = bundledRecommendInputSchema;

// Run conditions and reasons. Published is the publisher's, Completed the Run controller's
// (reference "v1beta2 DGD Overrides"); Valid is the Candidate's (reference "Candidate status").
export const CONDITION_COMPLETED = 'Completed';
export const CONDITION_PUBLISHED = 'Published';
export const CONDITION_VALID = 'Valid';
export const REASON_TRACE_SOURCE_DELETED = 'TraceSourceDeleted';
export const REASON_TRACE_SOURCE_MISSING = 'TraceSourceMissing';
export const REASON_TRACE_SOURCE_UNAVAILABLE = 'TraceSourceUnavailable';
export const REASON_CONTAINER_WAITING = 'ContainerWaiting';
export const REASON_SUPERSEDED = 'Superseded';
export const REASON_PUBLICATION_BLOCKED = 'PublicationBlocked';
export const REASON_PUBLICATION_SUCCEEDED = 'PublicationSucceeded';
export const REASON_VALIDATION_SUCCEEDED = 'ValidationSucceeded';
export const REASON_OVERRIDE_TARGET_NOT_FOUND = 'OverrideTargetNotFound';
export const REASON_OVERRIDE_FAILED = 'OverrideFailed';
export const REASON_VALIDATION_FAILED = 'ValidationFailed';
/** Completed reasons the reference leaves to us (upstream docs: `EvaluatingCandidates`, dgdr.md §5). */
export const REASON_JOB_PENDING = 'JobPending';
export const REASON_EVALUATING_CANDIDATES = 'EvaluatingCandidates';
export const REASON_RUN_SUCCEEDED = 'RunSucceeded';
export const REASON_JOB_FAILED = 'JobFailed';
export const REASON_JOB_DELETED = 'JobDeleted';
export const REASON_JOB_CONFLICT = 'JobConflict';
export const REASON_NO_VALID_CANDIDATES = 'NoValidCandidates';
/**
 * The v1beta2 request's `Accepted` condition (upstream's print column, dgdr.md §5; reasons are
 * ours, the reference names none): the current generation has its Run, or is waiting for the
 * previous Run to stop, or its Run's name is taken by an object the request does not control.
 */
export const CONDITION_ACCEPTED = 'Accepted';
export const REASON_RUN_CREATED = 'RunCreated';
export const REASON_STOPPING_PREVIOUS_RUN = 'StoppingPreviousRun';
export const REASON_RUN_CONFLICT = 'RunConflict';

/** Conditions as a list map keyed by `type`, so two field managers own different types. */
const ConditionListSchema = z.array(ConditionSchema).meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] });

/** `spec.workload.trace` (reference "Replay a recorded trace"). */
export const TraceWorkloadSchema = z.object({
  /** Only `Dynamo` (dynamo.request.trace.v1, JSON Lines, gzip when the name ends in .gz). Default Dynamo. */
  format: z.enum(['Dynamo']).default('Dynamo'),
  source: z.object({
    persistentVolumeClaim: z.object({
      /** A claim in the request's namespace. */
      claimName: z.string().min(1).max(253),
      /** One file relative to the claim root; directories and globs are not expanded. */
      subPath: z.string().min(1),
    }),
  }),
  replay: z
    .object({
      /** Replays arrivals this many times as fast; > 0. Lowered to `traffic.load.speedup`. */
      arrivalSpeedupRatio: z.number().gt(0).optional(),
    })
    .optional(),
});
export type TraceWorkload = z.infer<typeof TraceWorkloadSchema>;

/** `spec.workload.static`: synthetic traffic (v1beta1 WorkloadSpec's fields). */
export const StaticWorkloadSchema = z.object({
  /** Input sequence length in tokens; admission default 4000. */
  isl: int32(1).optional(),
  /** Output sequence length in tokens; admission default 1000. */
  osl: int32(1).optional(),
  /** Target concurrency (requests in flight, a whole number); exclusive with requestRate. */
  concurrency: int32(1).optional(),
  /** Target request rate in requests per second; exclusive with concurrency. */
  requestRate: z.number().gt(0).optional(),
});
export type StaticWorkload = z.infer<typeof StaticWorkloadSchema>;

/** DynamoGraphDeploymentRequest v1beta2 spec (reference; the Run's spec is an exact copy). */
export const DgdrV1Beta2SpecSchema = z.object({
  model: z.object({ name: z.string().min(1) }),
  /** Restricts results to these backends; optional. */
  backends: z.array(z.enum(BACKEND_FRAMEWORKS)).min(1).meta({ 'x-kubernetes-list-type': 'set' }).optional(),
  /** The Run Job's image (AISimulate); admission defaults it. */
  image: z.string().min(1).optional(),
  hardware: z
    .object({
      gpu: z
        .object({
          /** An AISimulate system-catalog identifier, passed through unchanged. */
          sku: z.string().min(1).optional(),
          /** GPU budget: the most GPUs one Candidate may use. */
          budget: int32(1).optional(),
          numGpusPerNode: int32(1).optional(),
        })
        .optional(),
    })
    .optional(),
  workload: z
    .object({
      trace: TraceWorkloadSchema.optional(),
      /** `null` in an update switches a static request to a trace. */
      static: StaticWorkloadSchema.nullable().optional(),
    })
    .optional(),
  aisim: z
    .object({
      /** A JSON Merge Patch applied last over the lowered AISimulate input. */
      inputOverrides: looseObject().optional(),
    })
    .optional(),
  overrides: z
    .object({
      profilingJob: looseObject().optional(),
      /** One partial `nvidia.com/v1beta1` DynamoGraphDeployment. */
      dgd: looseObject().optional(),
    })
    .optional(),
  recommendation: z.object({ maxCandidates: int32(1).optional() }).optional(),
});
export type DgdrV1Beta2Spec = z.infer<typeof DgdrV1Beta2SpecSchema>;

const RunRefSchema = z.object({ name: z.string(), uid: z.string().optional() });

/** DGDR v1beta2 status (upstream v1beta2 type, dgdr.md §5). */
export const DgdrV1Beta2StatusSchema = z
  .object({
    observedGeneration: z.number().int().optional(),
    activeRunRef: RunRefSchema.optional(),
    /** Newest first. */
    recentRunRefs: z.array(RunRefSchema).optional(),
    conditions: ConditionListSchema.optional(),
  })
  .loose();
export type DgdrV1Beta2Status = z.infer<typeof DgdrV1Beta2StatusSchema>;

export const DgdrV1Beta2Schema = z.object({
  apiVersion: z.literal(DGDR_V1BETA2),
  kind: z.literal(DGDR_V1BETA2_KIND),
  metadata: ObjectMetaSchema,
  spec: DgdrV1Beta2SpecSchema,
  status: DgdrV1Beta2StatusSchema.optional(),
});
export type DgdrV1Beta2 = z.infer<typeof DgdrV1Beta2Schema>;

/** One published Candidate, in the Run's original search order. */
export const CandidateRefSchema = z.object({ name: z.string(), candidateId: z.string() });
export type CandidateRef = z.infer<typeof CandidateRefSchema>;

export const RUN_PHASES = ['Pending', 'Running', 'Succeeded', 'Failed'] as const;
export type RunPhase = (typeof RUN_PHASES)[number];

/** DynamoGraphDeploymentRun status (upstream Run type, profiler.md §4; phase is presentation only). */
export const RunStatusSchema = z
  .object({
    observedGeneration: z.number().int().optional(),
    phase: z.enum(RUN_PHASES).optional(),
    jobRef: z.object({ name: z.string(), uid: z.string().optional() }).optional(),
    progress: z
      .object({
        candidates: z.object({ published: int32(0).optional() }).loose().optional(),
      })
      .loose()
      .optional(),
    candidateRefs: z.array(CandidateRefSchema).optional(),
    startTime: z.string().optional(),
    completionTime: z.string().optional(),
    conditions: ConditionListSchema.optional(),
  })
  .loose();
export type RunStatus = z.infer<typeof RunStatusSchema>;

export const RunSchema = z.object({
  apiVersion: z.literal(DGDR_V1BETA2),
  kind: z.literal(RUN_KIND),
  metadata: ObjectMetaSchema,
  spec: DgdrV1Beta2SpecSchema,
  status: RunStatusSchema.optional(),
});
export type Run = z.infer<typeof RunSchema>;

/**
 * DynamoGraphDeploymentCandidate. `spec` is opaque: exactly the DGD spec, kept as published
 * even with unknown fields or wrong types (reference "v1beta2 DGD Overrides": "Unknown fields
 * and incorrect field types remain visible on invalid Candidates").
 */
export const CandidateStatusSchema = z
  .object({
    /** Original resolved simulation inputs. */
    parameters: looseObject().optional(),
    /** Original simulation results; not recomputed after overrides. */
    metrics: looseObject().optional(),
    /** Position in the search result, from 1. */
    rank: int32(1).optional(),
    conditions: ConditionListSchema.optional(),
  })
  .loose();
export type CandidateStatus = z.infer<typeof CandidateStatusSchema>;

export const CandidateSchema = z.object({
  apiVersion: z.literal(DGDR_V1BETA2),
  kind: z.literal(CANDIDATE_KIND),
  metadata: ObjectMetaSchema,
  spec: looseObject(),
  status: CandidateStatusSchema.optional(),
});
export type Candidate = z.infer<typeof CandidateSchema>;
