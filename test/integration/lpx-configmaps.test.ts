/**
 * The LPX runtime ConfigMaps on the real API server (issue 11; upstream lpu_configmap.go and the
 * LPX controller's reconcileRuntimeResources / deleteUnusedConfigMaps; lpx.md §2.3, §5.3 steps 12
 * and 19): created immutable and owned by the LPXGD before the PodCliqueSet mounts them, a new
 * one for a new build, the old one deleted only once the LPXGD is Ready, and a foreign
 * ConfigMap at the name never adopted.
 *
 * The decoded build (`LpxBuild`) is supplied by the test on every acquired snapshot
 * (reconcileLpxWithDecodedBuild in test/support/lpx-world.ts): the Cap'n Proto decoder is not on
 * this branch. Grove's controller and the LPX scheduler do not run here: the test writes what
 * they would (the scaling group and its status, ready role cliques, `bound` receipts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DGD_KIND, DGD_V1BETA1, LPXGD_API_VERSION, LPXGD_KIND, LpxGraphDeploymentSchema, parseDgd } from '../../shared/api/index.js';
import { lpxRuntimeConfigMapNames } from '../../shared/domain/index.js';
import { createKube, type KubeObject } from '../../shared/kube/index.js';
import { createTestNamespace, testKubeConfig } from '../harness/testing.js';
import { eventually } from '../support/eventually.js';
import {
  actAsGroveRoleCliques,
  adminReconcileDeps,
  aHybridDgd,
  anLpuOnlyBuild,
  applyDgd,
  ensureGroveScalingGroup,
  lpxPcsName,
  prepareLpxBuild,
  reconcileAll,
  reconcileLpxWithDecodedBuild,
  removeLpxBuild,
  requestsOf,
  writeGroveScalingGroupStatus,
  writeReceipt,
} from '../support/lpx-world.js';

const kubeConfig = testKubeConfig();
const user = createKube(kubeConfig, { fieldManager: 'kubectl' });
const GROVE = 'grove.io/v1alpha1';
const TOPOLOGY = 'URSA_V2__Q8__16C__G_96_25__KP_FEC__GHZ_1_0__NO_FPGA';


const configMapsOf = async (namespace: string) => (await user.list('v1', 'ConfigMap', namespace)).filter((c) => c.metadata.name.includes('-lpu-'));
const readyOf = async (namespace: string, name: string) =>
  ((await user.get({ apiVersion: LPXGD_API_VERSION, kind: LPXGD_KIND, namespace, name }))?.['status'] as { conditions?: { type: string; status: string; reason: string; message: string }[] } | undefined)?.conditions?.find((c) => c.type === 'Ready');

describe('LPX runtime ConfigMaps on a real API server', () => {
  const deps = adminReconcileDeps();
  beforeAll(async () => {
    await prepareLpxBuild();
  });
  afterAll(async () => {
    await removeLpxBuild();
  });

  it('"The LPXGD owns ... the runtime ConfigMaps": created immutable and mounted; a new build gets a new map; the old one is deleted only once Ready', async () => {
    const namespace = await createTestNamespace(kubeConfig, 'lpx-configmaps');
    const name = 'configs';
    await applyDgd(aHybridDgd(namespace, name, { replicas: 1 }));
    await reconcileAll(deps, namespace, name);
    const pcsName = await lpxPcsName(namespace, name);
    const lpxgd = await user.get({ apiVersion: LPXGD_API_VERSION, kind: LPXGD_KIND, namespace, name });
    // Without a decoded build nothing changed (today's behaviour): no runtime ConfigMap.
    expect(await configMapsOf(namespace)).toEqual([]);

    // As Grove: the scaling group, available, and the role cliques ready.
    const { group, name: groupName } = await ensureGroveScalingGroup(namespace, pcsName);
    await writeGroveScalingGroupStatus(namespace, groupName, group, { replicas: 1, scheduledReplicas: 1, updatedReplicas: 1, availableReplicas: 1 });
    await actAsGroveRoleCliques(namespace, pcsName, 1);

    // Build A decoded: its LPU table is created, owned by the LPXGD, and mounted by the cliques.
    const first = await reconcileLpxWithDecodedBuild(deps, namespace, name, anLpuOnlyBuild(1));
    const nameA = first.createConfigMaps[0]?.metadata.name ?? '';
    const storedA = await eventually('the LPU table of build A stored', async () => user.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace, name: nameA }));
    expect({ immutable: storedA['immutable'], data: storedA['data'], labels: storedA.metadata.labels, owners: storedA.metadata['ownerReferences'] }).toEqual({
      immutable: true,
      data: { nodes_per_partition: '2', partition_ids: '0', partition_node_offsets: '0', partition_paths: 'part-0', topologies: TOPOLOGY },
      labels: { 'lpx.nvidia.com/deployment-uid': lpxgd?.metadata.uid },
      owners: [{ apiVersion: LPXGD_API_VERSION, kind: LPXGD_KIND, name, uid: lpxgd?.metadata.uid, controller: true, blockOwnerDeletion: true }],
    });
    expect(nameA).toMatch(new RegExp(`^${pcsName}-lpu-[0-9a-f]{16}$`));
    const pcs = await eventually('the PodCliqueSet mounting build A', async () => {
      const current = await user.get({ apiVersion: GROVE, kind: 'PodCliqueSet', namespace, name: pcsName });
      return JSON.stringify(current).includes(nameA) ? current : undefined;
    });
    const cliques = (pcs['spec'] as { template: { cliques: { name: string; annotations: Record<string, string>; spec: { podSpec: { volumes: { name: string; configMap?: { name: string } }[] } } }[] } }).template.cliques;
    expect(cliques.map((c) => [c.name, c.spec.podSpec.volumes.find((v) => v.name === 'config')?.configMap?.name, c.annotations['nvidia.com/extra-resources-hash']?.slice(0, 16)])).toEqual([
      ['agt', nameA, nameA.slice(-16)],
      ['cond', nameA, nameA.slice(-16)],
    ]);

    // Build B (recompiled, same geometry) decoded, before the scheduler bound anything: a second map; A stays for its pods.
    const second = await reconcileLpxWithDecodedBuild(deps, namespace, name, anLpuOnlyBuild(1, 'rebuilt-'));
    const nameB = second.createConfigMaps[0]?.metadata.name ?? '';
    expect(nameB).not.toBe(nameA);
    await eventually('both maps stored while not Ready', async () => {
      const names = (await configMapsOf(namespace)).map((c) => c.metadata.name).sort();
      return names.length === 2 ? names : undefined;
    });
    expect((await readyOf(namespace, name))?.status).toBe('False');

    // As the scheduler: every request bound. The next pass is Ready and deletes map A only.
    for (const request of await requestsOf(namespace)) await writeReceipt(request, 'bound');
    await eventually('Ready, and the obsolete map of build A deleted', async () => {
      await reconcileLpxWithDecodedBuild(deps, namespace, name, anLpuOnlyBuild(1, 'rebuilt-'));
      const names = (await configMapsOf(namespace)).map((c) => c.metadata.name);
      return (await readyOf(namespace, name))?.status === 'True' && names.length === 1 ? names : undefined;
    }, 60_000, 250).then((names) => expect(names).toEqual([nameB]));
  });

  it('"Foreign objects at the expected names are never adopted": a ConfigMap at the name that the LPXGD does not control fails Ready and is left as it is', async () => {
    const namespace = await createTestNamespace(kubeConfig, 'lpx-configmaps-foreign');
    const name = 'foreign';
    await applyDgd(aHybridDgd(namespace, name, { replicas: 1 }));
    await reconcileAll(deps, namespace, name);
    // The name the decision renders for this build, taken by someone else first.
    const lpxgd = LpxGraphDeploymentSchema.parse(await user.get({ apiVersion: LPXGD_API_VERSION, kind: LPXGD_KIND, namespace, name }));
    const dgd = parseDgd(await user.get({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace, name }));
    if (!dgd.ok) throw new Error('stored DGD does not parse');
    const snapshots = new Map([[`file://${await prepareLpxBuild()}`, { ok: true as const, contentId: 'sha256:any', build: anLpuOnlyBuild(3) }]]);
    const [taken = ''] = lpxRuntimeConfigMapNames(lpxgd, dgd.dgd, undefined, snapshots);
    expect(taken).toMatch(new RegExp(`^${await lpxPcsName(namespace, name)}-lpu-[0-9a-f]{16}$`));
    const foreign: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: taken, namespace }, data: { mine: 'yes' } };
    await user.create(foreign);

    await reconcileLpxWithDecodedBuild(deps, namespace, name, anLpuOnlyBuild(3));
    const ready = await eventually('Ready=False naming the foreign ConfigMap', async () => {
      const condition = await readyOf(namespace, name);
      return condition?.reason === 'Failed' ? condition : undefined;
    });
    expect(ready).toMatchObject({ status: 'False', reason: 'Failed', message: `ConfigMap ${JSON.stringify(taken)} is not controlled by this LPXGraphDeployment` });
    const after = await user.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace, name: taken });
    expect({ data: after?.['data'], owners: after?.metadata['ownerReferences'] }).toEqual({ data: { mine: 'yes' }, owners: undefined });
  });
});
