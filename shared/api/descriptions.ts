/**
 * Field descriptions of our CRDs, attached to the zod schemas as metadata so `kubectl explain`
 * prints them. They live in a zod registry (passed to `z.toJSONSchema` by ./crd.ts) instead of
 * inline `.describe()` calls, which keeps the schema files readable and the descriptions of the
 * shared core shapes (pod templates, conditions) in one place.
 *
 * A new kind adds a `describeXFields(registry)` function here and calls it from
 * {@link crdDescriptions}; the unit test `test/unit/crds.test.ts` fails for any field of any
 * of our CRDs that has no description.
 *
 * Sources: ../shared/reference/dgd-reference.txt ("Grove update strategy", "Configure native
 * minimum availability", "ProviderOverride", "Status"); ../shared/upstream-notes/dgd.md §2.2-§2.4
 * (field shapes and rules).
 * @module
 */
import { z } from 'zod';
import {
  ConditionSchema,
  ContainerSchema,
  EnvVarSchema,
  ObjectMetaSchema,
  PodSpecSchema,
  PodTemplateSpecSchema,
} from './core.js';
import { ComponentReplicaStatusSchema, ComponentSchema, DgdSpecSchema, DgdStatusSchema, KvTransferPolicySchema, ProviderOverrideSchema, RoleSchema } from './dgd.js';
import { CandidateStatusSchema } from './dgdr-v1beta2.js';
import { LpxGraphDeploymentStatusSchema } from './lpx.js';

/** The metadata a CRD field carries. */
export interface FieldMeta {
  readonly description: string;
}

/** A zod registry of field descriptions. */
export type DescriptionRegistry = z.core.$ZodRegistry<FieldMeta>;

function describe(registry: DescriptionRegistry, fields: ReadonlyArray<readonly [z.ZodType | undefined, string]>): void {
  for (const [schema, description] of fields) {
    if (schema !== undefined) registry.add(schema, { description });
  }
}

/** The core Kubernetes shapes our kinds embed (pod templates, env, conditions). */
export function describeCoreFields(registry: DescriptionRegistry): void {
  const template = PodTemplateSpecSchema.shape;
  const metadata = template.metadata.unwrap().shape;
  const pod = PodSpecSchema.shape;
  const container = ContainerSchema.shape;
  const env = EnvVarSchema.shape;
  const condition = ConditionSchema.shape;
  describe(registry, [
    [template.metadata, 'Labels and annotations added to the rendered pods (core/v1 ObjectMeta, partial).'],
    [metadata.labels, 'Labels added to the rendered pods.'],
    [metadata.annotations, 'Annotations added to the rendered pods.'],
    [template.spec, 'The pod spec (core/v1 PodSpec). Fields not listed are passed through to the rendered pods unchanged.'],
    [pod.containers, 'The containers of the pod. A component pod template must contain a container named "main" with a non-empty image.'],
    [pod.initContainers, 'Init containers of the pod. An init container named "runtime" with restartPolicy Always selects the Dynamo sidecar mode.'],
    [pod.volumes, 'Volumes of the pod (core/v1 Volume), passed through unchanged.'],
    [container.name, 'The container name; "main" is the component main container.'],
    [container.image, 'The container image. Required on the "main" container of a new component.'],
    [container.command, 'The entrypoint array; the image ENTRYPOINT when omitted.'],
    [container.args, 'Arguments to the entrypoint.'],
    [container.env, 'Environment variables of the container (core/v1 EnvVar).'],
    [container.ports, 'Ports the container exposes (core/v1 ContainerPort).'],
    [container.resources, 'Compute resources (core/v1 ResourceRequirements): requests and limits, including nvidia.com/gpu.'],
    [env.name, 'The environment variable name.'],
    [env.value, 'The value; empty when valueFrom is set.'],
    [env.valueFrom, 'The source of the value (core/v1 EnvVarSource): a Secret, ConfigMap, field or resource reference.'],
    [condition.type, 'The condition type, in CamelCase (e.g. Ready).'],
    [condition.status, 'True, False or Unknown.'],
    [condition.reason, 'A programmatic identifier for the last transition.'],
    [condition.message, 'A human-readable message about the last transition.'],
    [condition.lastTransitionTime, 'When the status last changed (RFC 3339, whole seconds).'],
    [condition.observedGeneration, 'The metadata.generation the condition was computed from.'],
  ]);
  // ObjectMeta is served by the API server's own schema; these cover embedded copies.
  describe(registry, [[ObjectMetaSchema.shape.name, 'The object name.']]);
}

/** DynamoGraphDeployment v1beta1: spec, components, roles, provider overrides and status. */
export function describeDgdFields(registry: DescriptionRegistry): void {
  const spec = DgdSpecSchema.shape;
  const component = ComponentSchema.shape;
  const role = RoleSchema.shape;
  const override = ProviderOverrideSchema.shape;
  const status = DgdStatusSchema.shape;
  const replicaStatus = ComponentReplicaStatusSchema.shape;
  const experimental = component.experimental.unwrap().shape;
  const restart = spec.restart.unwrap().shape;
  const restartStrategy = restart.strategy.unwrap().shape;
  const graphTopology = spec.topologyConstraint.unwrap().shape;
  const modelRef = component.modelRef.unwrap().shape;
  const compilationCache = component.compilationCache.unwrap().shape;
  describe(registry, [
    [DgdSpecSchema, 'The desired state of the inference graph: its components and graph-wide settings.'],
    [spec.components, 'The components of the graph (frontend, workers, prefill and decode workers, planner, EPP, LPX), a list keyed by name. At least one, at most 25; names are unique case-insensitively; at most one component of type epp.'],
    [spec.backendFramework, 'The inference backend of the workers: sglang, vllm or trtllm. Immutable once set.'],
    [spec.env, 'Environment variables added to the main container of every component (core/v1 EnvVar).'],
    [spec.labels, 'Labels propagated to the child resources of the graph.'],
    [spec.annotations, 'Annotations propagated to the child resources of the graph. The Grove update strategy is selected by metadata.annotations["nvidia.com/grove-update-strategy"], not here.'],
    [spec.priorityClassName, 'The PriorityClass of the rendered pods.'],
    [spec.providerOverride, 'A sparse Grove-native fragment merged into the generated PodCliqueSet (graph scope: target PodCliqueSet).'],
    [spec.restart, 'A restart request. Must be unset on create; set restart.id after creation to restart the graph.'],
    [restart.id, 'An arbitrary identifier; changing it requests a new restart.'],
    [restart.strategy, 'How components restart.'],
    [restartStrategy.type, 'Sequential (one component after another, in order) or Parallel. Graphs with LPX components must use Parallel.'],
    [restartStrategy.order, 'Component names in restart order, for the Sequential strategy.'],
    [spec.topologyConstraint, 'Topology-aware placement of the whole graph.'],
    [graphTopology.clusterTopologyName, 'The name of the Grove ClusterTopology to place against.'],
    [graphTopology.packDomain, 'The topology domain the whole graph is packed into (e.g. rack, zone).'],
    [spec.experimental, 'Experimental graph-wide settings; may change without notice.'],
    [spec.experimental.unwrap().shape.kvTransferPolicy, 'Where KV cache transfers between prefill and decode workers may go, by topology domain.'],
    [KvTransferPolicySchema.shape.clusterTopologyName, 'The Grove ClusterTopology the domain is read from (exactly one of clusterTopologyName and labelKey).'],
    [KvTransferPolicySchema.shape.labelKey, 'The node label the domain is read from (exactly one of clusterTopologyName and labelKey).'],
    [KvTransferPolicySchema.shape.domain, 'The topology domain KV transfers are kept within (e.g. rack).'],
    [KvTransferPolicySchema.shape.enforcement, 'required (never cross the domain) or preferred (weighted by preferredWeight).'],
    [KvTransferPolicySchema.shape.preferredWeight, 'How strongly a preferred domain is favoured, in [0, 1].'],

    [component.name, 'The stable logical identifier of the component, 1-63 characters, alphanumeric or "-", starting and ending with an alphanumeric character. Used in status keys, labels and generated names.'],
    [component.type, 'The component type: frontend, worker, prefill, decode, planner, epp or lpx. Immutable once set. lpx is experimental and requires lpx.enabled.'],
    [component.replicas, 'The desired number of replicas (int32, at least 0). Defaulted to 1 for non-LPX components. Owned by the DynamoGraphDeploymentScalingAdapter when scalingAdapter is set.'],
    [component.minAvailable, 'Deprecated: set the minimum through providerOverride.value.spec.minAvailable (standalone) or value.minAvailable (scaling group). At least 1; immutable; must not be mixed with the native form.'],
    [component.podTemplate, 'The pod template of the component (core/v1 PodTemplateSpec). Must contain a container named "main". Mutually exclusive with roles[].podTemplate.'],
    [component.providerOverride, 'A sparse Grove-native fragment for the generated clique or scaling group: the native minimum (minAvailable), the rollout budget (rollingUpdate.maxUnavailable) or topology. target is resolved by admission when omitted.'],
    [component.multinode, 'Runs each replica over several nodes (worker, prefill and decode only). Immutable.'],
    [component.multinode.unwrap().shape.nodeCount, 'Nodes per replica, at least 2 (default 2).'],
    [component.roles, 'Per-role settings, a list keyed by name, at most 2: leader and worker for multinode, conductor and agent for LPX.'],
    [component.lpx, 'LPX settings (buildId, scheduling, localPartitions); allowed and required only for type lpx. Experimental.'],
    [component.scalingAdapter, 'A marker: when present, a DynamoGraphDeploymentScalingAdapter owns the replicas of this component.'],
    [component.sharedMemorySize, 'The size of the /dev/shm volume (a quantity); 8Gi when omitted, "0" disables it.'],
    [component.topologyConstraint, 'Topology-aware placement of this component.'],
    [component.topologyConstraint.unwrap().shape.packDomain, 'The topology domain the component is packed into; must not be wider than the graph-level domain.'],
    [component.globalDynamoNamespace, 'When true, the component runs in the global Dynamo namespace "dynamo" instead of the graph one.'],
    [component.runtimeVersionOverride, 'The Dynamo runtime version (MAJOR.MINOR.PATCH), required when the image tag is not a semantic version.'],
    [component.modelRef, 'The model this component serves; a headless model Service is created for it.'],
    [modelRef.name, 'The model name.'],
    [modelRef.revision, 'The model revision.'],
    [component.eppConfig, 'Deprecated configuration of the Go endpoint picker; only for type epp.'],
    [component.frontendSidecar, 'The name of a container in the pod template that runs the frontend as a sidecar.'],
    [component.compilationCache, 'A PersistentVolumeClaim holding the compilation cache.'],
    [compilationCache.pvcName, 'The PersistentVolumeClaim name.'],
    [compilationCache.mountPath, 'Where the cache is mounted in the main container.'],
    [component.experimental, 'Experimental component settings; may change without notice.'],
    [experimental.grove, 'Grove-specific experimental settings.'],
    [experimental.grove.unwrap().shape.forceScalingGroup, 'Render a single-node component as a PodCliqueScalingGroup instead of a standalone clique.'],
    [experimental.gpuMemoryService, 'The GPU memory service (mode IntraPod or InterPod).'],
    [experimental.failover, 'Failover with shadow engines (mode, numShadows).'],
    [experimental.checkpoint, 'Checkpoint and restore of engine state.'],

    [role.name, 'The role name: leader or worker (multinode), conductor or agent (LPX).'],
    [role.replicas, 'Replicas of this role (int32, at least 0).'],
    [role.providerOverride, 'A sparse Grove-native fragment for the role clique (topology only).'],
    [role.podTemplate, 'The pod template of this role (core/v1 PodTemplateSpec); mutually exclusive with the component podTemplate.'],

    [override.apiVersion, 'The provider API version; must be grove.io/v1alpha1.'],
    [override.target, 'The Grove type the fragment applies to: PodCliqueSet, PodCliqueTemplateSpec or PodCliqueScalingGroupConfig. Resolved and persisted by admission when omitted.'],
    [override.value, 'The fragment, merged into the generated Grove object.'],

    [DgdStatusSchema, 'The observed state, maintained by the control plane.'],
    [status.observedGeneration, 'The metadata.generation this status was computed from.'],
    [status.state, 'A summary: initializing, pending, successful or failed.'],
    [status.conditions, 'Conditions keyed by type: Ready, and others as they apply.'],
    [status.components, 'Replica information per component, keyed by component name.'],
    [replicaStatus.componentKind, 'The kind of the workload: PodClique, PodCliqueScalingGroup, Deployment or LeaderWorkerSet.'],
    [replicaStatus.componentNames, 'The names of the workload objects of the component.'],
    [replicaStatus.runtimeNamespace, 'The Dynamo runtime namespace of the component.'],
    [replicaStatus.replicas, 'Replicas that exist.'],
    [replicaStatus.updatedReplicas, 'Replicas at the current pod template.'],
    [replicaStatus.readyReplicas, 'Replicas whose pods are Ready.'],
    [replicaStatus.availableReplicas, 'Replicas available for at least minReadySeconds.'],
  ]);
}

/** DynamoGraphDeploymentCandidate status (dgdr-reference "v1beta2"; shared/api/dgdr-v1beta2.ts). */
export function describeCandidateFields(registry: DescriptionRegistry): void {
  const status = CandidateStatusSchema.shape;
  describe(registry, [
    [status.parameters, 'The resolved simulation inputs this Candidate was found with, as published.'],
    [status.metrics, 'The simulation results of this Candidate, as published; not recomputed after overrides.'],
    [status.rank, 'Position in the search result, from 1 (best).'],
    [status.conditions, 'Conditions keyed by type; Valid tells whether spec passed strict dry-run validation.'],
  ]);
}

/** LPXGraphDeployment status (upstream-notes/lpx.md §2; shared/api/lpx.ts). */
export function describeLpxFields(registry: DescriptionRegistry): void {
  const status = LpxGraphDeploymentStatusSchema.shape;
  const download = status.modelDownload.unwrap().shape;
  describe(registry, [
    [status.observedGeneration, 'The metadata.generation this status was computed from.'],
    [status.conditions, 'Conditions keyed by type.'],
    [status.components, 'LPX state per component, keyed by component name.'],
    [status.modelDownload, 'The model registry builds the LPX components need.'],
    [download.builds, 'Build IDs resolved against the model registry.'],
    [download.lastCheckedAt, 'When the model registry was last checked (RFC 3339).'],
  ]);
}

/**
 * The descriptions of every field of our CRDs, as a fresh zod registry for `z.toJSONSchema`'s
 * `metadata` option. Pure (builds a new registry each call).
 */
export function crdDescriptions(): DescriptionRegistry {
  const registry = z.registry<FieldMeta>();
  describeCoreFields(registry);
  describeDgdFields(registry);
  describeCandidateFields(registry);
  describeLpxFields(registry);
  return registry;
}
