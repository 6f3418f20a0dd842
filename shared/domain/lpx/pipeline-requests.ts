/**
 * LpuPipelineRequests: which requests an LPX PodCliqueSet needs, and what their receipts (the
 * scheduler's status) say about readiness.
 *
 * Source: ../shared/upstream-notes/lpx.md §3.1 (API, phases), §3.2 (the LPX controller creates
 * one request per workload, model and scaling-group replica ordinal; names; labels and
 * annotations; the PodCliqueSet is the controller owner with blockOwnerDeletion), §3.3
 * (readiness from receipts, messages, diagnostics, failures outrank pending, name order).
 * @module
 */
import {
  ANNOTATION_LPX_COMPILER_SNAPSHOT_DIGEST,
  ANNOTATION_LPX_DEPLOYMENT_NAME,
  ANNOTATION_LPX_DYNAMO_MODEL,
  ANNOTATION_LPX_WORKLOAD_DIGEST,
  GROVE_API_VERSION,
  LABEL_GRAPH_DEPLOYMENT_NAME,
  LABEL_LPX_DEPLOYMENT_UID,
  LABEL_WORKER_HASH,
  LPR_API_VERSION,
  LPR_KIND,
  PODCLIQUESET_KIND,
  type LpuPipelineRequest,
  type PodClique,
  type PodCliqueScalingGroup,
} from '../../api/index.js';
import { labelValue } from '../dgd/pod-template.js';
import type { RenderedObject } from '../dgd/render.js';
import { snapshotAnnotation } from './build-snapshot.js';
import { sortedKeysJson } from './input-revision.js';
import { pipelineRequestName, type LpxIdentity } from './names.js';
import { scalingGroupCliqueName, scalingGroupObjectName, workloadDigest } from './render-pcs.js';
import type { LpxModelDerivation } from './derive.js';
import type { LpxWorkload } from './workloads.js';

/** One desired request, with the keys deadlines and cleanup use. */
export interface DesiredPipelineRequest {
  readonly name: string;
  readonly scalingGroup: string;
  readonly model: string;
  readonly replicaIndex: number;
  readonly object: RenderedObject;
}

/** The controlling PodCliqueSet of the requests: its name and uid (lpx.md §2.3: the PCS owns every LPR). */
export interface OwningPodCliqueSet {
  readonly name: string;
  readonly uid: string;
}

/**
 * desiredPipelineRequests: for each workload, each PCSG replica ordinal in [0, capacity) and each
 * model, one request, in workload / ordinal / model order (upstream's publication order).
 * Spec: `executionBackend: nodeLocal`, `materializationTarget{podCliqueSetReplicaIndex: 0,
 * podCliqueScalingGroupRef{name, replicaIndex}}`, `nodeLocal{agentPodCliqueRef{name}, model}`,
 * `repairPolicy.mode: samePlacement`. Annotation `scheduling.lpu.nvidia.com/compiler-snapshot-digest`:
 * the snapshot content id of the model's build (by owning component name), when known. Once the
 * model's build is decoded (`model.derived`), the build-derived fields too (see
 * {@link buildDerivedRequestSpec}), and a model whose partitions all run on the Cyborg GPU gets
 * no request; before that, none of them (kept exactly as before the decoder).
 * In: identity, DGD name, workloads, capacity per scaling group, the owning PCS, the snapshot
 * digests by component name. Pure.
 */
export function desiredPipelineRequests(
  id: LpxIdentity,
  dgdName: string,
  workloads: readonly LpxWorkload[],
  capacity: ReadonlyMap<string, number>,
  pcs: OwningPodCliqueSet,
  snapshotDigests: ReadonlyMap<string, string> = new Map(),
): DesiredPipelineRequest[] {
  const out: DesiredPipelineRequest[] = [];
  for (const workload of workloads) {
    const count = capacity.get(workload.scalingGroup) ?? 0;
    const digest = workloadDigest(workload);
    for (let replicaIndex = 0; replicaIndex < count; replicaIndex += 1) {
      for (const model of workload.models) {
        // Every partition of the model runs on the Cyborg GPU: nothing to schedule (lpx.md §1.1 localPartitions).
        if (model.derived?.agentReplicas === 0) continue;
        const name = pipelineRequestName(id, { workload: workload.scalingGroup, workloadCount: workloads.length, model: model.model, replicaIndex });
        const object: RenderedObject = {
          apiVersion: LPR_API_VERSION,
          kind: LPR_KIND,
          metadata: {
            name,
            namespace: id.namespace,
            labels: { [LABEL_GRAPH_DEPLOYMENT_NAME]: labelValue(dgdName), [LABEL_LPX_DEPLOYMENT_UID]: id.uid },
            annotations: { [ANNOTATION_LPX_DEPLOYMENT_NAME]: id.name, [ANNOTATION_LPX_DYNAMO_MODEL]: model.model, [ANNOTATION_LPX_WORKLOAD_DIGEST]: digest, ...snapshotAnnotation(snapshotDigests, model.component.name) },
            ownerReferences: [{ apiVersion: GROVE_API_VERSION, kind: PODCLIQUESET_KIND, name: pcs.name, uid: pcs.uid, controller: true, blockOwnerDeletion: true }],
          },
          spec: {
            executionBackend: 'nodeLocal',
            materializationTarget: { podCliqueSetReplicaIndex: 0, podCliqueScalingGroupRef: { name: scalingGroupObjectName(pcs.name, workload), replicaIndex } },
            nodeLocal: { agentPodCliqueRef: { name: scalingGroupCliqueName(pcs.name, workload.scalingGroup, replicaIndex, model.agentClique) }, model: model.model },
            repairPolicy: { mode: 'samePlacement' },
            ...(model.derived === undefined ? {} : buildDerivedRequestSpec(model.derived, model.model, scalingGroupCliqueName(pcs.name, workload.scalingGroup, replicaIndex, model.agentClique), cyborgClique(pcs.name, workload, model.derived, replicaIndex))),
          },
        };
        out.push({ name, scalingGroup: workload.scalingGroup, model: model.model, replicaIndex, object });
      }
    }
  }
  return out;
}

/**
 * buildDerivedRequestSpec (upstream `ModelProjection.RequestSpec`): the request fields the
 * decoded build derives: `allocationMetadata`, `targetFamily`, `workloadMode`, `partitions`
 * (`partition-%03d`, ordinal, compiler partition id, XT shape or HX extent), `propSyncConnectors`,
 * `nodeLocal` with `partitionMappings` (model partition i -> `partition-%03d` of i), and, for a
 * hybrid pipeline, `cyborgPodCliqueRef` (the replica's conductor clique).
 * In: the model's derivation, its name, its Agent clique and the Cyborg clique (or undefined).
 * Source: lpx.md §3.1. Pure.
 */
export function buildDerivedRequestSpec(derived: LpxModelDerivation, model: string, agentClique: string, cyborg: string | undefined): Record<string, unknown> {
  return {
    allocationMetadata: structuredClone(derived.allocationMetadata),
    targetFamily: derived.targetFamily,
    workloadMode: derived.workloadMode,
    partitions: derived.partitions.map((p) => ({ ...p, ...(p.extent === undefined ? {} : { extent: [...p.extent] }) })),
    propSyncConnectors: structuredClone(derived.propSyncConnectors),
    nodeLocal: { agentPodCliqueRef: { name: agentClique }, model, partitionMappings: derived.partitions.map((p) => ({ modelPartitionId: p.ordinal, partitionId: p.id })) },
    ...(cyborg === undefined ? {} : { cyborgPodCliqueRef: { name: cyborg } }),
  };
}

/** The Cyborg clique of a hybrid engine replica: its conductor clique (upstream `PlanNodeLocalMaterialization`: hybrid conductors are Cyborg), else undefined. Pure. */
function cyborgClique(pcsName: string, workload: LpxWorkload, derived: LpxModelDerivation, replicaIndex: number): string | undefined {
  if (derived.pipeline !== 'hybrid' || workload.conductorClique === undefined) return undefined;
  return scalingGroupCliqueName(pcsName, workload.scalingGroup, replicaIndex, workload.conductorClique);
}

/** True when the request is controlled by the given PodCliqueSet (never adopt: lpx.md §2.3). Pure. */
export function isRequestControlledBy(request: Pick<LpuPipelineRequest, 'metadata'>, pcsUid: string): boolean {
  return (request.metadata.ownerReferences ?? []).some((ref) => ref['controller'] === true && ref['kind'] === PODCLIQUESET_KIND && ref['uid'] === pcsUid);
}

/** The scaling-group replica a request targets (`spec.materializationTarget.podCliqueScalingGroupRef`), or undefined. Pure. */
export function requestTarget(request: Pick<LpuPipelineRequest, 'spec'>): { readonly scalingGroupObject: string; readonly replicaIndex: number } | undefined {
  const ref = ((request.spec['materializationTarget'] as { podCliqueScalingGroupRef?: { name?: unknown; replicaIndex?: unknown } } | undefined)?.podCliqueScalingGroupRef);
  if (typeof ref?.name !== 'string' || typeof ref.replicaIndex !== 'number') return undefined;
  return { scalingGroupObject: ref.name, replicaIndex: ref.replicaIndex };
}

/** Receipt messages per phase (lpx.md §3.3). */
const PHASE_MESSAGES: Readonly<Record<string, string>> = {
  pending: 'LPX scheduler is waiting to plan the current request',
  noFit: 'LPX scheduler found no placement for the current request',
  unsupported: 'LPX scheduler cannot support the current request',
  planned: 'LPX scheduler committed a placement plan for the current request',
  reserving: 'LPX scheduler is reserving the planned LPU allocation',
  binding: 'LPX scheduler is binding the planned workload Pods',
  degraded: 'LPX scheduler is repairing or releasing a degraded placement',
  releasing: 'LPX scheduler is releasing the current plan',
  released: 'LPX scheduler released the current plan',
};
export const MESSAGE_LPR_PUBLISHED = 'LPUPipelineRequest is published';

export type ReceiptVerdict =
  | { readonly kind: 'bound' }
  | { readonly kind: 'pending' | 'failed'; readonly message: string };

/**
 * receiptVerdict: one request's receipt. Only a receipt with `status.observedGeneration ==
 * metadata.generation` counts; `bound` is ready; `unsupported` and unknown phases fail ("LPX
 * scheduler reported unknown phase %q"); other phases are pending with their message; no or a
 * stale receipt is pending "LPUPipelineRequest is published". Diagnostics are appended as
 * ". LPX diagnostics: code [subject]: detail; ...". Source: lpx.md §3.3. Pure.
 */
export function receiptVerdict(request: Pick<LpuPipelineRequest, 'metadata' | 'status'>): ReceiptVerdict {
  const status = request.status ?? undefined;
  if (status === undefined || status === null || status.observedGeneration === undefined || status.observedGeneration !== request.metadata.generation) {
    return { kind: 'pending', message: MESSAGE_LPR_PUBLISHED };
  }
  const phase = status.phase ?? '';
  if (phase === 'bound') return { kind: 'bound' };
  const diagnostics = (status.diagnostics ?? []).map((d) => `${d.code ?? ''} [${d.subject ?? ''}]: ${d.detail ?? ''}`);
  const suffix = diagnostics.length === 0 ? '' : `. LPX diagnostics: ${diagnostics.join('; ')}`;
  const known = PHASE_MESSAGES[phase];
  if (known === undefined) return { kind: 'failed', message: `LPX scheduler reported unknown phase ${JSON.stringify(phase)}${suffix}` };
  return { kind: phase === 'unsupported' ? 'failed' : 'pending', message: `${known}${suffix}` };
}

/**
 * evaluateReceipts: all desired requests bound means the scheduler part is ready; otherwise the
 * first failure in name order, else the first pending request in name order, names the reason.
 * A desired request not yet observed is pending "LPUPipelineRequest is published".
 * In: desired names; observed requests by name. Pure.
 */
export function evaluateReceipts(desiredNames: readonly string[], observed: ReadonlyMap<string, Pick<LpuPipelineRequest, 'metadata' | 'status'>>): ReceiptVerdict {
  const verdicts = [...desiredNames].sort().map((name) => {
    const request = observed.get(name);
    return request === undefined ? ({ kind: 'pending', message: MESSAGE_LPR_PUBLISHED } as const) : receiptVerdict(request);
  });
  return verdicts.find((v) => v.kind === 'failed') ?? verdicts.find((v) => v.kind === 'pending') ?? { kind: 'bound' };
}

/**
 * isPipelineRequestMatching (upstream `pipelineRequestMatches`): an observed request still
 * carries the desired immutable intent: every desired annotation with its value (the observed
 * one may have more) and a spec equal to the desired one. A mismatch (a changed workload digest
 * or compiler-snapshot digest, a changed clique) is not updated in place.
 * Source: lpx.md §3.2 "Matching"; upstream `internal/controller/lpx/pipeline_request.go`. Pure.
 */
export function isPipelineRequestMatching(observed: Pick<LpuPipelineRequest, 'metadata' | 'spec'>, desired: RenderedObject): boolean {
  const desiredAnnotations = (desired.metadata['annotations'] ?? {}) as Record<string, string>;
  const observedAnnotations = observed.metadata.annotations ?? {};
  if (Object.entries(desiredAnnotations).some(([key, value]) => observedAnnotations[key] !== value)) return false;
  return sortedKeysJson(observed.spec) === sortedKeysJson(desired['spec']);
}

/** The clique templates and scaling groups of a rendered or observed LPX PodCliqueSet spec, as {@link isReplicaAtDesiredRevision} reads them. */
interface CliqueTemplates {
  readonly template?: { readonly cliques?: readonly { readonly name?: string; readonly labels?: Record<string, string>; readonly annotations?: Record<string, string> }[] };
}

/** The clique metadata that names a revision: the worker hash label, the workload and compiler-snapshot digest annotations. */
const REVISION_LABELS = [LABEL_WORKER_HASH] as const;
const REVISION_ANNOTATIONS = [ANNOTATION_LPX_WORKLOAD_DIGEST, ANNOTATION_LPX_COMPILER_SNAPSHOT_DIGEST] as const;

/**
 * isReplicaAtDesiredRevision (upstream `replicaCliquesMatch`): every role clique of one
 * scaling-group replica exists and carries its desired template's revision: the worker hash label
 * and the workload digest annotation (upstream), and the compiler-snapshot digest annotation (ours
 * also marks a changed build there, where upstream folds it into the workload digest). A replica
 * beyond the group's `spec.replicas` is not.
 * In: the desired PCS spec, the scaling group, the observed PodCliques by name, the PCS name and
 * the replica index. Source: upstream `internal/controller/lpx/pipeline_request.go`. Pure.
 */
export function isReplicaAtDesiredRevision(
  pcsSpec: unknown,
  group: Pick<PodCliqueScalingGroup, 'metadata' | 'spec'>,
  podCliques: ReadonlyMap<string, Pick<PodClique, 'metadata'>>,
  replicaIndex: number,
): boolean {
  if (replicaIndex >= group.spec.replicas) return false;
  const templates = ((pcsSpec ?? {}) as CliqueTemplates).template?.cliques ?? [];
  return group.spec.cliqueNames.every((cliqueName) => {
    const template = templates.find((t) => t.name === cliqueName);
    const clique = podCliques.get(`${group.metadata.name ?? ''}-${replicaIndex}-${cliqueName}`);
    if (template === undefined || clique === undefined) return false;
    return REVISION_LABELS.every((key) => clique.metadata.labels?.[key] === template.labels?.[key])
      && REVISION_ANNOTATIONS.every((key) => clique.metadata.annotations?.[key] === template.annotations?.[key]);
  });
}

/** The scheduler still commits a plan for the request (`status.committed`): its retirement waits for the release (upstream `pipelineRequestCommitted`). Pure. */
export function isRequestCommitted(request: Pick<LpuPipelineRequest, 'status'>): boolean {
  return request.status?.committed !== undefined && request.status.committed !== null;
}

/** One engine's mismatched requests: what to delete now, or why to wait. */
export type EngineHandoff =
  | { readonly kind: 'waitForGrove' }
  | { readonly kind: 'waitForRelease' }
  | { readonly kind: 'retire'; readonly requests: readonly Pick<LpuPipelineRequest, 'metadata'>[] };

/**
 * decideEngineHandoff (upstream `reconcilePipelineRequests`, design D: "hands each complete Grove
 * engine to LPX after its old requests finalize"): for one scaling-group replica whose observed
 * requests no longer match their desired intent:
 * - while Grove has not rolled that replica's cliques to the desired revision, wait;
 * - while any of its old requests is still committed by the scheduler (`status.committed`), wait
 *   for the release;
 * - otherwise retire (delete, with uid and resourceVersion preconditions) the old requests that
 *   are not already terminating; the missing ones are then published again.
 * Source: lpx.md §3.2 "An immutable mismatch waits for the Grove engine to roll (D)", "Ordinary
 * retirement waits for status.committed to clear (D)"; upstream
 * `internal/controller/lpx/pipeline_request.go`. Pure.
 */
export function decideEngineHandoff(isAtDesiredRevision: boolean, mismatched: readonly Pick<LpuPipelineRequest, 'metadata' | 'status'>[]): EngineHandoff {
  if (!isAtDesiredRevision) return { kind: 'waitForGrove' };
  if (mismatched.some(isRequestCommitted)) return { kind: 'waitForRelease' };
  return { kind: 'retire', requests: mismatched.filter((r) => r.metadata.deletionTimestamp === undefined) };
}
