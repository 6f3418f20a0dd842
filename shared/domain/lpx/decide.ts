/**
 * The LPXGraphDeployment reconcile decision: given the LPXGD, its owning DGD, its LPX
 * PodCliqueSet, the scaling groups and the pipeline requests observed now, what to write.
 *
 * Source: ../shared/upstream-notes/lpx.md §5.3 (status flow per reconcile, design D), §2.3
 * (ownership, foreign objects), §3.2 (publication, matching, deletion), §6.2 (capacity, layout
 * changes and the known follow-up), §3.4 (publication blocked after a deadline failure);
 * ../shared/reference/dgd-reference.txt ("Grove rejects replica changes throughout an active
 * Coherent rollout"; LPX budget edits keep the PCS identity and existing requests);
 * ../shared/reference/lpx-integration-review.txt, "Known follow-ups" (external engine count kept
 * across PodCliqueSet replacement: beyond upstream, see {@link seedFor}); the runtime
 * ConfigMaps of decoded builds (runtime-configmaps.ts; §5.3 steps 12 and 19).
 * @module
 */
import {
  CONDITION_READY,
  CONDITION_SCALING_DEFERRED,
  DGD_KIND,
  LPX_REASON_FAILED,
  LPX_REASON_PENDING,
  MESSAGE_GROVE_UPDATE_PENDING,
  MESSAGE_COMPONENT_NOT_OBSERVED,
  MESSAGE_LPX_CAPACITY_CHANGES,
  MESSAGE_LPX_DEADLINE_EXCEEDED,
  MESSAGE_LPX_DESIRED_BUILD,
  MESSAGE_LPX_PUBLISHED_REQUESTS,
  MESSAGE_LPX_REMOVED_REQUESTS,
  MESSAGE_SCALING_ALLOWED,
  REASON_COMPONENT_NOT_OBSERVED,
  REASON_GROVE_UPDATE_PENDING,
  REASON_SCALING_ALLOWED,
  LpxConfigSchema,
  type Condition,
  type Dgd,
  type LpuPipelineRequest,
  type LpxComponentStatus,
  type LpxGraphDeployment,
  type PodClique,
  type PodCliqueScalingGroup,
} from '../../api/index.js';
import type { RenderConfig, RenderedObject } from '../dgd/render.js';
import type { LpxBuild } from './build.js';
import { buildSnapshotAcquisitionError, type BuildSnapshotReading } from './build-snapshot.js';
import { decideModelDownloads, lpxRemoteBuildUrls, planModelDownloads, type DownloadCheck, type ModelDownloadStatus } from './model-download.js';
import { findExpiredRequests, isSchedulingFailureCurrent } from './deadline.js';
import { decideLpxHandoff } from './handoff.js';
import { resolveBuildUrl, type BuildRef } from './model-registry.js';
import { validateLpxMaterialization } from './materialization.js';
import { lpxPodCliqueSetName, type LpxIdentity } from './names.js';
import { decideEngineHandoff, desiredPipelineRequests, evaluateReceipts, isPipelineRequestMatching, isReplicaAtDesiredRevision, isRequestCommitted, isRequestControlledBy } from './pipeline-requests.js';
import { evaluateRoleReadiness, evaluateWorkloadReadiness, lpxReadyCondition, type LpxVerdict } from './readiness.js';
import { lpxLayoutKey, observedSeeds, renderLpxPodCliqueSet, renderLpxServingServices, scalingGroupObjectName } from './render-pcs.js';
import { decideRuntimeConfigMapCreates, obsoleteRuntimeConfigMaps, renderLpxRuntimeConfigMaps, renderLpxRuntimeConfigs, runtimeConfigVolumeIssue, type ObservedConfigMap } from './runtime-configmaps.js';
import { deriveLpxWorkloads, resolveLpxWorkloads, type LpxComponentBuild, type LpxWorkload } from './workloads.js';

/** An observed PodCliqueSet: the fields the decision reads. */
export interface ObservedPodCliqueSet {
  readonly metadata: { readonly name?: string; readonly uid?: string; readonly generation?: number; readonly deletionTimestamp?: string; readonly ownerReferences?: readonly Readonly<Record<string, unknown>>[] };
  readonly spec: unknown;
  readonly status?: { readonly observedGeneration?: number; readonly updateProgress?: { readonly updateEndedAt?: string } | undefined } | undefined;
}

export interface LpxObserved {
  readonly lpxgd: LpxGraphDeployment;
  /** The owning DGD parsed, or undefined when it is gone or cannot be parsed. */
  readonly dgd: Dgd | undefined;
  readonly podCliqueSet: ObservedPodCliqueSet | undefined;
  /** Scaling groups by object name (`<pcs>-0-<group>`). */
  readonly scalingGroups: ReadonlyMap<string, PodCliqueScalingGroup>;
  /** The LPX PodCliqueSet's PodCliques by object name (`<pcs>-0-<group>-<i>-<clique>`). */
  readonly podCliques: ReadonlyMap<string, PodClique>;
  /** Every LpuPipelineRequest in the namespace (foreign ones included, to refuse name collisions). */
  readonly requests: readonly LpuPipelineRequest[];
  /** The snapshot of each build the DGD's LPX components name, by build URL (see {@link lpxSnapshotBuildUrls}). */
  readonly buildSnapshots: ReadonlyMap<string, BuildSnapshotReading>;
  /** This reconcile's Model Express checks of the `gs://` builds, by build URL (see `planModelDownloads`). */
  readonly modelDownloadChecks: ReadonlyMap<string, DownloadCheck>;
  /**
   * ConfigMaps by name: those labelled `lpx.nvidia.com/deployment-uid=<LPXGD uid>` and any at a
   * name the decision wants (see {@link lpxRuntimeConfigMapNames}); absent: none.
   */
  readonly configMaps?: ReadonlyMap<string, ObservedConfigMap>;
}

/**
 * lpxSnapshotBuildUrls: the build URLs whose snapshots the decision reads: each LPX component's
 * `lpx.buildId` resolved against the registry (a `gs://` one is read only once downloaded),
 * deduplicated, sorted. Unresolvable ids are left to the decision's "resolve LPX build URL"
 * failure.
 * In: dgd.spec.components, the registry. Out: URLs. Source: lpx.md §4, §5.1 (collection). Pure.
 */
export function lpxSnapshotBuildUrls(dgd: Pick<Dgd, 'spec'>, registry: BuildRef | undefined): string[] {
  const urls = new Set<string>();
  for (const component of dgd.spec.components.filter((c) => c.type === 'lpx')) {
    const url = resolveBuildUrl(registry, LpxConfigSchema.safeParse(component.lpx ?? {}).data?.buildId ?? '');
    if (url.ok) urls.add(url.url);
  }
  return [...urls].sort();
}

/**
 * decodedLpxBuilds: the decoded build (`build` of an acquired snapshot) of each LPX component
 * whose snapshot carries one, by component name. In: dgd.spec.components, the registry, the
 * snapshots. Pure.
 */
export function decodedLpxBuilds(dgd: Pick<Dgd, 'spec'>, registry: BuildRef | undefined, snapshots: ReadonlyMap<string, BuildSnapshotReading>): Map<string, LpxBuild> {
  const builds = new Map<string, LpxBuild>();
  for (const component of dgd.spec.components.filter((c) => c.type === 'lpx')) {
    const url = resolveBuildUrl(registry, LpxConfigSchema.safeParse(component.lpx ?? {}).data?.buildId ?? '');
    const snapshot = url.ok ? snapshots.get(url.url) : undefined;
    if (snapshot?.ok === true && snapshot.build !== undefined) builds.set(component.name, snapshot.build);
  }
  return builds;
}

/**
 * lpxRuntimeConfigMapNames: the names of the runtime ConfigMaps the decision renders for this
 * LPXGD, DGD and snapshots (the shell reads each, to refuse a foreign one at the name). Pure.
 */
export function lpxRuntimeConfigMapNames(lpxgd: Pick<LpxGraphDeployment, 'metadata'>, dgd: Dgd, registry: BuildRef | undefined, snapshots: ReadonlyMap<string, BuildSnapshotReading>): string[] {
  const pcsName = lpxPodCliqueSetName({ namespace: lpxgd.metadata.namespace ?? 'default', name: lpxgd.metadata.name ?? '', uid: lpxgd.metadata.uid ?? '' });
  const rendered = renderLpxRuntimeConfigs(pcsName, resolveLpxWorkloads(dgd), decodedLpxBuilds(dgd, registry, snapshots));
  return rendered.ok ? [...rendered.configs.values()].flatMap((c) => c.configMaps.map((m) => m.name)).sort() : [];
}

export interface LpxConfig {
  readonly registry: BuildRef | undefined;
  readonly render: Pick<RenderConfig, 'terminationDelay'>;
}

export interface LpxDesired {
  readonly applyPodCliqueSet: RenderedObject | undefined;
  /** The serving Services (server-side apply), with the PodCliqueSet. */
  readonly applyServices: readonly RenderedObject[];
  /** A whole-PCS replacement: foreground delete with a uid precondition (written after the status). */
  readonly deletePodCliqueSet: { readonly name: string; readonly uid: string } | undefined;
  /** Scaling-group `spec.replicas` writes (resourceVersion precondition). */
  readonly scale: readonly { readonly name: string; readonly replicas: number; readonly resourceVersion: string | undefined }[];
  readonly createRequests: readonly RenderedObject[];
  readonly deleteRequests: readonly { readonly name: string; readonly uid: string | undefined; readonly resourceVersion: string | undefined }[];
  /** Runtime ConfigMaps to create (immutable: never updated), before the PodCliqueSet that mounts them. */
  readonly createConfigMaps: readonly RenderedObject[];
  /** Obsolete owned runtime ConfigMaps, deleted with a resourceVersion precondition (only when Ready). */
  readonly deleteConfigMaps: readonly { readonly name: string; readonly resourceVersion: string | undefined }[];
  readonly status: { readonly observedGeneration: number; readonly conditions: Condition[]; readonly components: Record<string, LpxComponentStatus>; readonly modelDownload?: ModelDownloadStatus };
}

function pending(message: string): LpxVerdict {
  return { kind: 'pending', reason: LPX_REASON_PENDING, message };
}
function failed(message: string): LpxVerdict {
  return { kind: 'failed', reason: LPX_REASON_FAILED, message };
}

/** True while Grove runs a Coherent update of the PCS (`updateProgress` without `updateEndedAt`), or has not yet acknowledged its generation under Coherent (dgd-reference). Pure. */
export function isCoherentUpdateBlocking(pcs: ObservedPodCliqueSet | undefined): boolean {
  const strategy = (pcs?.spec as { updateStrategy?: { type?: string } } | undefined)?.updateStrategy?.type;
  if (pcs === undefined || strategy !== 'Coherent') return false;
  const progress = pcs.status?.updateProgress;
  if (progress !== undefined && (progress.updateEndedAt ?? '') === '') return true;
  return pcs.status?.observedGeneration !== pcs.metadata.generation;
}

/**
 * isLpxInputCurrent: the DGD is not being deleted, selects LPX, and hashes (with the LPXGD's
 * restart token) to the LPXGD's `spec.inputRevision`; otherwise the LPXGD waits "for the
 * matching DynamoGraphDeployment" and nothing is read or written for it (lpx.md §5.3 step 3;
 * §6.1 "Before any write, it re-validates that the DGD still matches spec.inputRevision and the
 * restart token"). Pure.
 */
export function isLpxInputCurrent(dgd: Dgd, lpxgd: Pick<LpxGraphDeployment, 'metadata' | 'spec'>): boolean {
  if (dgd.metadata.deletionTimestamp !== undefined || !dgd.spec.components.some((c) => c.type === 'lpx')) return false;
  const handoff = decideLpxHandoff(dgd, { ownerReferences: lpxgd.metadata.ownerReferences ?? [], annotations: lpxgd.metadata.annotations ?? {} });
  return handoff.ok && handoff.inputRevision === lpxgd.spec.inputRevision;
}

/**
 * publicationVerdict: what the request writes of this pass leave Ready waiting for, in upstream's
 * step order (lpx.md §5.3): 15. removed requests deleted, "Waiting to observe LPX capacity
 * changes"; an engine replica whose requests no longer match their intent, "Waiting for Grove
 * replicas and their LPX requests to reach the desired build" (upstream
 * `reconcilePipelineRequests`, design D); 18. a desired name still held by a terminating request ("pending cleanup", §3.2:
 * its name must disappear before it is reused), "Waiting for removed LPX requests to finish
 * deletion"; then requests created, "Waiting for published LPX requests to appear in the cache"
 * (§3.2 Publication). Upstream returns at the first of these, so it outranks the readiness
 * verdict's pending message (never a failure). Ready when none applies. Pure.
 */
export function publicationVerdict(hasDeleted: boolean, isHandingOff: boolean, isNameTerminating: boolean, hasCreated: boolean): LpxVerdict {
  if (hasDeleted) return pending(MESSAGE_LPX_CAPACITY_CHANGES);
  if (isHandingOff) return pending(MESSAGE_LPX_DESIRED_BUILD);
  if (isNameTerminating) return pending(MESSAGE_LPX_REMOVED_REQUESTS);
  if (hasCreated) return pending(MESSAGE_LPX_PUBLISHED_REQUESTS);
  return { kind: 'ready' };
}

/**
 * componentsNotObserved: the component statuses of a pass that stopped before readiness, each
 * with its `Ready` condition `Unknown`, reason `NotObserved`, "Component readiness has not been
 * observed" (the transition time kept while it stays Unknown). Source: lpx.md §2.2
 * "components": "It is reset at the start of each reconcile. If not observed in that pass, it is
 * reported as Unknown/NotObserved". Pure.
 */
export function componentsNotObserved(components: Readonly<Record<string, LpxComponentStatus>>, generation: number, now: Date): Record<string, LpxComponentStatus> {
  const out: Record<string, LpxComponentStatus> = {};
  for (const [name, status] of Object.entries(components)) {
    const previous = (status.conditions ?? []).find((c) => c.type === CONDITION_READY);
    out[name] = {
      ...status,
      conditions: [{
        type: CONDITION_READY,
        status: 'Unknown',
        reason: REASON_COMPONENT_NOT_OBSERVED,
        message: MESSAGE_COMPONENT_NOT_OBSERVED,
        lastTransitionTime: previous?.status === 'Unknown' ? previous.lastTransitionTime : now.toISOString(),
        observedGeneration: generation,
      }],
    };
  }
  return out;
}

/**
 * seedFor (beyond upstream): the template `replicas` of a scaling group. An existing PCS keeps
 * its observed seed (the template is immutable in practice). A new PCS seeds an explicit-replica
 * workload with its minAvailable (the controller then scales it), and an omitted-replica workload
 * with the retained external count, at least minAvailable. Upstream seeds from minAvailable and
 * loses the external count on replacement ("falls back to one", lpx-integration-review, Known
 * follow-ups); retaining it fixes that follow-up. Pure.
 */
export function seedFor(workload: LpxWorkload, observedSeed: number | undefined, retained: number | undefined): number {
  if (observedSeed !== undefined) return observedSeed;
  if (workload.explicitReplicas === undefined && retained !== undefined) return Math.max(retained, workload.minAvailable);
  return workload.minAvailable;
}

function controllerOwner(lpxgd: LpxGraphDeployment): Readonly<Record<string, unknown>> | undefined {
  return (lpxgd.metadata.ownerReferences ?? []).find((ref) => ref['controller'] === true);
}

function conditionOf(lpxgd: LpxGraphDeployment, type: string): Condition | undefined {
  return (lpxgd.status?.conditions ?? []).find((c) => c.type === type);
}

/**
 * decideLpxGraphDeployment. Steps (lpx.md §5.3, in order), each stopping with `Ready=False` and
 * its message where upstream does:
 * 1. the controller owner must be a DynamoGraphDeployment ("LPXGraphDeployment requires a
 *    DynamoGraphDeployment controller owner") with the same uid;
 * 2. the DGD must exist, not be deleting, select LPX and hash to `spec.inputRevision`, else
 *    Pending "Waiting for the matching DynamoGraphDeployment";
 * 3. every build URL must resolve (Failed "resolve LPX build URL %q: <error>"); every `gs://`
 *    build must be downloaded through Model Express (see `decideModelDownloads`: Pending "Waiting
 *    for model downloads to complete: ...", Failed "ensure model %q is downloaded: ..."; without
 *    a Model Express client, "Model Express client is required for GCS model downloads");
 *    `file://` builds need no download; every build's snapshot must have
 *    been acquired (Failed "acquiring immutable LPX build snapshot for model %q build %q: <error>",
 *    upstream `ErrBuildSnapshotAcquisition`), its content id stamped on the component's Agents
 *    and requests as the compiler-snapshot digest; a decoded build derives the Agent counts,
 *    local partitions, workload mode and request fields (`deriveLpxWorkloads`; Failed with its
 *    error, e.g. an explicit agent count other than the compiled one); then the workloads must
 *    materialize (`validateLpxMaterialization`: engine replicas 0..2496, DNS-1123 pod
 *    hostnames, model annotations; Failed naming the field);
 * 4. the PCS: foreign -> Failed "PodCliqueSet %q is not controlled by this LPXGraphDeployment";
 *    deleting -> Pending "Waiting for PodCliqueSet garbage collection"; a changed layout ->
 *    foreground delete, Pending "Waiting for the previous PodCliqueSet and its requests to be
 *    deleted"; otherwise apply it (Pending "Waiting for the PodCliqueSet cache observation"
 *    until it exists);
 * 5. capacity: explicit replicas are written to each scaling group (never while a Coherent
 *    update blocks, `ScalingDeferred=True`; never up while a deadline failure is current);
 *    omitted replicas follow the live scaling group and are never written;
 * 6. requests: missing ones are created for the published capacity (not while a deadline
 *    failure is current), removed ordinals are deleted with preconditions, a foreign request at
 *    a desired name is never touched;
 * 7. readiness: every workload ready, every desired request bound, no deferred scaling;
 * 8. runtime ConfigMaps (runtime-configmaps.ts, only for components whose snapshot carries a
 *    decoded build): rendered with the PCS (an oversized one, or an HX template binding `config`
 *    itself, Failed with upstream's message); missing ones created with the PCS, never updated;
 *    one at a desired name this LPXGD does not control: Failed "ConfigMap %q is not controlled
 *    by this LPXGraphDeployment"; obsolete owned ones deleted only when the verdict is Ready.
 * Status: observedGeneration, `Ready`, `ScalingDeferred` once needed, per component status
 * with `retainedReplicas` for omitted-replica workloads. Pure.
 */
export function decideLpxGraphDeployment(observed: LpxObserved, config: LpxConfig, now: Date): LpxDesired {
  const { lpxgd } = observed;
  const generation = lpxgd.metadata.generation ?? 0;
  const previousComponents = lpxgd.status?.components ?? {};
  // Kept as observed until the download step decides it (upstream persists the whole status).
  let modelDownload: ModelDownloadStatus | undefined = lpxgd.status?.modelDownload;
  const result = (verdict: LpxVerdict, extra: Partial<Omit<LpxDesired, 'status'>> = {}, observedComponents: Record<string, LpxComponentStatus> | undefined = undefined, isDeferred = false): LpxDesired => {
    const components = observedComponents ?? componentsNotObserved(previousComponents, generation, now);
    const conditions = [lpxReadyCondition(verdict, generation, conditionOf(lpxgd, CONDITION_READY), now)];
    const previousDeferred = conditionOf(lpxgd, CONDITION_SCALING_DEFERRED);
    if (isDeferred || previousDeferred !== undefined) {
      const status = isDeferred ? 'True' : 'False';
      conditions.push({
        type: CONDITION_SCALING_DEFERRED,
        status,
        reason: isDeferred ? REASON_GROVE_UPDATE_PENDING : REASON_SCALING_ALLOWED,
        message: isDeferred ? MESSAGE_GROVE_UPDATE_PENDING : MESSAGE_SCALING_ALLOWED,
        lastTransitionTime: previousDeferred?.status === status ? previousDeferred.lastTransitionTime : now.toISOString(),
        observedGeneration: generation,
      });
    }
    return {
      applyPodCliqueSet: undefined,
      applyServices: [],
      deletePodCliqueSet: undefined,
      scale: [],
      createRequests: [],
      deleteRequests: [],
      createConfigMaps: [],
      deleteConfigMaps: [],
      ...extra,
      status: { observedGeneration: generation, conditions, components, ...(modelDownload === undefined ? {} : { modelDownload }) },
    };
  };

  const owner = controllerOwner(lpxgd);
  if (owner?.['kind'] !== DGD_KIND) return result(failed('LPXGraphDeployment requires a DynamoGraphDeployment controller owner'));
  const { dgd } = observed;
  if (dgd !== undefined && dgd.metadata.uid !== owner['uid']) return result(failed(`LPXGraphDeployment controller owner uid ${JSON.stringify(owner['uid'])} does not match DynamoGraphDeployment ${JSON.stringify(dgd.metadata.name)}`));
  const waitingForDgd = pending('Waiting for the matching DynamoGraphDeployment');
  if (dgd === undefined || !isLpxInputCurrent(dgd, lpxgd)) return result(waitingForDgd);

  const builds: { component: string; buildId: string; url: string }[] = [];
  for (const component of dgd.spec.components.filter((c) => c.type === 'lpx')) {
    const buildId = LpxConfigSchema.safeParse(component.lpx ?? {}).data?.buildId ?? '';
    const url = resolveBuildUrl(config.registry, buildId);
    if (!url.ok) return result(failed(`resolve LPX build URL ${JSON.stringify(buildId)}: ${url.error}`));
    builds.push({ component: component.name, buildId, url: url.url });
  }
  // gs:// builds are downloaded through Model Express first (lpx.md §5.1).
  const downloads = decideModelDownloads(planModelDownloads(lpxRemoteBuildUrls(dgd, config.registry), lpxgd, now), observed.modelDownloadChecks, lpxgd.status?.modelDownload, now);
  modelDownload = downloads.modelDownload;
  if (downloads.kind === 'pending') return result(pending(downloads.message));
  if (downloads.kind === 'failed') return result(failed(downloads.message));
  // The immutable build snapshot of each component (upstream ResolveWorkloads, after the downloads):
  // its content id is the compiler-snapshot digest of the component's Agents and requests.
  const snapshotDigests = new Map<string, string>();
  const decodedBuilds = new Map<string, LpxComponentBuild>();
  for (const build of builds) {
    const snapshot = observed.buildSnapshots.get(build.url) ?? { ok: false, error: `build ${JSON.stringify(build.url)} was not read` };
    if (!snapshot.ok) return result(failed(buildSnapshotAcquisitionError(build.component, build.buildId, snapshot.error)));
    snapshotDigests.set(build.component, snapshot.contentId);
    if (snapshot.build !== undefined) decodedBuilds.set(build.component, { build: snapshot.build, buildId: build.buildId });
  }

  const id: LpxIdentity = { namespace: lpxgd.metadata.namespace ?? 'default', name: lpxgd.metadata.name ?? '', uid: lpxgd.metadata.uid ?? '' };
  // What the decoded builds derive (Agent counts, local partitions, workload modes, request
  // fields); a build not decoded yet leaves its workload as the DGD alone describes it.
  const derivedWorkloads = deriveLpxWorkloads(dgd, resolveLpxWorkloads(dgd), decodedBuilds);
  if (!derivedWorkloads.ok) return result(failed(derivedWorkloads.error));
  const workloads = derivedWorkloads.value;
  const pcsName = lpxPodCliqueSetName(id);
  // Upstream PlanNodeLocalMaterialization: the replica bound, pod hostnames, model annotations.
  const unmaterializable = validateLpxMaterialization(dgd, pcsName, workloads);
  if (unmaterializable !== undefined) return result(failed(unmaterializable));
  const pcs = observed.podCliqueSet;
  const groupOf = (w: LpxWorkload) => observed.scalingGroups.get(scalingGroupObjectName(pcsName, w));

  // The external count, recorded before any replacement (issue 11 part 7).
  const components: Record<string, LpxComponentStatus> = {};
  const retainedOf = (w: LpxWorkload): number | undefined => {
    if (w.explicitReplicas !== undefined) return undefined;
    return groupOf(w)?.spec.replicas ?? previousComponents[w.serving.name]?.retainedReplicas;
  };
  const carry = (): Record<string, LpxComponentStatus> => {
    const out: Record<string, LpxComponentStatus> = {};
    for (const w of workloads) {
      const retained = retainedOf(w);
      out[w.serving.name] = { ...(previousComponents[w.serving.name] ?? { componentKind: 'PodCliqueScalingGroup' }), ...(retained === undefined ? {} : { retainedReplicas: retained }) };
    }
    return out;
  };

  if (pcs !== undefined && !(pcs.metadata.ownerReferences ?? []).some((ref) => ref['controller'] === true && ref['uid'] === id.uid)) {
    return result(failed(`PodCliqueSet ${JSON.stringify(pcsName)} is not controlled by this LPXGraphDeployment`));
  }
  if (pcs?.metadata.deletionTimestamp !== undefined) return result(pending('Waiting for PodCliqueSet garbage collection'), {}, componentsNotObserved(carry(), generation, now));

  const seeds = observedSeeds(pcs?.spec);
  const desiredSeeds = new Map(workloads.map((w) => [w.scalingGroup, seedFor(w, pcs === undefined ? undefined : seeds.get(w.scalingGroup), retainedOf(w))]));
  // The runtime ConfigMaps of the decoded builds (without a decoded build: none, as before).
  const decoded = decodedLpxBuilds(dgd, config.registry, observed.buildSnapshots);
  const runtime = renderLpxRuntimeConfigs(pcsName, workloads, decoded);
  if (!runtime.ok) return result(failed(runtime.error), {}, componentsNotObserved(carry(), generation, now));
  for (const w of workloads) {
    const build = decoded.get(w.serving.name);
    const runtimeConfig = runtime.configs.get(w.scalingGroup);
    const issue = build === undefined || runtimeConfig === undefined ? undefined : runtimeConfigVolumeIssue(w, build, runtimeConfig);
    if (issue !== undefined) return result(failed(issue), {}, componentsNotObserved(carry(), generation, now));
  }
  const desiredPcs = renderLpxPodCliqueSet(dgd, id, workloads, desiredSeeds, config.render, snapshotDigests, runtime.configs, decoded);
  if (pcs !== undefined && lpxLayoutKey(pcs.spec) !== lpxLayoutKey(desiredPcs['spec'])) {
    return result(pending('Waiting for the previous PodCliqueSet and its requests to be deleted'), { deletePodCliqueSet: { name: pcsName, uid: pcs.metadata.uid ?? '' } }, componentsNotObserved(carry(), generation, now));
  }
  // Step 12 (lpx.md §5.3): missing ConfigMaps are created before the PodCliqueSet that mounts
  // them; one at a desired name that this LPXGD does not control is never adopted (§2.3).
  const desiredConfigMaps = renderLpxRuntimeConfigMaps(id, String(owner['uid'] ?? ''), runtime.configs);
  const observedConfigMaps = observed.configMaps ?? new Map<string, ObservedConfigMap>();
  const configMapCreates = decideRuntimeConfigMapCreates(desiredConfigMaps, observedConfigMaps, id.uid);
  if (!configMapCreates.ok) return result(failed(configMapCreates.error), {}, componentsNotObserved(carry(), generation, now));
  const createConfigMaps = configMapCreates.create;
  if (pcs === undefined || pcs.metadata.uid === undefined) {
    return result(pending('Waiting for the PodCliqueSet cache observation'), { applyPodCliqueSet: desiredPcs, applyServices: renderLpxServingServices(dgd, id, workloads), createConfigMaps }, componentsNotObserved(carry(), generation, now));
  }

  const isBlocked = isCoherentUpdateBlocking(pcs);
  const isFailureCurrent = isSchedulingFailureCurrent(generation, lpxgd.status?.conditions ?? []);
  const scale: { name: string; replicas: number; resourceVersion: string | undefined }[] = [];
  const publishCapacity = new Map<string, number>();
  let isDeferred = false;
  let missingGroup = false;
  for (const w of workloads) {
    const group = groupOf(w);
    if (group === undefined) {
      missingGroup = true;
      continue;
    }
    const live = group.spec.replicas;
    const explicit = w.explicitReplicas;
    let isGroupDeferred = false;
    if (explicit !== undefined && explicit !== live) {
      const isScaleUp = explicit > live;
      if (isBlocked) isGroupDeferred = true;
      else if (!(isScaleUp && isFailureCurrent)) scale.push({ name: group.metadata.name ?? '', replicas: explicit, resourceVersion: group.metadata.resourceVersion });
    }
    isDeferred ||= isGroupDeferred;
    // Publish only for capacity the scaling group already has (lpx.md §6.2: scale before
    // publishing); a deferred scale-in keeps the live replicas' requests until capacity drops.
    publishCapacity.set(w.scalingGroup, explicit === undefined || isGroupDeferred ? live : Math.min(explicit, live));
  }

  // Expired requests of an explicit-replica workload need capacity reduced; during a Coherent
  // update that is deferred too (lpx.md §3.4: "Expiry with explicit replicas sets scalingRequired").
  if (isBlocked) {
    const deadlineWorkloads = workloads
      .filter((w) => w.explicitReplicas !== undefined)
      .map((w) => ({ scalingGroupObject: scalingGroupObjectName(pcsName, w), secondsByModel: new Map(w.models.map((m) => [m.model, m.attemptDeadlineSeconds])), hasExplicitReplicas: true, liveReplicas: groupOf(w)?.spec.replicas }));
    const controlled = observed.requests.filter((r) => isRequestControlledBy(r, pcs.metadata.uid ?? ''));
    if (findExpiredRequests({ workloads: deadlineWorkloads, requests: controlled }, now).expired.length > 0) isDeferred = true;
  }

  const desiredRequests = desiredPipelineRequests(id, dgd.metadata.name ?? '', workloads, publishCapacity, { name: pcsName, uid: pcs.metadata.uid }, snapshotDigests);
  const ours = observed.requests.filter((r) => isRequestControlledBy(r, pcs.metadata.uid ?? ''));
  const oursByName = new Map(ours.map((r) => [r.metadata.name ?? '', r]));
  const foreignNames = new Set(observed.requests.filter((r) => !isRequestControlledBy(r, pcs.metadata.uid ?? '')).map((r) => r.metadata.name ?? ''));
  const desiredNames = new Set(desiredRequests.map((r) => r.name));
  const foreign = desiredRequests.find((r) => foreignNames.has(r.name));
  const createRequests = isFailureCurrent || missingGroup ? [] : desiredRequests.filter((r) => !oursByName.has(r.name) && !foreignNames.has(r.name)).map((r) => r.object);
  // Removed ordinals' requests; one the scheduler still commits waits for its release (lpx.md §3.2
  // Deletion: "Ordinary retirement waits for status.committed to clear (D)").
  const removed = ours.filter((r) => !desiredNames.has(r.metadata.name ?? '') && r.metadata.deletionTimestamp === undefined && !missingGroup);
  const removedRequests = removed
    .filter((r) => !isRequestCommitted(r))
    .map((r) => ({ name: r.metadata.name ?? '', uid: r.metadata.uid, resourceVersion: r.metadata.resourceVersion }));

  // A request whose immutable intent changed (a new workload or build) is handed over per engine
  // replica once Grove has rolled that replica and the scheduler released it (lpx.md §3.2 Matching).
  const mismatchedByEngine = new Map<string, { workload: LpxWorkload; replicaIndex: number; requests: LpuPipelineRequest[] }>();
  for (const desired of desiredRequests) {
    const current = oursByName.get(desired.name);
    if (current === undefined || isPipelineRequestMatching(current, desired.object)) continue;
    const workload = workloads.find((w) => w.scalingGroup === desired.scalingGroup);
    if (workload === undefined) continue;
    const key = `${desired.scalingGroup}/${desired.replicaIndex}`;
    const engine = mismatchedByEngine.get(key) ?? { workload, replicaIndex: desired.replicaIndex, requests: [] };
    engine.requests.push(current);
    mismatchedByEngine.set(key, engine);
  }
  const retiredRequests: { name: string; uid: string | undefined; resourceVersion: string | undefined }[] = [];
  for (const engine of mismatchedByEngine.values()) {
    const group = groupOf(engine.workload);
    const isAtDesiredRevision = group !== undefined && isReplicaAtDesiredRevision(desiredPcs['spec'], group, observed.podCliques, engine.replicaIndex);
    const handoff = decideEngineHandoff(isAtDesiredRevision, engine.requests);
    if (handoff.kind === 'retire') retiredRequests.push(...handoff.requests.map((r) => ({ name: r.metadata.name ?? '', uid: r.metadata.uid, resourceVersion: r.metadata.resourceVersion })));
  }
  const deleteRequests = [...removedRequests, ...retiredRequests];

  // Readiness (lpx.md §5.2): workloads, then receipts, then deferral.
  let verdict: LpxVerdict = { kind: 'ready' };
  const fold = (next: LpxVerdict) => {
    if (verdict.kind === 'failed') return;
    if (next.kind === 'failed' || verdict.kind === 'ready') verdict = next;
  };
  for (const w of workloads) {
    const group = groupOf(w);
    const desired = w.explicitReplicas ?? group?.spec.replicas ?? 0;
    const workloadReadiness = evaluateWorkloadReadiness(true, group, desired);
    const roles = evaluateRoleReadiness(pcsName, w, desired, observed.podCliques);
    // Serving available = min(PCSG available, replicas whose every clique is ready) (lpx.md §5.2).
    const available = Math.min(workloadReadiness.status.availableReplicas ?? 0, roles.completeReplicas);
    const roleVerdict: LpxVerdict = roles.verdict.kind !== 'ready' ? roles.verdict : available < desired ? pending(`scheduled but available=${available}/${desired}`) : roles.verdict;
    const evaluated = {
      verdict: workloadReadiness.verdict.kind !== 'ready' ? workloadReadiness.verdict : roleVerdict,
      status: { ...workloadReadiness.status, availableReplicas: available, ready: workloadReadiness.verdict.kind === 'ready' && roleVerdict.kind === 'ready' },
    };
    const retained = retainedOf(w);
    const previousReady = (previousComponents[w.serving.name]?.conditions ?? []).find((c) => c.type === CONDITION_READY);
    // The component's own Ready condition (lpx.md §2.2 "Plus per-component conditions").
    const componentReady = lpxReadyCondition(evaluated.verdict, generation, previousReady, now);
    components[w.serving.name] = { ...evaluated.status, ...(retained === undefined ? {} : { retainedReplicas: retained }), conditions: [componentReady] };
    for (const draft of w.components.filter((c) => c !== w.serving)) {
      components[draft.name] = { componentKind: 'PodClique', componentNames: w.models.filter((m) => m.component === draft).map((m) => m.agentClique), replicas: draft.replicas ?? 1 };
    }
    fold(evaluated.verdict);
  }
  if (foreign !== undefined) fold(failed(`LpuPipelineRequest ${JSON.stringify(foreign.name)} is not controlled by PodCliqueSet ${JSON.stringify(pcsName)}`));
  const fullCapacity = new Map(workloads.map((w) => [w.scalingGroup, w.explicitReplicas ?? groupOf(w)?.spec.replicas ?? 0]));
  const allDesired = desiredPipelineRequests(id, dgd.metadata.name ?? '', workloads, fullCapacity, { name: pcsName, uid: pcs.metadata.uid }, snapshotDigests);
  const receipts = evaluateReceipts(allDesired.map((r) => r.name), oursByName);
  if (receipts.kind !== 'bound') fold(receipts.kind === 'failed' ? failed(receipts.message) : pending(receipts.message));
  if (isDeferred) fold(pending('Replica changes are deferred until the Grove coherent update completes'));
  const publication = publicationVerdict(removed.length > 0, mismatchedByEngine.size > 0, desiredRequests.some((r) => oursByName.get(r.name)?.metadata.deletionTimestamp !== undefined), createRequests.length > 0);
  // Upstream returns at its publication step, so that message outranks a pending readiness verdict.
  const outrank = (next: LpxVerdict) => {
    if (next.kind !== 'ready' && verdict.kind !== 'failed') verdict = next;
  };
  outrank(publication);
  if (isFailureCurrent) verdict = failed(MESSAGE_LPX_DEADLINE_EXCEEDED);

  // Step 19 (lpx.md §5.3, upstream deleteUnusedConfigMaps): old runtime ConfigMaps stay until
  // the LPXGD is Ready, so pods of the previous revision keep their configuration meanwhile.
  // Only once every workload's build is decoded: without a decoded build nothing is pruned (as before).
  const isEveryBuildDecoded = workloads.every((w) => runtime.configs.has(w.scalingGroup));
  const deleteConfigMaps = verdict.kind !== 'ready' || !isEveryBuildDecoded ? [] : obsoleteRuntimeConfigMaps(desiredConfigMaps, observedConfigMaps, id.uid);

  return result(verdict, { applyPodCliqueSet: desiredPcs, applyServices: renderLpxServingServices(dgd, id, workloads), scale, createRequests, deleteRequests, createConfigMaps, deleteConfigMaps }, components, isDeferred);
}
