/**
 * The LPX runtime partitions and the hybrid conductor's GPUs on the real API server (issue 11;
 * upstream `appendV2ModelProjections` "Preserve physical scheduler partitions while collapsing
 * selected chains only in LPU runtime state", `collapseSelectedPropSyncChain`,
 * `renderCyborgConfigMap`, `validateWorkloadConductor`): the reconcile function decodes a real
 * hybrid XT compiler manifest on disk (three 16-chip partitions 0, 1, 2; selected prop-sync
 * chain 1-2; test/support/gbuild-manifest.ts) and stores the runtime ConfigMaps of its collapsed
 * runtime view, while the Agents still cover every physical partition. A hybrid conductor
 * without a GPU fails the LPXGD with upstream's message and nothing LPX is rendered.
 *
 * Grove's controller and the LPX scheduler do not run here; these checks need neither (the
 * ConfigMaps are created before the PodCliqueSet, which the test reads as stored).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DGD_KIND, DGD_V1BETA1, LPXGD_API_VERSION, LPXGD_KIND } from '../../shared/api/index.js';
import { createKube, type KubeObject } from '../../shared/kube/index.js';
import { createTestNamespace, testKubeConfig } from '../harness/testing.js';
import { eventually } from '../support/eventually.js';
import { aManifestV2ContractFixture, aManifestV2LpuArtifact, encodeGbuildManifestV2, REGISTRY_TEST_TOPOLOGY_16C } from '../support/gbuild-manifest.js';
import { adminReconcileDeps, applyDgd, lpxPcsName, reconcileAll } from '../support/lpx-world.js';

const kubeConfig = testKubeConfig();
const user = createKube(kubeConfig, { fieldManager: 'kubectl' });
const GROVE = 'grove.io/v1alpha1';

let buildsRoot = '';
let buildDir = '';

const template = (image: string, resources?: Record<string, unknown>) => ({ spec: { containers: [{ name: 'main', image, ...(resources === undefined ? {} : { resources }) }] } });
function aHybridBuildDgd(namespace: string, name: string, conductorResources?: Record<string, unknown>): KubeObject {
  return {
    apiVersion: DGD_V1BETA1,
    kind: DGD_KIND,
    metadata: { name, namespace },
    spec: {
      restart: { strategy: { type: 'Parallel' } },
      components: [
        { name: 'frontend', type: 'frontend', replicas: 1, podTemplate: template('nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.6.0') },
        {
          name: 'engine',
          type: 'lpx',
          replicas: 1,
          lpx: { buildId: buildDir },
          roles: [
            { name: 'agent', podTemplate: template('nvcr.io/nvidia/ai-dynamo/lpx-agent:1.6.0') },
            { name: 'conductor', podTemplate: template('nvcr.io/nvidia/ai-dynamo/lpx-conductor:1.6.0', conductorResources) },
          ],
        },
      ],
    },
  };
}
const readyOf = async (namespace: string, name: string) =>
  ((await user.get({ apiVersion: LPXGD_API_VERSION, kind: LPXGD_KIND, namespace, name }))?.['status'] as { conditions?: { type: string; status: string; reason: string; message: string }[] } | undefined)?.conditions?.find((c) => c.type === 'Ready');
const configMapsOf = async (namespace: string, pcsName: string) => (await user.list('v1', 'ConfigMap', namespace)).filter((c) => c.metadata.name.startsWith(`${pcsName}-`));

describe('LPX runtime partitions and the hybrid conductor on a real API server', () => {
  const deps = adminReconcileDeps();
  beforeAll(async () => {
    // Upstream TestRenderCyborgConfigMapPreservesProjectedEndpoints "chain followed by endpoint",
    // three partitions: two-node (16-chip) partitions 0, 1, 2, chain 1-2, six LPU nodes.
    buildsRoot = await mkdtemp(path.join(tmpdir(), 'lpx-runtime-partitions-'));
    buildDir = path.join(buildsRoot, 'hybrid-chain');
    const ids = [0, 1, 2];
    for (const id of ids) {
      await mkdir(path.join(buildDir, `part-${id}`), { recursive: true });
      await writeFile(path.join(buildDir, `part-${id}`, 'chip-0.gas'), 'gas');
    }
    const fixture = aManifestV2ContractFixture({
      numLpuNodes: 6,
      selectedPropSyncChains: [[1, 2]],
      partitions: ids.map((id) => aManifestV2LpuArtifact(id, { path: `part-${id}`, topology: REGISTRY_TEST_TOPOLOGY_16C, numChips: 16 })),
    });
    await writeFile(path.join(buildDir, 'manifest.v2.capnp.bin'), encodeGbuildManifestV2(fixture));
  });
  afterAll(async () => {
    if (buildsRoot !== '') await rm(buildsRoot, { recursive: true, force: true });
  });

  it('"collapsed runtime partitions preserve the sum of their physical scheduler endpoints": the LPU table and lpu_servers list chain 1-2 as one partition of 4 nodes; the Agents stay 6', async () => {
    const namespace = await createTestNamespace(kubeConfig, 'lpx-runtime-partitions');
    const name = 'chain';
    await applyDgd(aHybridBuildDgd(namespace, name, { limits: { 'nvidia.com/gpu': 1 } }));
    const pcsName = await eventually('the LPX PodCliqueSet name', async () => {
      await reconcileAll(deps, namespace, name);
      return (await user.get({ apiVersion: LPXGD_API_VERSION, kind: LPXGD_KIND, namespace, name })) === undefined ? undefined : lpxPcsName(namespace, name);
    });
    const maps = await eventually('the LPU table and the Cyborg map', async () => {
      await reconcileAll(deps, namespace, name);
      const stored = await configMapsOf(namespace, pcsName);
      return stored.length === 2 ? stored : undefined;
    }, 60_000, 250);
    const byRole = Object.fromEntries(maps.map((m) => [m.metadata.name.includes('-decode-') ? 'decode' : 'lpu', m['data']]));
    expect(byRole).toEqual({
      lpu: {
        nodes_per_partition: '2\n4',
        partition_ids: '0\n1',
        partition_node_offsets: '0\n2',
        partition_paths: 'part-0\npart-1',
        topologies: `${REGISTRY_TEST_TOPOLOGY_16C}\n${REGISTRY_TEST_TOPOLOGY_16C}`,
        partition_indices: '0\n1',
        partition_models: 'default\ndefault',
      },
      // Upstream's wantOffsets for "chain followed by endpoint": [0, 2] of partitions 0 and 1-2.
      decode: { lpu_servers: 'lpx-${GROVE_PCSG_INDEX}-agt-0\nlpx-${GROVE_PCSG_INDEX}-agt-2' },
    });

    // The scheduler-facing side keeps every physical partition: 2 + 2 + 2 Agent pods.
    const agents = await eventually('the Agent clique of the stored PodCliqueSet', async () => {
      const pcs = await user.get({ apiVersion: GROVE, kind: 'PodCliqueSet', namespace, name: pcsName });
      const cliques = (pcs?.['spec'] as { template?: { cliques?: { name: string; spec: { replicas: number } }[] } } | undefined)?.template?.cliques;
      return cliques?.find((c) => c.name === 'agt');
    });
    expect(agents.spec.replicas).toBe(6);
  });

  it('"component %q conductor main container requires a declared resourceClaim or a positive nvidia.com/gpu request": a hybrid conductor without a GPU fails Ready and nothing LPX is rendered', async () => {
    const namespace = await createTestNamespace(kubeConfig, 'lpx-conductor-gpu');
    const name = 'nogpu';
    await applyDgd(aHybridBuildDgd(namespace, name));
    const ready = await eventually('Ready=False with the conductor rule', async () => {
      await reconcileAll(deps, namespace, name);
      const condition = await readyOf(namespace, name);
      return condition?.reason === 'Failed' ? condition : undefined;
    }, 60_000, 250);
    expect(ready).toMatchObject({ status: 'False', reason: 'Failed', message: expect.stringContaining('component "engine" conductor main container requires a declared resourceClaim or a positive nvidia.com/gpu request') });
    const pcsName = await lpxPcsName(namespace, name);
    expect(await user.get({ apiVersion: GROVE, kind: 'PodCliqueSet', namespace, name: pcsName })).toBeUndefined();
    expect(await configMapsOf(namespace, pcsName)).toEqual([]);
  });
});
