/**
 * Grove `grove.io/v1alpha1`: PodCliqueSet, PodClique and PodCliqueScalingGroup, including the
 * `Coherent` update strategy and per-clique / per-scaling-group `rollingUpdate.maxUnavailable`.
 *
 * Source: ../shared/crds/grove/grove.io_podcliquesets.coherent.yaml (Grove PR #649),
 * ../shared/upstream-notes/grove.md §A.2-§A.4.
 * @module
 */
import { z } from 'zod';
import { ConditionSchema, ObjectMetaSchema, looseObject } from './core.js';
import { GROVE_API_VERSION, GROVE_UPDATE_STRATEGIES } from './constants.js';

export const RollingUpdateSchema = z.object({ maxUnavailable: z.number().int().min(1).optional() });

export const TopologyConstraintSchema = z
  .object({
    topologyName: z.string().optional(),
    packDomain: z.string().optional(),
    pack: z.object({ required: z.string().optional(), preferred: z.string().optional() }).optional(),
  })
  .loose();

export const PodCliqueSpecSchema = z.object({
  roleName: z.string().min(1),
  replicas: z.number().int(),
  minAvailable: z.number().int().optional(),
  startsAfter: z.array(z.string()).optional(),
  podSpec: looseObject(),
  autoScalingConfig: looseObject().optional(),
});

export const PodCliqueTemplateSpecSchema = z.object({
  name: z.string().min(1),
  labels: z.record(z.string(), z.string()).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
  topologyConstraint: TopologyConstraintSchema.optional(),
  rollingUpdate: RollingUpdateSchema.optional(),
  spec: PodCliqueSpecSchema,
});
export type PodCliqueTemplateSpec = z.infer<typeof PodCliqueTemplateSpecSchema>;

export const PodCliqueScalingGroupConfigSchema = z.object({
  name: z.string().min(1),
  cliqueNames: z.array(z.string()),
  annotations: z.record(z.string(), z.string()).optional(),
  replicas: z.number().int().optional(),
  minAvailable: z.number().int().optional(),
  topologyConstraint: TopologyConstraintSchema.optional(),
  rollingUpdate: RollingUpdateSchema.optional(),
});
export type PodCliqueScalingGroupConfig = z.infer<typeof PodCliqueScalingGroupConfigSchema>;

export const PodCliqueSetSpecSchema = z.object({
  replicas: z.number().int().min(0),
  updateStrategy: z.object({ type: z.enum(GROVE_UPDATE_STRATEGIES) }).optional(),
  template: z.object({
    cliques: z.array(PodCliqueTemplateSpecSchema).min(1),
    podCliqueScalingGroups: z.array(PodCliqueScalingGroupConfigSchema).optional(),
    cliqueStartupType: z.enum(['CliqueStartupTypeAnyOrder', 'CliqueStartupTypeInOrder', 'CliqueStartupTypeExplicit']).optional(),
    priorityClassName: z.string().optional(),
    headlessServiceConfig: z.object({ publishNotReadyAddresses: z.boolean() }).optional(),
    topologyConstraint: TopologyConstraintSchema.optional(),
    terminationDelay: z.string().optional(),
  }),
});

const UpdateProgressSchema = z
  .object({ updateStartedAt: z.string().optional(), updateEndedAt: z.string().optional() })
  .loose();

export const PodCliqueSetStatusSchema = z
  .object({
    observedGeneration: z.number().int().optional(),
    replicas: z.number().int().optional(),
    updatedReplicas: z.number().int().optional(),
    availableReplicas: z.number().int().optional(),
    conditions: z.array(ConditionSchema).optional(),
    currentGenerationHash: z.string().optional(),
    updateProgress: UpdateProgressSchema.optional(),
  })
  .loose();

export const PodCliqueSetSchema = z.object({
  apiVersion: z.literal(GROVE_API_VERSION),
  kind: z.literal('PodCliqueSet'),
  metadata: ObjectMetaSchema,
  spec: PodCliqueSetSpecSchema,
  status: PodCliqueSetStatusSchema.optional(),
});
export type PodCliqueSet = z.infer<typeof PodCliqueSetSchema>;

export const PodCliqueSchema = z.object({
  apiVersion: z.literal(GROVE_API_VERSION),
  kind: z.literal('PodClique'),
  metadata: ObjectMetaSchema,
  spec: PodCliqueSpecSchema,
  status: z
    .object({
      observedGeneration: z.number().int().optional(),
      replicas: z.number().int().optional(),
      readyReplicas: z.number().int().optional(),
      updatedReplicas: z.number().int().optional(),
      scheduledReplicas: z.number().int().optional(),
      scheduleGatedReplicas: z.number().int().optional(),
      conditions: z.array(ConditionSchema).optional(),
    })
    .loose()
    .optional(),
});
export type PodClique = z.infer<typeof PodCliqueSchema>;

export const PodCliqueScalingGroupSchema = z.object({
  apiVersion: z.literal(GROVE_API_VERSION),
  kind: z.literal('PodCliqueScalingGroup'),
  metadata: ObjectMetaSchema,
  spec: z.object({ replicas: z.number().int(), minAvailable: z.number().int().optional(), cliqueNames: z.array(z.string()) }),
  status: z
    .object({
      observedGeneration: z.number().int().optional(),
      replicas: z.number().int().optional(),
      availableReplicas: z.number().int().optional(),
      updatedReplicas: z.number().int().optional(),
      scheduledReplicas: z.number().int().optional(),
      conditions: z.array(ConditionSchema).optional(),
    })
    .loose()
    .optional(),
});
export type PodCliqueScalingGroup = z.infer<typeof PodCliqueScalingGroupSchema>;
