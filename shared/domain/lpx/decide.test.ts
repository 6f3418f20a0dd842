import { describe, expect, it } from 'vitest';
import type { Dgd, LpuPipelineRequest, LpxGraphDeployment, PodClique, PodCliqueScalingGroup } from '../../api/index.js';
import type { LpxBuild } from './build.js';
import type { BuildSnapshotReading } from './build-snapshot.js';
import { decideLpxGraphDeployment, lpxSnapshotBuildUrls, seedFor, type LpxObserved, type ObservedPodCliqueSet } from './decide.js';
import { decideLpxHandoff } from './handoff.js';
import { parseModelRegistryUrl } from './model-registry.js';
import { desiredPipelineRequests, isPipelineRequestMatching } from './pipeline-requests.js';
import { lpxPodCliqueSetName } from './names.js';
import { runtimeConfigMapHash } from './runtime-configmaps.js';
import { resolveLpxWorkloads } from './workloads.js';

const NOW = new Date('2026-12-01T10:00:00Z');
const role = (name: string) => ({ name, podTemplate: { spec: { containers: [{ name: 'main', image: `lpx-${name}:1` }] } } });

function aDgd(engine: Record<string, unknown> = { replicas: 2 }, annotations: Record<string, string> = {}): Dgd {
  return {
    apiVersion: 'nvidia.com/v1beta1',
    kind: 'DynamoGraphDeployment',
    metadata: { name: 'llama', namespace: 'ns', uid: 'dgd-uid', annotations },
    spec: { components: [{ name: 'engine', type: 'lpx', lpx: { buildId: '/models/b' }, roles: [role('agent'), role('conductor')], ...engine }] as Dgd['spec']['components'] },
  };
}
function anLpxgd(dgd: Dgd, overrides: Partial<LpxGraphDeployment['metadata']> = {}): LpxGraphDeployment {
  const handoff = decideLpxHandoff(dgd, undefined);
  if (!handoff.ok) throw new Error('handoff');
  return {
    apiVersion: 'nvidia.com/v1alpha1',
    kind: 'LPXGraphDeployment',
    metadata: { name: 'llama', namespace: 'ns', uid: 'lpx-uid', generation: 1, annotations: { 'lpx.nvidia.com/restart-id': '' }, ownerReferences: [{ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', name: 'llama', uid: 'dgd-uid', controller: true }], ...overrides },
    spec: { inputRevision: handoff.inputRevision },
  };
}
/** The snapshot of build /models/b, as the shell acquired it. */
const DIGEST = `sha256:${'b'.repeat(64)}`;
const SNAPSHOTS: ReadonlyMap<string, BuildSnapshotReading> = new Map([['file:///models/b', { ok: true, contentId: DIGEST }]]);
const PCS = lpxPodCliqueSetName({ namespace: 'ns', name: 'llama', uid: 'lpx-uid' });
function aPcs(dgd: Dgd, overrides: Partial<ObservedPodCliqueSet['metadata']> = {}): ObservedPodCliqueSet {
  const rendered = decideLpxGraphDeployment({ lpxgd: anLpxgd(dgd), dgd, podCliqueSet: undefined, scalingGroups: new Map(), podCliques: new Map(), requests: [], buildSnapshots: SNAPSHOTS, modelDownloadChecks: new Map() }, config, NOW).applyPodCliqueSet;
  return { metadata: { name: PCS, uid: 'pcs-uid', generation: 1, ownerReferences: [{ uid: 'lpx-uid', controller: true }], ...overrides }, spec: rendered?.['spec'], status: { observedGeneration: 1 } };
}
function aGroup(replicas: number, available = 0): PodCliqueScalingGroup {
  return {
    apiVersion: 'grove.io/v1alpha1',
    kind: 'PodCliqueScalingGroup',
    metadata: { name: `${PCS}-0-lpx`, generation: 1, resourceVersion: '5' },
    spec: { replicas, cliqueNames: ['agt', 'cond'] },
    status: { observedGeneration: 1, replicas, scheduledReplicas: available, updatedReplicas: available, availableReplicas: available },
  };
}
const registry = parseModelRegistryUrl(undefined);
const config = { registry: registry.ok ? registry.registry : undefined, render: { terminationDelay: '15m' } };

function observedWith(dgd: Dgd, extra: Partial<LpxObserved> = {}): LpxObserved {
  return { lpxgd: anLpxgd(dgd), dgd, podCliqueSet: aPcs(dgd), scalingGroups: new Map([[`${PCS}-0-lpx`, aGroup(2)]]), podCliques: new Map(), requests: [], buildSnapshots: SNAPSHOTS, modelDownloadChecks: new Map(), ...extra };
}
/** As Grove: every role clique of `replicas` engine replicas, `ready` of their pods ready (one pod each). */
function roleCliques(replicas: number, ready = 1): Map<string, PodClique> {
  const out = new Map<string, PodClique>();
  for (let i = 0; i < replicas; i += 1) {
    for (const role of ['agt', 'cond']) {
      const name = `${PCS}-0-lpx-${i}-${role}`;
      out.set(name, { apiVersion: 'grove.io/v1alpha1', kind: 'PodClique', metadata: { name, generation: 1 }, spec: { roleName: role, replicas: 1, podSpec: {} }, status: { observedGeneration: 1, readyReplicas: ready } });
    }
  }
  return out;
}
function ordinalOf(request: LpuPipelineRequest): number {
  return (request.spec['materializationTarget'] as { podCliqueScalingGroupRef: { replicaIndex: number } }).podCliqueScalingGroupRef.replicaIndex;
}
/** The requests an earlier pass created for `replicas` engine replicas, as the API server stores them (no receipt yet). */
function publishedRequests(dgd: Dgd, replicas: number): LpuPipelineRequest[] {
  return desiredPipelineRequests({ namespace: 'ns', name: 'llama', uid: 'lpx-uid' }, 'llama', resolveLpxWorkloads(dgd), new Map([['lpx', replicas]]), { name: PCS, uid: 'pcs-uid' }, new Map([['engine', DIGEST]]))
    .map((r) => ({ ...r.object, metadata: { ...r.object.metadata, uid: `u-${r.name}`, generation: 1, resourceVersion: '7' } }) as unknown as LpuPipelineRequest);
}
const readyOf = (observed: LpxObserved) => decideLpxGraphDeployment(observed, config, NOW).status.conditions.find((c) => c.type === 'Ready');

describe('decideLpxGraphDeployment (lpx.md §5.3 status flow)', () => {
  it.each([
    { name: 'an owner that is not a DGD fails', reason: '"LPXGraphDeployment requires a DynamoGraphDeployment controller owner"', observed: { ...observedWith(aDgd()), lpxgd: anLpxgd(aDgd(), { ownerReferences: [] }) }, want: { reason: 'Failed', message: 'LPXGraphDeployment requires a DynamoGraphDeployment controller owner' } },
    { name: 'a scaling group not yet scheduled is pending with Grove\'s counts', reason: 'lpx.md §5.2 "insufficient scheduled replicas: scheduled=%d/%d"', observed: observedWith(aDgd(), { requests: publishedRequests(aDgd(), 2) }), want: { reason: 'Pending', message: 'insufficient scheduled replicas: scheduled=0/2' } },
    { name: 'an available scaling group whose role cliques are missing waits for them', reason: 'lpx.md §5.2 "Missing: Waiting for LPX role %s"', observed: observedWith(aDgd(), { scalingGroups: new Map([[`${PCS}-0-lpx`, aGroup(2, 2)]]), requests: publishedRequests(aDgd(), 2) }), want: { reason: 'Pending', message: 'Waiting for LPX role agt' } },
    { name: 'a replica counts only when every clique is fully ready', reason: 'lpx.md §5.2 "available = min(PCSG available, the replicas whose every clique is ready)"', observed: observedWith(aDgd(), { scalingGroups: new Map([[`${PCS}-0-lpx`, aGroup(2, 2)]]), podCliques: roleCliques(2, 0), requests: publishedRequests(aDgd(), 2) }), want: { reason: 'Pending', message: 'scheduled but available=0/2' } },
    { name: 'a gs:// build needs Model Express, which is not configured', reason: 'lpx.md §4 EnsureDownloaded: "gs: requires a Model Express client (Model Express client is required for GCS model downloads)"; upstream ensureModelsDownloaded "ensure model %q is downloaded: %w"', observed: (() => { const d = aDgd({ replicas: 2, lpx: { buildId: 'gs://bucket/model/build' } }); return observedWith(d, { lpxgd: anLpxgd(d), modelDownloadChecks: new Map([['gs://bucket/model/build', { ok: false, error: 'Model Express client is required for GCS model downloads' }]]) }); })(), want: { reason: 'Failed', message: 'ensure model "gs://bucket/model/build" is downloaded: Model Express client is required for GCS model downloads' } },
    { name: 'a gs:// build Model Express is still downloading is waited for', reason: 'lpx.md §5.1 Results "Ready Pending Waiting for model downloads to complete: <comma list>"', observed: (() => { const d = aDgd({ replicas: 2, lpx: { buildId: 'gs://bucket/model/build' } }); return observedWith(d, { lpxgd: anLpxgd(d), modelDownloadChecks: new Map([['gs://bucket/model/build', { ok: true, isDownloaded: false }]]) }); })(), want: { reason: 'Pending', message: 'Waiting for model downloads to complete: gs://bucket/model/build' } },
    { name: 'a DGD at another input revision is waited for', reason: '"a stale inputRevision ... gives Pending Waiting for the matching DynamoGraphDeployment"', observed: { ...observedWith(aDgd()), dgd: aDgd({ replicas: 3 }) }, want: { reason: 'Pending', message: 'Waiting for the matching DynamoGraphDeployment' } },
    { name: 'a foreign PodCliqueSet at the LPX name is never adopted', reason: '"PodCliqueSet %q is not controlled by this LPXGraphDeployment"', observed: observedWith(aDgd(), { podCliqueSet: aPcs(aDgd(), { ownerReferences: [{ uid: 'other', controller: true }] }) }), want: { reason: 'Failed', message: `PodCliqueSet "${PCS}" is not controlled by this LPXGraphDeployment` } },
    { name: 'more than 2496 engine replicas fails, naming the field', reason: 'upstream materialization.go ValidateReplicaCount "LPX replica count must be between 0 and %d" (maxWorkloadReplicas 2496); lpx.md §1.1 "Up to 2496 for hybrid and LPU-only engines"', observed: (() => { const d = aDgd({ replicas: 2497 }); return observedWith(d); })(), want: { reason: 'Failed', message: 'spec.components[0].replicas: Invalid value: 2497: LPX replica count must be between 0 and 2496' } },
    { name: 'a relative build id without a registry fails', reason: 'lpx.md §4 BuildURL "model registry URL is not configured"; §5.1 "resolve LPX build URL %q: %w"', observed: (() => { const d = aDgd({ replicas: 2, lpx: { buildId: 'model/build' } }); return observedWith(d); })(), want: { reason: 'Failed', message: 'resolve LPX build URL "model/build": model registry URL is not configured' } },
    { name: 'an available engine whose requests have no receipt yet is pending', reason: 'lpx.md §3.3 "no or stale receipt: LPUPipelineRequest is published"', observed: observedWith(aDgd(), { scalingGroups: new Map([[`${PCS}-0-lpx`, aGroup(2, 2)]]), podCliques: roleCliques(2), requests: publishedRequests(aDgd(), 2) }), want: { reason: 'Pending', message: 'LPUPipelineRequest is published' } },
    { name: 'requests just created are waited for in the cache, before any readiness message', reason: 'lpx.md §3.2 Publication: "Then Ready is Pending: Waiting for published LPX requests to appear in the cache"', observed: observedWith(aDgd(), { scalingGroups: new Map([[`${PCS}-0-lpx`, aGroup(2, 2)]]), podCliques: roleCliques(2) }), want: { reason: 'Pending', message: 'Waiting for published LPX requests to appear in the cache' } },
    { name: 'a removed ordinal\'s request is deleted and the capacity change waited for', reason: 'lpx.md §5.3 step 15 "Delete the removed LPRs: Waiting to observe LPX capacity changes"', observed: observedWith(aDgd(), { scalingGroups: new Map([[`${PCS}-0-lpx`, aGroup(2, 2)]]), podCliques: roleCliques(2), requests: publishedRequests(aDgd({ replicas: 3 }), 3) }), want: { reason: 'Pending', message: 'Waiting to observe LPX capacity changes' } },
    { name: 'a removed ordinal\'s request the scheduler still commits is kept until its release', reason: 'lpx.md §3.2 Deletion "Ordinary retirement waits for status.committed to clear (D)"', observed: observedWith(aDgd(), { scalingGroups: new Map([[`${PCS}-0-lpx`, aGroup(2, 2)]]), podCliques: roleCliques(2), requests: publishedRequests(aDgd({ replicas: 3 }), 3).map((r) => (ordinalOf(r) === 2 ? { ...r, status: { phase: 'bound', observedGeneration: 1, committed: {} } } : r)) }), want: { reason: 'Pending', message: 'Waiting to observe LPX capacity changes' }, deletes: [] as string[] },
    { name: 'a desired name still held by a terminating request is not reused until it is gone', reason: 'lpx.md §3.2 "Terminating LPRs are pending cleanup; their names must disappear before they are reused"; §5.3 step 18 "Waiting for removed LPX requests to finish deletion"', observed: observedWith(aDgd(), { scalingGroups: new Map([[`${PCS}-0-lpx`, aGroup(2, 2)]]), podCliques: roleCliques(2), requests: publishedRequests(aDgd(), 2).map((r, i) => (i === 0 ? { ...r, metadata: { ...r.metadata, deletionTimestamp: NOW.toISOString() } } : r)) }), want: { reason: 'Pending', message: 'Waiting for removed LPX requests to finish deletion' } },
    { name: 'a build whose snapshot could not be acquired fails, naming the component and its buildId', reason: 'upstream ResolveWorkloads: "%w for model %q build %q: %w" with ErrBuildSnapshotAcquisition "acquiring immutable LPX build snapshot"; build_snapshot.go "%w: immutable build %q: %w" with selectBuildContract "missing build contract: require %s or %s"', observed: observedWith(aDgd(), { buildSnapshots: new Map([['file:///models/b', { ok: false, error: 'immutable build snapshot is inconsistent: immutable build "file:///models/b": missing build contract: require manifest.v2.capnp.bin or deployment.v1.capnp.bin' }]]) }), want: { reason: 'Failed', message: 'acquiring immutable LPX build snapshot for model "engine" build "/models/b": immutable build snapshot is inconsistent: immutable build "file:///models/b": missing build contract: require manifest.v2.capnp.bin or deployment.v1.capnp.bin' } },
  ])('$name', (row) => {
    expect(readyOf(row.observed)).toMatchObject({ status: 'False', ...row.want });
    if ('deletes' in row) expect(decideLpxGraphDeployment(row.observed, config, NOW).deleteRequests.map((r) => r.name)).toEqual(row.deletes);
  });

  it('"CompilerSnapshotDigestAnnotation records compiler provenance": the build snapshot\'s content id is on every request and Agent clique of its component, not on the conductor', () => {
    // aDgd() has 2 engine replicas: one request per replica (ordinals 0 and 1), each annotated.
    const desired = decideLpxGraphDeployment(observedWith(aDgd({ replicas: 2 })), config, NOW);
    const stamped = expect.objectContaining({ 'scheduling.lpu.nvidia.com/compiler-snapshot-digest': DIGEST }) as unknown;
    expect(desired.createRequests.map((r) => [ordinalOf(r as unknown as LpuPipelineRequest), r.metadata['annotations']]).sort()).toEqual([
      [0, stamped],
      [1, stamped],
    ]);
    const cliques = ((desired.applyPodCliqueSet?.['spec'] as { template: { cliques: { name: string; annotations?: Record<string, string> }[] } }).template.cliques);
    expect(cliques.map((c) => [c.name, c.annotations?.['scheduling.lpu.nvidia.com/compiler-snapshot-digest']])).toEqual([['agt', DIGEST], ['cond', undefined]]);
  });

  describe('a decoded build derives the Agent count, workload mode and request fields (lpx.md §1.1; upstream ResolveSelectedWorkload)', () => {
    // One XT partition of 32 chips (the geometry of upstream fixture node-local-v2-hybrid.yaml: c32, 4 Agents), LPU only.
    const build: LpxBuild = { path: 'file:///models/b', family: 'xt8888', compilationMode: 'lpuOnly', partitions: [{ sourcePartitionId: 0, partPath: 'part-0', topology: { raw: 'URSA_V2__Q8__32C__G_96_25__KP_FEC__GHZ_1_0__NO_FPGA', chipCount: 32, nodeCount: 4 }, hxExtent: undefined }], selectedPropSyncChains: [], standaloneTokenEmbeddings: false, supportsCpuEmbeddings: false, ioFpgaCount: 1, ioFanoutFactor: 1, batchSize: 1, tokenEmbeddingsPath: undefined };
    const decoded: ReadonlyMap<string, BuildSnapshotReading> = new Map([['file:///models/b', { ok: true, contentId: DIGEST, build }]]);

    it('"An explicit agent count must equal the derived count": a mismatch is Ready=False, reason Failed, naming the field path; nothing is written', () => {
      const dgd = aDgd({ replicas: 2, roles: [{ ...role('agent'), replicas: 2 }, role('conductor')] });
      const desired = decideLpxGraphDeployment(observedWith(dgd, { lpxgd: anLpxgd(dgd), podCliqueSet: undefined, buildSnapshots: decoded }), config, NOW);
      expect(desired.status.conditions.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'Failed', message: 'spec.components[0].roles[0].replicas: Invalid value: 2: component "engine" agent replicas 2 must match the compiled count 4' });
      expect([desired.applyPodCliqueSet, desired.createRequests, desired.deleteRequests, desired.scale]).toEqual([undefined, [], [], []]);
    });

    it('the Agent clique renders the compiled count and workload mode; new requests carry the build-derived spec', () => {
      const dgd = aDgd();
      const first = decideLpxGraphDeployment(observedWith(dgd, { podCliqueSet: undefined, buildSnapshots: decoded }), config, NOW);
      const agt = (first.applyPodCliqueSet?.['spec'] as { template: { cliques: { name: string; annotations: Record<string, string>; spec: { replicas: number } }[] } }).template.cliques[0];
      expect([agt?.name, agt?.spec.replicas, agt?.annotations['scheduling.lpu.nvidia.com/workload-mode']]).toEqual(['agt', 4, 'v2LpuOnly']);
      const pcs = { ...aPcs(dgd), spec: first.applyPodCliqueSet?.['spec'] };
      const created = decideLpxGraphDeployment(observedWith(dgd, { podCliqueSet: pcs, buildSnapshots: decoded }), config, NOW).createRequests;
      expect(created.map((r) => (r['spec'] as Record<string, unknown>)['partitions'])).toEqual([[{ id: 'partition-000', ordinal: 0, compilerPartitionId: 0, xtShape: 'c32' }], [{ id: 'partition-000', ordinal: 0, compilerPartitionId: 0, xtShape: 'c32' }]]);
      // Requests published before the build was decoded carry another intent: they are handed over, not kept.
      const before = decideLpxGraphDeployment(observedWith(dgd, { podCliqueSet: pcs, buildSnapshots: decoded, requests: publishedRequests(dgd, 2) }), config, NOW);
      expect(before.createRequests).toEqual([]);
      expect(readyOf(observedWith(dgd, { podCliqueSet: pcs, buildSnapshots: decoded, requests: publishedRequests(dgd, 2) }))).toMatchObject({ status: 'False', message: 'Waiting for Grove replicas and their LPX requests to reach the desired build' });
    });
  });

  it('lpxSnapshotBuildUrls: the builds of the LPX components, deduplicated and sorted; unresolvable ids are left to the decision', () => {
    const dgd = aDgd();
    const components = [...dgd.spec.components, { ...dgd.spec.components[0], name: 'b', lpx: { buildId: '/models/b/' } }, { ...dgd.spec.components[0], name: 'c', lpx: { buildId: 'gs://bucket/x' } }, { ...dgd.spec.components[0], name: 'd', lpx: { buildId: 'relative/x' } }] as Dgd['spec']['components'];
    expect(lpxSnapshotBuildUrls({ spec: { ...dgd.spec, components } }, undefined)).toEqual(['file:///models/b', 'gs://bucket/x']);
  });

  it('"If not observed in that pass, it is reported as Unknown/NotObserved": a pass that stops before readiness resets every component\'s Ready', () => {
    const dgd = aDgd();
    const first = decideLpxGraphDeployment(observedWith(dgd, { scalingGroups: new Map([[`${PCS}-0-lpx`, aGroup(2, 2)]]), podCliques: roleCliques(2), requests: publishedRequests(dgd, 2) }), config, NOW);
    expect(first.status.components['engine']?.conditions?.[0]).toMatchObject({ type: 'Ready', status: 'True' });
    const lpxgd = { ...anLpxgd(dgd), status: first.status };
    const stopped = decideLpxGraphDeployment(observedWith(dgd, { lpxgd, buildSnapshots: new Map([['file:///models/b', { ok: false, error: 'gone' }]]) }), config, NOW);
    expect(stopped.status.components['engine']).toEqual({ ...first.status.components['engine'], conditions: [{ type: 'Ready', status: 'Unknown', reason: 'NotObserved', message: 'Component readiness has not been observed', lastTransitionTime: NOW.toISOString(), observedGeneration: 1 }] });
  });

  it('explicit replicas are written to the scaling group, and requests are published only for the capacity it has', () => {
    const desired = decideLpxGraphDeployment(observedWith(aDgd({ replicas: 3 }), { lpxgd: anLpxgd(aDgd({ replicas: 3 })), scalingGroups: new Map([[`${PCS}-0-lpx`, aGroup(2)]]) }), config, NOW);
    expect(desired.scale).toEqual([{ name: `${PCS}-0-lpx`, replicas: 3, resourceVersion: '5' }]);
    expect(desired.createRequests.map((r) => (r['spec'] as { materializationTarget: { podCliqueScalingGroupRef: { replicaIndex: number } } }).materializationTarget.podCliqueScalingGroupRef.replicaIndex)).toEqual([0, 1]);
  });

  it('"Grove rejects replica changes throughout an active Coherent rollout": the scale is deferred and ScalingDeferred=True', () => {
    const dgd = aDgd({ replicas: 3 }, { 'nvidia.com/grove-update-strategy': 'Coherent' });
    const pcs = aPcs(dgd);
    const desired = decideLpxGraphDeployment(observedWith(dgd, { podCliqueSet: { ...pcs, status: { observedGeneration: 1, updateProgress: {} } } }), config, NOW);
    expect(desired.scale).toEqual([]);
    expect(desired.status.conditions.find((c) => c.type === 'ScalingDeferred')).toMatchObject({ status: 'True', reason: 'GroveUpdatePending', message: 'Replica changes are deferred until Grove observes the desired PodCliqueSet and any coherent update completes' });
  });

  it('a scale-in deferred by a Coherent update keeps the live replicas\' requests', () => {
    const dgd = aDgd({ replicas: 1 }, { 'nvidia.com/grove-update-strategy': 'Coherent' });
    const pcs = aPcs(dgd);
    const ours = desiredPipelineRequests({ namespace: 'ns', name: 'llama', uid: 'lpx-uid' }, 'llama', resolveLpxWorkloads(dgd), new Map([['lpx', 2]]), { name: PCS, uid: 'pcs-uid' }).map((r) => r.object as unknown as LpuPipelineRequest);
    const desired = decideLpxGraphDeployment(observedWith(dgd, { podCliqueSet: { ...pcs, status: { observedGeneration: 1, updateProgress: {} } }, requests: ours }), config, NOW);
    expect(desired.scale).toEqual([]);
    expect(desired.deleteRequests).toEqual([]);
    // Once the update ends, the scale-in is written and the removed replica's request goes.
    const after = decideLpxGraphDeployment(observedWith(dgd, { podCliqueSet: { ...pcs, status: { observedGeneration: 1, updateProgress: { updateEndedAt: NOW.toISOString() } } }, requests: ours }), config, NOW);
    expect(after.scale).toEqual([{ name: `${PCS}-0-lpx`, replicas: 1, resourceVersion: '5' }]);
    expect(after.deleteRequests.map((r) => r.name)).toEqual([ours[1]?.metadata.name]);
  });

  it('a current SchedulingFailed blocks publication and scale-up and fails Ready', () => {
    const dgd = aDgd({ replicas: 3 });
    const lpxgd = { ...anLpxgd(dgd), status: { conditions: [{ type: 'SchedulingFailed', status: 'True' as const, reason: 'LPXSchedulingDeadlineExceeded', message: 'x', lastTransitionTime: NOW.toISOString(), observedGeneration: 1 }] } };
    const desired = decideLpxGraphDeployment(observedWith(dgd, { lpxgd, scalingGroups: new Map([[`${PCS}-0-lpx`, aGroup(1)]]) }), config, NOW);
    expect(desired.scale).toEqual([]);
    expect(desired.createRequests).toEqual([]);
    expect(desired.status.conditions.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'Failed', message: 'An LPX request exceeded its scheduling deadline' });
  });

  it('a changed layout replaces the PodCliqueSet, recording the live external count first', () => {
    const before = aDgd({});
    const after = aDgd({ minAvailable: 2 });
    const desired = decideLpxGraphDeployment({ ...observedWith(before, { scalingGroups: new Map([[`${PCS}-0-lpx`, aGroup(3)]]) }), dgd: after, lpxgd: anLpxgd(after) }, config, NOW);
    expect(desired.deletePodCliqueSet).toEqual({ name: PCS, uid: 'pcs-uid' });
    expect(desired.status.components['engine']?.retainedReplicas).toBe(3);
  });

  it('seedFor: a new PodCliqueSet seeds omitted replicas from the retained count, explicit ones from minAvailable; an existing one keeps its seed', () => {
    const [omitted] = resolveLpxWorkloads(aDgd({ minAvailable: 2 }));
    const [explicit] = resolveLpxWorkloads(aDgd({ replicas: 4 }));
    if (omitted === undefined || explicit === undefined) throw new Error('no workload');
    expect(seedFor(omitted, undefined, 5)).toBe(5);
    expect(seedFor(omitted, undefined, 1)).toBe(2);
    expect(seedFor(omitted, undefined, undefined)).toBe(2);
    expect(seedFor(explicit, undefined, 5)).toBe(1);
    expect(seedFor(omitted, 7, 5)).toBe(7);
  });

  describe('"An immutable mismatch waits for the Grove engine to roll (D)" (lpx.md §3.2 Matching; upstream reconcilePipelineRequests)', () => {
    const NEW_DIGEST = `sha256:${'c'.repeat(64)}`;
    const rebuilt: ReadonlyMap<string, BuildSnapshotReading> = new Map([['file:///models/b', { ok: true, contentId: NEW_DIGEST }]]);
    /** As Grove after rolling: the role cliques of `replicas` replicas carry the desired templates' labels and annotations. */
    function rolledCliques(replicas: number): Map<string, PodClique> {
      const desired = decideLpxGraphDeployment(observedWith(aDgd(), { buildSnapshots: rebuilt }), config, NOW).applyPodCliqueSet;
      const templates = (desired?.['spec'] as { template: { cliques: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> }[] } }).template.cliques;
      const out = roleCliques(replicas);
      for (const [name, clique] of out) {
        const template = templates.find((t) => name.endsWith(`-${t.name}`));
        out.set(name, { ...clique, metadata: { ...clique.metadata, labels: template?.labels ?? {}, annotations: template?.annotations ?? {} } });
      }
      return out;
    }
    // Requests published for the old build (DIGEST), Grove's engine available.
    const old = publishedRequests(aDgd(), 2);
    const base = { scalingGroups: new Map([[`${PCS}-0-lpx`, aGroup(2, 2)]]), buildSnapshots: rebuilt };

    it.each([
      { name: 'before Grove rolls the replica\'s cliques: nothing is deleted or created', observed: observedWith(aDgd(), { ...base, podCliques: roleCliques(2), requests: old }), deleted: [] as string[] },
      { name: 'rolled, but the scheduler still commits the old plan: wait for its release', reason: '"Ordinary retirement waits for status.committed to clear (D)"', observed: observedWith(aDgd(), { ...base, podCliques: rolledCliques(2), requests: old.map((r) => ({ ...r, status: { phase: 'bound', observedGeneration: 1, committed: { execution: { acceptedGeneration: 1 } } } })) }), deleted: [] },
      { name: 'rolled and released: the old requests are deleted with preconditions, to be published again', observed: observedWith(aDgd(), { ...base, podCliques: rolledCliques(2), requests: old }), deleted: old.map((r) => r.metadata.name ?? '') },
      { name: 'an old request already terminating is not deleted again', observed: observedWith(aDgd(), { ...base, podCliques: rolledCliques(2), requests: old.map((r, i) => (i === 0 ? { ...r, metadata: { ...r.metadata, deletionTimestamp: NOW.toISOString() } } : r)) }), deleted: [old[1]?.metadata.name ?? ''] },
    ])('$name', ({ observed, deleted }) => {
      const desired = decideLpxGraphDeployment(observed, config, NOW);
      expect(desired.deleteRequests).toEqual(deleted.map((name) => ({ name, uid: `u-${name}`, resourceVersion: '7' })));
      expect(desired.createRequests).toEqual([]);
      expect(desired.status.conditions.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'Pending', message: 'Waiting for Grove replicas and their LPX requests to reach the desired build' });
    });

    it('isPipelineRequestMatching: the observed request may carry more annotations, never other values or another spec', () => {
      const [desired] = desiredPipelineRequests({ namespace: 'ns', name: 'llama', uid: 'lpx-uid' }, 'llama', resolveLpxWorkloads(aDgd()), new Map([['lpx', 1]]), { name: PCS, uid: 'pcs-uid' }, new Map([['engine', DIGEST]]));
      if (desired === undefined) throw new Error('no request');
      const observedAs = (annotations: Record<string, string>, spec: Record<string, unknown>) => ({ metadata: { annotations }, spec });
      const annotations = desired.object.metadata['annotations'] as Record<string, string>;
      const spec = desired.object['spec'] as Record<string, unknown>;
      expect(isPipelineRequestMatching(observedAs({ ...annotations, 'scheduler.example/status': 'observed' }, spec), desired.object)).toBe(true);
      expect(isPipelineRequestMatching(observedAs({ ...annotations, 'scheduling.lpu.nvidia.com/compiler-snapshot-digest': 'another-snapshot' }, spec), desired.object)).toBe(false);
      expect(isPipelineRequestMatching(observedAs({ ...annotations, 'scheduling.lpu.nvidia.com/dynamo-workload-digest': 'another-build' }, spec), desired.object)).toBe(false);
      expect(isPipelineRequestMatching(observedAs(annotations, { ...spec, repairPolicy: { mode: 'repair' } }), desired.object)).toBe(false);
    });
  });

  describe('the runtime ConfigMaps (lpx.md §5.3 steps 12 and 19; upstream reconcileRuntimeResources, deleteUnusedConfigMaps)', () => {
    /** The decoded build of /models/b (an LPU-only XT build of one 16-chip partition), as the decoder delivers it on the snapshot. */
    const BUILD: LpxBuild = { path: 'file:///models/b', family: 'xt8888', compilationMode: 'lpuOnly', partitions: [{ sourcePartitionId: 0, partPath: 'part-0', topology: { raw: 'URSA_V2__Q8__16C__G_96_25__KP_FEC__GHZ_1_0__NO_FPGA', chipCount: 16, nodeCount: 2 } , hxExtent: undefined }], selectedPropSyncChains: [], standaloneTokenEmbeddings: false, supportsCpuEmbeddings: false, ioFpgaCount: 1, ioFanoutFactor: 1, batchSize: 1, tokenEmbeddingsPath: undefined };
    const DECODED: ReadonlyMap<string, BuildSnapshotReading> = new Map([['file:///models/b', { ok: true, contentId: DIGEST, build: BUILD }]]);
    const dgd = aDgd();
    const desiredMaps = decideLpxGraphDeployment(observedWith(dgd, { podCliqueSet: undefined, buildSnapshots: DECODED }), config, NOW).createConfigMaps;
    const [lpuMap] = desiredMaps;
    const stored = (name: string, owner = 'lpx-uid') => ({ metadata: { name, resourceVersion: '9', ownerReferences: [{ uid: owner, controller: true }] } });
    // The requests a pass publishes for the decoded build (with its derived fields), as stored and bound by the scheduler.
    const published = decideLpxGraphDeployment(observedWith(dgd, { scalingGroups: new Map([[`${PCS}-0-lpx`, aGroup(2, 2)]]), buildSnapshots: DECODED }), config, NOW).createRequests;
    const stored_ = published.map((r) => ({ ...r, metadata: { ...r.metadata, uid: `u-${r.metadata.name}`, generation: 1, resourceVersion: '7' } }) as unknown as LpuPipelineRequest);
    const bound = stored_.map((r) => ({ ...r, status: { phase: 'bound', observedGeneration: 1 } }));
    const readyWorld = { scalingGroups: new Map([[`${PCS}-0-lpx`, aGroup(2, 2)]]), podCliques: roleCliques(2), requests: bound, buildSnapshots: DECODED };

    it('"Synchronize configuration before any scale-up": the first pass creates the LPU table with the PodCliqueSet that mounts it', () => {
      const desired = decideLpxGraphDeployment(observedWith(dgd, { podCliqueSet: undefined, buildSnapshots: DECODED }), config, NOW);
      expect(desired.createConfigMaps.map((c) => [c.metadata.name, c['data'], c['immutable']])).toEqual([[`${PCS}-lpu-${runtimeConfigMapHash(lpuMap?.['data'] as Record<string, string>).slice(0, 16)}`, { nodes_per_partition: '2', partition_ids: '0', partition_node_offsets: '0', partition_paths: 'part-0', topologies: 'URSA_V2__Q8__16C__G_96_25__KP_FEC__GHZ_1_0__NO_FPGA' }, true]]);
      const cliques = (desired.applyPodCliqueSet?.['spec'] as { template: { cliques: { name: string; spec: { podSpec: { volumes?: unknown[] } } }[] } }).template.cliques;
      expect(cliques.map((c) => [c.name, c.spec.podSpec.volumes?.at(-1)])).toEqual([['agt', { name: 'config', configMap: { name: lpuMap?.metadata.name } }], ['cond', { name: 'config', configMap: { name: lpuMap?.metadata.name } }]]);
    });

    it.each([
      { name: 'a map already stored and ours is not created again (immutable: never updated)', configMaps: new Map([[lpuMap?.metadata.name ?? '', stored(lpuMap?.metadata.name ?? '')]]), creates: [] as string[] },
      { name: 'a missing map is created in a later pass too', configMaps: new Map(), creates: [lpuMap?.metadata.name ?? ''] },
    ])('$name', ({ configMaps, creates }) => {
      expect(decideLpxGraphDeployment(observedWith(dgd, { buildSnapshots: DECODED, configMaps }), config, NOW).createConfigMaps.map((c) => c.metadata.name)).toEqual(creates);
    });

    it('"Foreign objects at the expected names are never adopted": a ConfigMap at the name that this LPXGD does not control fails Ready and nothing is written', () => {
      const desired = decideLpxGraphDeployment(observedWith(dgd, { buildSnapshots: DECODED, configMaps: new Map([[lpuMap?.metadata.name ?? '', stored(lpuMap?.metadata.name ?? '', 'someone-else')]]) }), config, NOW);
      expect(desired.status.conditions.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'Failed', message: `ConfigMap ${JSON.stringify(lpuMap?.metadata.name)} is not controlled by this LPXGraphDeployment` });
      expect([desired.applyPodCliqueSet, desired.createConfigMaps, desired.createRequests, desired.deleteConfigMaps]).toEqual([undefined, [], [], []]);
    });

    it.each([
      { name: '"Old configmaps remain available until all workloads are Ready": an obsolete owned map is deleted, with its resourceVersion, once Ready', observed: observedWith(dgd, { ...readyWorld, configMaps: new Map([[lpuMap?.metadata.name ?? '', stored(lpuMap?.metadata.name ?? '')], [`${PCS}-lpu-0000000000000000`, stored(`${PCS}-lpu-0000000000000000`)]]) }), ready: 'True', deletes: [{ name: `${PCS}-lpu-0000000000000000`, resourceVersion: '9' }] },
      { name: 'while not Ready the obsolete map is kept for the pods still mounting it', observed: observedWith(dgd, { ...readyWorld, requests: stored_, configMaps: new Map([[`${PCS}-lpu-0000000000000000`, stored(`${PCS}-lpu-0000000000000000`)]]) }), ready: 'False', deletes: [] },
      { name: 'a labelled map another owner controls is never deleted', observed: observedWith(dgd, { ...readyWorld, configMaps: new Map([[lpuMap?.metadata.name ?? '', stored(lpuMap?.metadata.name ?? '')], ['theirs', stored('theirs', 'someone-else')]]) }), ready: 'True', deletes: [] },
      { name: 'without a decoded build nothing is pruned (today\'s behaviour)', observed: observedWith(dgd, { ...readyWorld, buildSnapshots: SNAPSHOTS, requests: publishedRequests(dgd, 2).map((r) => ({ ...r, status: { phase: 'bound', observedGeneration: 1 } })), configMaps: new Map([[`${PCS}-lpu-0000000000000000`, stored(`${PCS}-lpu-0000000000000000`)]]) }), ready: 'True', deletes: [] },
    ])('$name', ({ observed, ready, deletes }) => {
      const desired = decideLpxGraphDeployment(observed, config, NOW);
      expect(desired.status.conditions.find((c) => c.type === 'Ready')?.status).toBe(ready);
      expect(desired.deleteConfigMaps).toEqual(deletes);
    });
  });

  it('is deterministic, does not throw on frozen input, and deciding again after its writes writes nothing new', () => {
    const dgd = aDgd();
    const observed = observedWith(dgd);
    const first = decideLpxGraphDeployment(Object.freeze(observed), config, NOW);
    expect(decideLpxGraphDeployment(observed, config, NOW)).toEqual(first);
    const created = first.createRequests.map((r) => ({ ...r, metadata: { ...r.metadata, uid: `u-${r.metadata.name}`, generation: 1 } }) as unknown as LpuPipelineRequest);
    const again = decideLpxGraphDeployment({ ...observed, requests: created, lpxgd: { ...observed.lpxgd, status: first.status } }, config, NOW);
    expect(again.createRequests).toEqual([]);
    expect(again.deleteRequests).toEqual([]);
    expect(again.scale).toEqual([]);
    // Only the Ready message moves on, from the publication to the readiness it now observes (lpx.md §3.2).
    expect(first.status.conditions.find((c) => c.type === 'Ready')?.message).toBe('Waiting for published LPX requests to appear in the cache');
    expect(again.status.conditions.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'Pending', message: 'insufficient scheduled replicas: scheduled=0/2' });
    const third = decideLpxGraphDeployment({ ...observed, requests: created, lpxgd: { ...observed.lpxgd, status: again.status } }, config, NOW);
    expect(third.status).toEqual(again.status);
  });
});
