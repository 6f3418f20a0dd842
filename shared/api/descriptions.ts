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
 * minimum availability", "ProviderOverride", "Status"); ../shared/upstream-notes/dgd.md §2.1-§2.4
 * (field shapes and rules); ../shared/reference/dgdr-reference.txt ("Spec reference", "Status",
 * "Conditions", "v1beta2 hardware SKU", "v1beta2 DGD Overrides", "Replay a recorded trace",
 * "Trace claim lifecycle"); upstream deploy/operator/api/v1beta2/dynamographdeploymentrun_types.go
 * and dynamographdeploymentrequest_types.go (Go doc comments of the Run and request status fields).
 *
 * A schema shared by several kinds or versions (the v1beta2 request spec is the Run's spec too)
 * is described once and carries its descriptions into every CRD version built from it.
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
import { ComponentCheckpointStatusSchema, ComponentReplicaStatusSchema, ComponentSchema, DgdSpecSchema, DgdStatusSchema, KvTransferPolicySchema, ProviderOverrideSchema, RoleSchema } from './dgd.js';
import { DgdV1Alpha1Schema } from './dgd-v1alpha1.js';
import { DgdrSpecSchema, DgdrStatusSchema } from './dgdr.js';
import { CandidateRefSchema, CandidateStatusSchema, DgdrV1Beta2SpecSchema, DgdrV1Beta2StatusSchema, RunStatusSchema, StaticWorkloadSchema, TraceWorkloadSchema } from './dgdr-v1beta2.js';
import { LpxGraphDeploymentStatusSchema } from './lpx.js';
import { LpxComponentConfigSchema, LpxExperimentalSchema, LpxLocalPartitionsSchema } from './lpx-local-partitions.js';

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
  const lpxConfig = LpxComponentConfigSchema.shape;
  const lpxExperimental = LpxExperimentalSchema.shape;
  const lpxLocalPartitions = LpxLocalPartitionsSchema.shape;
  const role = RoleSchema.shape;
  const override = ProviderOverrideSchema.shape;
  const status = DgdStatusSchema.shape;
  const replicaStatus = ComponentReplicaStatusSchema.shape;
  const checkpointStatus = ComponentCheckpointStatusSchema.shape;
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
    [component.lpx, 'LPX settings (buildId, scheduling, experimental); allowed and required only for type lpx. Experimental.'],
    [lpxConfig.experimental, 'Opt-in LPX options whose API shape may change in breaking ways between releases.'],
    [lpxExperimental.localPartitions, 'Selects partitions of a hybrid build that the Cyborg conductor runs on its own GPU. LPU Agents are scheduled only for the remaining partitions, and none when every partition is local. Omission runs every partition on LPUs.'],
    [lpxExperimental.checkpoint, 'A checkpoint override for the Cyborg conductor; not supported here (admission refuses it, as the LPX checkpoint stanza).'],
    [lpxLocalPartitions.mode, 'The partitions that run on the Cyborg GPU: All runs every partition; IDs runs the partitions listed in ids.'],
    [lpxLocalPartitions.ids, 'The compiler partition IDs (0-4294967295) that run on the Cyborg GPU; a selected prop-sync chain is identified by its first partition. Required when mode is IDs and forbidden otherwise.'],
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
    [replicaStatus.scheduledReplicas, 'Replicas whose pods are scheduled.'],
    [status.checkpoints, 'Checkpoint information per component, keyed by component name.'],
    [checkpointStatus.checkpointName, 'The name of the checkpoint the component restores from.'],
    [checkpointStatus.checkpointID, 'Deprecated: the checkpoint identity; use checkpointName.'],
    [checkpointStatus.identityHash, 'Deprecated: the hash of the checkpoint identity; use checkpointName.'],
    [checkpointStatus.ready, 'True once the checkpoint can be restored from.'],
  ]);
}

/**
 * DynamoGraphDeployment v1alpha1 (served through conversion): the legacy `spec` fields
 * (upstream-notes/dgd.md §2.1; shared/api/dgd-v1alpha1.ts).
 */
export function describeDgdV1Alpha1Fields(registry: DescriptionRegistry): void {
  const spec = DgdV1Alpha1Schema.shape.spec.shape;
  const pvc = spec.pvcs.unwrap().element.shape;
  describe(registry, [
    [spec.services, 'The components of the graph, a map from component name to its settings (at most 25); converted to spec.components of v1beta1, sorted by name.'],
    [spec.envs, 'Environment variables added to the main container of every component (core/v1 EnvVar); spec.env in v1beta1.'],
    [spec.pvcs, 'PersistentVolumeClaims the components mount (at most 100). Declares claims; a volume mount names the volume.'],
    [pvc.name, 'The PersistentVolumeClaim name.'],
  ]);
}

/**
 * DynamoGraphDeploymentRequest v1beta1, the fields without an inline `.describe()` in ./dgdr.ts
 * (dgdr-reference "Spec reference", "Overrides", "Generated DGD overrides", "Status",
 * "Additional Types", "Conditions").
 */
export function describeDgdrFields(registry: DescriptionRegistry): void {
  const spec = DgdrSpecSchema.shape;
  const sla = spec.sla.unwrap().shape;
  const features = spec.features.unwrap().shape;
  const overrides = spec.overrides.unwrap().shape;
  const status = DgdrStatusSchema.shape;
  const results = status.profilingResults.unwrap().shape;
  const deployment = status.deploymentInfo.unwrap().shape;
  describe(registry, [
    [spec.workload, 'Expected workload characteristics for SLA-based profiling.'],
    [spec.sla, 'Service-level agreement targets that drive profiling optimization.'],
    [sla.optimizationType, 'Optimization target for SLA profiling: latency or throughput.'],
    [spec.hardware, 'GPU hardware for profiling and deployment.'],
    [spec.modelCache, 'Optional PVC configuration for pre-downloaded model weights. When set, weights are loaded from the PVC instead of downloading from HuggingFace.'],
    [spec.features, 'Optional Dynamo platform features in the generated deployment.'],
    [features.kvRouter, 'Configures KV-cache-aware routing for the generated deployment. When enabled, the generated Frontend gets DYN_ROUTER_MODE=kv.'],
    [features.kvRouter.unwrap().shape.enabled, 'Enables KV-cache-aware routing.'],
    [features.mocker, 'Configures the simulated (mocker) backend for testing without GPUs.'],
    [features.mocker.unwrap().shape.enabled, 'Deploy mocker workers instead of real inference workers.'],
    [spec.overrides, 'Customizes the profiling job and the generated DGD.'],
    [overrides.trustRemoteCode, 'When true, the profiler applies --trust-remote-code to every generated vLLM or SGLang worker. Enable only for model repositories you trust.'],

    [status.phase, 'High-level lifecycle phase of the deployment request: Pending, Profiling, Ready, Deploying, Deployed or Failed.'],
    [status.profilingPhase, 'Current sub-phase of the profiling pipeline: Initializing, SweepingPrefill, SweepingDecode, SelectingConfig, BuildingCurves, GeneratingDGD or Done. Only meaningful while phase is Profiling; cleared when profiling completes or fails.'],
    [status.dgdName, 'Name of the generated or created DynamoGraphDeployment.'],
    [status.profilingJobName, 'Name of the Kubernetes Job running the profiler.'],
    [status.conditions, 'Latest observed conditions, keyed by type: Succeeded (the aggregate), Validation, Profiling, SpecGenerated and DeploymentReady.'],
    [status.profilingResults, 'Output of the profiling process, including the selected deployment configuration.'],
    [results.pareto.unwrap().element.shape.config, 'Full deployment configuration for this Pareto point.'],
    [results.selectedConfig, 'Recommended configuration chosen by the profiler based on the SLA targets. This is the configuration used for deployment when autoApply is true.'],
    [status.deploymentInfo, 'State of the deployed DynamoGraphDeployment. Populated once a DGD has been created (via autoApply or manually).'],
    [deployment.replicas, 'Desired number of replicas.'],
    [deployment.availableReplicas, 'Number of replicas that are available and ready.'],
    [status.observedGeneration, 'Most recent metadata.generation observed by the controller.'],
  ]);
}

/**
 * The v1beta2 request spec, which is also the DynamoGraphDeploymentRun's spec (a frozen copy),
 * and the v1beta2 request status (dgdr-reference "v1beta2 hardware SKU", "v1beta2 DGD
 * Overrides", "Replay a recorded trace"; status fields from upstream's v1beta2 request type).
 */
export function describeDgdrV1Beta2Fields(registry: DescriptionRegistry): void {
  const spec = DgdrV1Beta2SpecSchema.shape;
  const gpu = spec.hardware.unwrap().shape.gpu;
  const gpuFields = gpu.unwrap().shape;
  const trace = TraceWorkloadSchema.shape;
  const claim = trace.source.shape.persistentVolumeClaim;
  const workload = StaticWorkloadSchema.shape;
  const overrides = spec.overrides.unwrap().shape;
  const status = DgdrV1Beta2StatusSchema.shape;
  const runRef = status.activeRunRef.unwrap().shape;
  describe(registry, [
    [spec.model, 'The model whose deployment configurations are evaluated.'],
    [spec.model.shape.name, 'Model to deploy: a HuggingFace ID (for example Qwen/Qwen3-0.6B) or a private model name. Must be non-empty.'],
    [spec.backends, 'Restricts results to these inference backends (vllm, sglang, trtllm), a set; all backends when omitted. Restricting backends does not guarantee a particular topology.'],
    [spec.image, 'The container image of the Run Job (AISimulate); the control plane\'s default AISimulate image when omitted.'],
    [spec.hardware, 'GPU hardware the search is bounded by. Omit it to let admission discover and persist sku, budget and numGpusPerNode; an exactly empty object opts out of all discovery and typed hardware defaults; a nonempty object is partial intent: missing fields are discovered, explicit values kept.'],
    [gpu, 'Accelerator identity and the maximum allocation per Candidate.'],
    [gpuFields.sku, 'An AISimulate system-catalog identifier (for example h200_sxm), passed through unchanged; admission warns when the bundled catalog does not contain it. An unknown SKU must set budget and numGpusPerNode.'],
    [gpuFields.budget, 'GPU budget: the most GPUs one Candidate may use (at least 1).'],
    [gpuFields.numGpusPerNode, 'GPUs per node (at least 1).'],
    [spec.workload, 'The traffic every Candidate is evaluated against: trace or static, mutually exclusive.'],
    [spec.workload.unwrap().shape.trace, 'Replays a recorded request trace instead of synthetic traffic; admission adds no static default when it is set.'],
    [spec.workload.unwrap().shape.static, 'Synthetic traffic. Set it to null in the same update that sets trace to switch a request from static traffic to a trace.'],
    [trace.format, 'The trace format. Only Dynamo (the Dynamo request trace dynamo.request.trace.v1 as JSON Lines, gzip-compressed when the file name ends in .gz). Defaults to Dynamo.'],
    [trace.source, 'Where the trace file is read from.'],
    [claim, 'A PersistentVolumeClaim with a filesystem volume (not volumeMode: Block). Every Run that reads it adds the finalizer nvidia.com/dgdr-run-<run-uid> to the claim; deleting the claim cancels those Runs.'],
    [claim.shape.claimName, 'The PersistentVolumeClaim name, in the request\'s namespace.'],
    [claim.shape.subPath, 'One file relative to the claim root; directories and globs are not expanded. Mounted read-only, only into the AISimulate container, at /var/run/aisimulate/trace/trace.jsonl.gz (trace.jsonl when it does not end in .gz).'],
    [trace.replay, 'How the trace is replayed.'],
    [trace.replay.unwrap().shape.arrivalSpeedupRatio, 'Replays request arrivals this many times as fast (greater than 0; 2.0 is twice as fast). Lowered to the AISimulate input traffic.load.speedup.'],
    [workload.isl, 'Input sequence length in tokens (at least 1).'],
    [workload.osl, 'Output sequence length in tokens (at least 1).'],
    [workload.concurrency, 'Target concurrency, in requests in flight (at least 1). Mutually exclusive with requestRate. When neither is set, the Run searches at the maximum-throughput load (the KV cache filled once).'],
    [workload.requestRate, 'Target request rate, in requests per second (greater than 0). Mutually exclusive with concurrency. When neither is set, the Run searches at the maximum-throughput load (the KV cache filled once).'],
    [spec.aisim, 'AISimulate input settings.'],
    [spec.aisim.unwrap().shape.inputOverrides, 'A JSON Merge Patch applied last over the AISimulate input lowered from the typed fields. It can replace any lowered value; a null deletes the named field or parent object. It adds no volume mount.'],
    [spec.overrides, 'Customizes the Run Job and the Candidate DGDs.'],
    [overrides.profilingJob, 'A partial batch/v1 JobSpec merged into the controller-generated Run Job.'],
    [overrides.dgd, 'One partial nvidia.com/v1beta1 DynamoGraphDeployment (apiVersion and kind required), applied atomically to every selected Candidate with the DGD schema\'s Server-Side Apply merge rules. Experimental.'],
    [spec.recommendation, 'Bounds the Candidates a Run publishes.'],
    [spec.recommendation.unwrap().shape.maxCandidates, 'The most Candidates one Run publishes (at least 1). Defaults to 5. Invalid Candidates count toward it and do not trigger replacement searches.'],

    [status.observedGeneration, 'The most recent request generation accepted by the controller.'],
    [status.activeRunRef, 'The one non-terminal DynamoGraphDeploymentRun of this request.'],
    [status.recentRunRefs, 'Retained terminal DynamoGraphDeploymentRuns, newest first.'],
    [runRef.name, 'The DynamoGraphDeploymentRun name.'],
    [runRef.uid, 'The DynamoGraphDeploymentRun UID.'],
    [status.conditions, 'Conditions keyed by type (Accepted: the current generation has its Run): reconciliation of the request, not the outcomes of its Runs.'],
  ]);
}

/** DynamoGraphDeploymentRun status (upstream deploy/operator/api/v1beta2/dynamographdeploymentrun_types.go; dgdr-reference "v1beta2 DGD Overrides"). */
export function describeRunFields(registry: DescriptionRegistry): void {
  const status = RunStatusSchema.shape;
  const job = status.jobRef.unwrap().shape;
  const progress = status.progress.unwrap().shape;
  describe(registry, [
    [status.observedGeneration, 'The metadata.generation this status was computed from.'],
    [status.phase, 'A concise presentation state: Pending, Running, Succeeded or Failed. Conditions remain authoritative.'],
    [status.jobRef, 'The controller-owned Job of this Run.'],
    [job.name, 'The Job name.'],
    [job.uid, 'The Job UID.'],
    [status.progress, 'Progress counters of this Run.'],
    [progress.candidates, 'Publication of Candidates.'],
    [progress.candidates.unwrap().shape.published, 'How many Candidates have been published.'],
    [status.candidateRefs, 'The published Candidates, in the original search order; invalid Candidates included.'],
    [CandidateRefSchema.shape.name, 'The DynamoGraphDeploymentCandidate name, <run>-<candidateId>.'],
    [CandidateRefSchema.shape.candidateId, 'The Candidate identifier in the search result.'],
    [status.startTime, 'When execution started (RFC 3339).'],
    [status.completionTime, 'When the Run reached a terminal outcome (RFC 3339); present only then.'],
    [status.conditions, 'Conditions keyed by type: Completed (owned by the Run controller) and Published (owned by the publisher).'],
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
  describeDgdV1Alpha1Fields(registry);
  describeDgdrFields(registry);
  describeDgdrV1Beta2Fields(registry);
  describeRunFields(registry);
  describeCandidateFields(registry);
  describeLpxFields(registry);
  return registry;
}
