/**
 * DynamoGraphDeployment `nvidia.com/v1beta1`: the zod schema is the single source of the TS
 * type, our CRD's structural schema and the structural checks.
 *
 * Source: ../shared/reference/dgd-reference.txt; ../shared/upstream-notes/dgd.md §2.2-§2.4.
 * @module
 */
import { z } from 'zod';
import { ConditionSchema, EnvVarSchema, ObjectMetaSchema, PodTemplateSpecSchema, QuantitySchema, int32, looseObject } from './core.js';
import { DGD_KIND, DGD_V1BETA1 } from './constants.js';
import { LpxComponentConfigSchema } from './lpx-local-partitions.js';

export const COMPONENT_TYPES = ['frontend', 'worker', 'prefill', 'decode', 'planner', 'epp', 'lpx'] as const;
export type ComponentType = (typeof COMPONENT_TYPES)[number];
/** Worker-class components share the worker-generation hash (dgd-reference "Grove update strategy"). */
export const WORKER_CLASS_TYPES: readonly ComponentType[] = ['worker', 'prefill', 'decode'];

export const BACKEND_FRAMEWORKS = ['sglang', 'vllm', 'trtllm'] as const;

/** Component names: 1-63 characters, `^[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?$` (upstream-notes/dgd.md §2.3). */
export const COMPONENT_NAME_PATTERN = /^[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?$/;
export const MAX_COMPONENTS = 25;

/**
 * A sparse provider-native fragment (dgd-reference "ProviderOverride"). `value` is kept as
 * authored; its keys are checked by admission against the target's allowed set.
 */
export const ProviderOverrideSchema = z.object({
  apiVersion: z.string().min(1),
  target: z.string().optional(),
  value: looseObject(),
});
export type ProviderOverride = z.infer<typeof ProviderOverrideSchema>;

export const RoleSchema = z.object({
  name: z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/).max(63),
  replicas: int32(0).optional(),
  providerOverride: ProviderOverrideSchema.optional(),
  podTemplate: PodTemplateSpecSchema.optional(),
});
export type Role = z.infer<typeof RoleSchema>;

export const ComponentSchema = z.object({
  name: z.string().min(1).max(63).regex(COMPONENT_NAME_PATTERN, 'must consist of alphanumeric characters or "-", and start and end with an alphanumeric character'),
  type: z.enum(COMPONENT_TYPES).optional(),
  replicas: int32(0).optional(),
  /** Deprecated: use providerOverride's native minimum (dgd-reference "Configure native minimum availability"). */
  minAvailable: int32(1).optional(),
  podTemplate: PodTemplateSpecSchema.optional(),
  providerOverride: ProviderOverrideSchema.optional(),
  multinode: z.object({ nodeCount: int32(2).default(2) }).optional(),
  roles: z.array(RoleSchema).max(2).meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] }).optional(),
  lpx: LpxComponentConfigSchema.optional(),
  scalingAdapter: looseObject().optional(),
  sharedMemorySize: QuantitySchema.optional(),
  topologyConstraint: z.object({ packDomain: z.string().optional() }).loose().optional(),
  globalDynamoNamespace: z.boolean().optional(),
  runtimeVersionOverride: z.string().optional(),
  modelRef: z.object({ name: z.string().min(1), revision: z.string().optional() }).optional(),
  eppConfig: looseObject().optional(),
  frontendSidecar: z.string().optional(),
  compilationCache: z.object({ pvcName: z.string(), mountPath: z.string().optional() }).loose().optional(),
  experimental: z
    .object({
      grove: z.object({ forceScalingGroup: z.boolean().optional() }).optional(),
      gpuMemoryService: looseObject().optional(),
      failover: looseObject().optional(),
      checkpoint: looseObject().optional(),
    })
    .loose()
    .optional(),
});
export type Component = z.infer<typeof ComponentSchema>;

/**
 * `spec.experimental.kvTransferPolicy` (upstream-notes/dgd.md §2.2): exactly one topology
 * source (`clusterTopologyName` or `labelKey`), the `domain` the router enforces,
 * `enforcement` required|preferred and `preferredWeight` in [0, 1].
 */
export const KvTransferPolicySchema = z
  .object({
    clusterTopologyName: z.string().min(1).optional(),
    labelKey: z.string().min(1).optional(),
    domain: z.string().min(1),
    enforcement: z.enum(['required', 'preferred']).optional(),
    preferredWeight: z.number().min(0).max(1).optional(),
  })
  .superRefine((policy, ctx) => {
    if (!hasOneKvTopologySource(policy)) {
      ctx.addIssue({ code: 'custom', path: [], message: 'exactly one of clusterTopologyName or labelKey must be set', input: 'object' });
    }
  });
export type KvTransferPolicy = z.infer<typeof KvTransferPolicySchema>;

/** `spec.experimental.kvTransferPolicy` names exactly one topology source. Pure. */
export function hasOneKvTopologySource(policy: { readonly clusterTopologyName?: unknown; readonly labelKey?: unknown }): boolean {
  return (policy.clusterTopologyName === undefined) !== (policy.labelKey === undefined);
}

/** The CRD's CEL rule `at most one component may have type epp`, in JS. Pure. */
export function hasAtMostOneEpp(components: readonly { readonly type?: unknown }[]): boolean {
  let epps = 0;
  for (const component of components) if (component.type === 'epp') epps += 1;
  return epps <= 1;
}

/** The CRD's CEL rule `component names must be unique case-insensitively`, in JS. Pure. */
export function hasUniqueComponentNames(components: readonly { readonly name: string }[]): boolean {
  const seen = new Set<string>();
  for (const component of components) {
    const key = component.name.toLowerCase();
    if (seen.has(key)) return false;
    seen.add(key);
  }
  return true;
}

export const DgdSpecSchema = z
  .object({
    components: z
      .array(ComponentSchema)
      .max(MAX_COMPONENTS)
      .meta({
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
        'x-kubernetes-validations': [
          { rule: "self.filter(c, has(c.type) && c.type == 'epp').size() <= 1", message: 'at most one component may have type epp' },
          { rule: 'self.all(a, self.filter(b, b.name.lowerAscii() == a.name.lowerAscii()).size() == 1)', message: 'component names must be unique case-insensitively' },
        ],
      }),
    backendFramework: z.enum(BACKEND_FRAMEWORKS).optional(),
    env: z.array(EnvVarSchema).optional(),
    labels: z.record(z.string(), z.string()).optional(),
    annotations: z.record(z.string(), z.string()).optional(),
    priorityClassName: z.string().optional(),
    providerOverride: ProviderOverrideSchema.optional(),
    restart: z
      .object({
        id: z.string().optional(),
        strategy: z.object({ type: z.enum(['Sequential', 'Parallel']).optional(), order: z.array(z.string()).optional() }).optional(),
      })
      .optional(),
    topologyConstraint: z.object({ clusterTopologyName: z.string().min(1), packDomain: z.string().optional() }).optional(),
    experimental: z.object({ kvTransferPolicy: KvTransferPolicySchema.optional() }).loose().meta({ 'x-kubernetes-preserve-unknown-fields': true }).optional(),
  })
  .superRefine((spec, ctx) => {
    // The CRD's CEL rules (upstream-notes/dgd.md §2.2), repeated here so that `render` of a
    // file that never passed an API server reports them too.
    // `input: 'array'`: the API server prints a CEL failure with the schema type as the value.
    if (!hasAtMostOneEpp(spec.components)) ctx.addIssue({ code: 'custom', path: ['components'], message: 'at most one component may have type epp', input: 'array' });
    if (!hasUniqueComponentNames(spec.components)) ctx.addIssue({ code: 'custom', path: ['components'], message: 'component names must be unique case-insensitively', input: 'array' });
  });
export type DgdSpec = z.infer<typeof DgdSpecSchema>;

export const ComponentReplicaStatusSchema = z
  .object({
    componentKind: z.enum(['PodClique', 'PodCliqueScalingGroup', 'Deployment', 'LeaderWorkerSet']).optional(),
    componentNames: z.array(z.string()).optional(),
    runtimeNamespace: z.string().optional(),
    replicas: z.number().int().optional(),
    updatedReplicas: z.number().int().optional(),
    readyReplicas: z.number().int().optional(),
    availableReplicas: z.number().int().optional(),
  })
  .loose();

export const DgdStatusSchema = z
  .object({
    observedGeneration: z.number().int().optional(),
    state: z.enum(['initializing', 'pending', 'successful', 'failed']).optional(),
    conditions: z.array(ConditionSchema).optional(),
    components: z.record(z.string(), ComponentReplicaStatusSchema).optional(),
  })
  .loose();
export type DgdStatus = z.infer<typeof DgdStatusSchema>;

export const DgdSchema = z.object({
  apiVersion: z.literal(DGD_V1BETA1),
  kind: z.literal(DGD_KIND),
  metadata: ObjectMetaSchema,
  spec: DgdSpecSchema,
  status: DgdStatusSchema.optional(),
});
/** A DynamoGraphDeployment in its served, current version (v1beta1). */
export type Dgd = z.infer<typeof DgdSchema>;
