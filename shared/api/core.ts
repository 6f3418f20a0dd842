/**
 * The few Kubernetes core shapes our schemas need. Pod templates are validated only where
 * we read them (container names, images, env); every other field passes through unchanged
 * and is preserved as unknown fields in our CRDs, as an embedded PodTemplateSpec is upstream.
 * @module
 */
import { z } from 'zod';

const PRESERVE = { 'x-kubernetes-preserve-unknown-fields': true } as const;

/** Kubernetes object metadata, as much as a control plane reads. */
export const ObjectMetaSchema = z
  .object({
    name: z.string().optional(),
    generateName: z.string().optional(),
    namespace: z.string().optional(),
    uid: z.string().optional(),
    resourceVersion: z.string().optional(),
    generation: z.number().int().optional(),
    creationTimestamp: z.string().optional(),
    deletionTimestamp: z.string().optional(),
    labels: z.record(z.string(), z.string()).optional(),
    annotations: z.record(z.string(), z.string()).optional(),
    finalizers: z.array(z.string()).optional(),
    ownerReferences: z.array(z.record(z.string(), z.unknown())).optional(),
  })
  .loose();
export type ObjectMeta = z.infer<typeof ObjectMetaSchema>;

/** corev1.EnvVar: `value` or `valueFrom`. */
export const EnvVarSchema = z
  .object({
    name: z.string().min(1),
    value: z.string().optional(),
    valueFrom: z.record(z.string(), z.unknown()).meta(PRESERVE).optional(),
  })
  .loose()
  .meta(PRESERVE);
export type EnvVar = z.infer<typeof EnvVarSchema>;

/** corev1.Container, loosely: the fields rendering reads are typed, the rest pass through. */
export const ContainerSchema = z
  .object({
    name: z.string().min(1),
    image: z.string().optional(),
    command: z.array(z.string()).optional(),
    args: z.array(z.string()).optional(),
    env: z.array(EnvVarSchema).optional(),
    ports: z.array(z.record(z.string(), z.unknown())).optional(),
    resources: z.record(z.string(), z.unknown()).optional(),
  })
  .loose()
  .meta(PRESERVE);
export type Container = z.infer<typeof ContainerSchema>;

/** corev1.PodSpec, loosely. `containers: null` (seen in real manifests) reads as absent. */
export const PodSpecSchema = z
  .object({
    containers: z.array(ContainerSchema).nullish(),
    initContainers: z.array(ContainerSchema).nullish(),
    volumes: z.array(z.record(z.string(), z.unknown())).optional(),
  })
  .loose()
  .meta(PRESERVE);
export type PodSpec = z.infer<typeof PodSpecSchema>;

/** corev1.PodTemplateSpec. */
export const PodTemplateSpecSchema = z
  .object({
    metadata: z
      .object({
        labels: z.record(z.string(), z.string()).optional(),
        annotations: z.record(z.string(), z.string()).optional(),
      })
      .loose()
      .optional(),
    spec: PodSpecSchema.optional(),
  })
  .loose()
  .meta(PRESERVE);
export type PodTemplateSpec = z.infer<typeof PodTemplateSpecSchema>;

/** metav1.Condition. */
export const ConditionSchema = z.object({
  type: z.string().min(1),
  status: z.enum(['True', 'False', 'Unknown']),
  reason: z.string().min(1),
  message: z.string(),
  lastTransitionTime: z.string(),
  observedGeneration: z.number().int().optional(),
});
export type Condition = z.infer<typeof ConditionSchema>;

/** A Kubernetes quantity as authored: `"8Gi"`, `"0"`, or a bare number. */
export const QuantitySchema = z.union([z.string(), z.number()]);

/** A Kubernetes int32 field (replicas, counts): a whole number in [min, 2^31-1]. */
export const int32 = (min = 0) => z.number().int().min(min).max(2_147_483_647);

/** Preserved, unvalidated JSON object (rendered as `x-kubernetes-preserve-unknown-fields`). */
export const looseObject = () => z.record(z.string(), z.unknown()).meta(PRESERVE);
