/**
 * The build-derived LpuPipelineRequest spec (shared/domain/lpx/derive.ts, issue 11) against the
 * real kube-apiserver with the test-only LpuPipelineRequest CRD (test/crds, written from
 * upstream-notes/lpx.md §3.1): what the decision renders is stored as is (no field pruned, no
 * type refused), so `isPipelineRequestMatching` keeps a stored request whose build is unchanged
 * and hands over one whose build changed (lpx.md §3.2 "Matching").
 *
 * The manifest decoder is another change (issue 11, lpx-manifest); the builds here are
 * normalized `LpxBuild` values with the geometry of upstream's fixtures, given to the pure
 * decision directly. The requests are created without their PodCliqueSet owner reference: the
 * PodCliqueSet does not exist here and the garbage collector (which runs) would remove them.
 */
import { describe, expect, it } from 'vitest';
import { LPR_API_VERSION, LPR_KIND, type Dgd, type LpuPipelineRequest } from '../../shared/api/index.js';
import { deriveLpxWorkloads, desiredPipelineRequests, isPipelineRequestMatching, resolveLpxWorkloads, type LpxBuild, type LpxBuildPartition, type RenderedObject } from '../../shared/domain/index.js';
import { createKube, type Kube } from '../../shared/kube/index.js';
import { createTestNamespace, testKubeConfig } from '../harness/testing.js';
import { eventually } from '../support/eventually.js';

const kubeConfig = testKubeConfig();
const user: Kube = createKube(kubeConfig, { fieldManager: 'dynamo-reconcile' });
const ID = { namespace: '', name: 'llama', uid: '11111111-1111-4111-8111-111111111111' };
// The conductor of a hybrid build is the Cyborg GPU runtime and holds a GPU (cyborg-gpu.ts).
const gpu = (name: string) => (name === 'conductor' ? { resources: { limits: { 'nvidia.com/gpu': 1 } } } : {});
const role = (name: string) => ({ name, podTemplate: { spec: { containers: [{ name: 'main', image: `lpx-${name}:1`, ...gpu(name) }] } } });

const XT = (chips: number) => `URSA_V2__Q8__${chips}C__G_96_25__KP_FEC__GHZ_1_0__NO_FPGA`;
const xt = (id: number, chips: number): LpxBuildPartition => ({ sourcePartitionId: id, partPath: `part-${id}`, topology: { raw: XT(chips), chipCount: chips, nodeCount: Math.max(1, chips / 8) }, hxExtent: undefined });
const hx = (id: number, extent: number[]): LpxBuildPartition => ({ sourcePartitionId: id, partPath: `part-${id}`, topology: { raw: 'HX', chipCount: 16, nodeCount: (extent[1] ?? 1) * (extent[2] ?? 1) * (extent[3] ?? 1) }, hxExtent: extent });
const base = { path: 'file:///models/b', selectedPropSyncChains: [], standaloneTokenEmbeddings: false, supportsCpuEmbeddings: false, ioFpgaCount: 1, ioFanoutFactor: 1, batchSize: 1, tokenEmbeddingsPath: undefined };
/** Upstream local_partitions_test.go's hybrid build: chain 7-8 and an independent partition 11. */
const xtHybrid: LpxBuild = { ...base, family: 'xt8888', compilationMode: 'lpx', partitions: [xt(7, 8), xt(8, 64), xt(11, 64)], selectedPropSyncChains: [[7, 8]] };
/** Upstream TestProjectModelHXProjectsSelectedPropSyncChain: two [16,1,1,1] partitions, chain 1-2. */
const hxLpuOnly: LpxBuild = { ...base, family: 'hx16x8x2x3', compilationMode: 'lpuOnly', partitions: [hx(1, [16, 1, 1, 1]), hx(2, [16, 1, 1, 1])], selectedPropSyncChains: [[1, 2]] };

function requestsFor(namespace: string, build: LpxBuild): RenderedObject[] {
  const dgd: Dgd = {
    apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', metadata: { name: 'llama', namespace },
    spec: { components: [{ name: 'engine', type: 'lpx', replicas: 1, lpx: { buildId: 'b' }, roles: [role('agent'), role('conductor')] }] as Dgd['spec']['components'] },
  };
  const derived = deriveLpxWorkloads(dgd, resolveLpxWorkloads(dgd), new Map([['engine', { build, buildId: 'b' }]]));
  if (!derived.ok) throw new Error(derived.error);
  return desiredPipelineRequests({ ...ID, namespace }, 'llama', derived.value, new Map([['lpx', 1]]), { name: 'llama-ab12', uid: 'pcs-uid' }).map((r) => r.object);
}

describe('build-derived pipeline requests on a real API server (issue 11)', () => {
  it.each([
    { name: 'an XT hybrid build: xtShape partitions, an xt8888Gap connector, the Cyborg clique', build: xtHybrid, other: hxLpuOnly },
    { name: 'an HX build: extents, an hxPropSyncV1 connector of 16 links, the V3 allocation metadata', build: hxLpuOnly, other: xtHybrid },
  ])('$name: stored unchanged, matching its intent; another build does not match', async ({ build, other }) => {
    const namespace = await createTestNamespace(kubeConfig, 'lpx-derived');
    const [desired] = requestsFor(namespace, build);
    if (desired === undefined) throw new Error('no request rendered');
    const { ownerReferences: _owners, ...metadata } = desired.metadata as Record<string, unknown>;
    await user.create({ ...desired, metadata } as RenderedObject);
    const stored = await eventually('the stored request', async () => {
      const got = await user.get({ apiVersion: LPR_API_VERSION, kind: LPR_KIND, namespace, name: String(desired.metadata['name']) });
      return got === undefined ? undefined : (got as unknown as LpuPipelineRequest);
    }, 60_000);
    expect(stored.spec).toEqual(desired['spec']);
    expect(isPipelineRequestMatching(stored, desired)).toBe(true);
    const [changed] = requestsFor(namespace, other);
    if (changed === undefined) throw new Error('no request rendered');
    expect(isPipelineRequestMatching(stored, changed)).toBe(false);
  }, 120_000);
});
