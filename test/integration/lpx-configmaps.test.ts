/**
 * The LPX runtime ConfigMaps on the real API server (issue 11; upstream lpu_configmap.go and the
 * LPX controller's reconcileRuntimeResources / deleteUnusedConfigMaps; lpx.md §2.3, §5.3 steps 12
 * and 19): the reconcile function decodes the real compiler manifest of the build on disk
 * (test/support/lpx-world.ts prepareLpxBuild: one 8-chip XT partition, `REGISTRY_TEST_TOPOLOGY`)
 * and creates its LPU table, immutable and owned by the LPXGD, before the PodCliqueSet mounts it;
 * a recompiled build gets a new table and the old one is deleted only once the LPXGD is Ready; a
 * foreign ConfigMap at the name is never adopted.
 *
 * The recompiled build (same geometry and snapshot, new gas dirs) is the decoded build rewritten
 * by the test (reconcileLpxRebuilt): with a real new manifest the requests' intent changes too and
 * Grove would have to roll the engine first. Grove's controller and the LPX scheduler do not run
 * here: the test writes what they would (the scaling group and its status, ready role cliques,
 * `bound` receipts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DGD_KIND, DGD_V1BETA1, LPXGD_API_VERSION, LPXGD_KIND } from '../../shared/api/index.js';
import { lpxRuntimeConfigMapNames, parseModelRegistryUrl } from '../../shared/domain/index.js';
import { createKube, type KubeObject } from '../../shared/kube/index.js';
import { handle as handleLpx, load as loadLpx } from '../../functions/reconcile/lpx.js';
import { handle as handleDgd } from '../../functions/reconcile/dgd.js';
import { createTestNamespace, testKubeConfig } from '../harness/testing.js';
import { eventually } from '../support/eventually.js';
import { REGISTRY_TEST_TOPOLOGY } from '../support/gbuild-manifest.js';
import {
  actAsGroveRoleCliques,
  adminReconcileDeps,
  aHybridDgd,
  applyDgd,
  ensureGroveScalingGroup,
  eventFor,
  lpxPcsName,
  prepareLpxBuild,
  reconcileAll,
  reconcileLpxRebuilt,
  removeLpxBuild,
  requestsOf,
  withRebuiltPartitions,
  writeGroveScalingGroupStatus,
  writeReceipt,
} from '../support/lpx-world.js';

const kubeConfig = testKubeConfig();
const user = createKube(kubeConfig, { fieldManager: 'kubectl' });
const GROVE = 'grove.io/v1alpha1';

const tablesOf = async (namespace: string, pcsName: string) => (await user.list('v1', 'ConfigMap', namespace)).filter((c) => c.metadata.name.startsWith(`${pcsName}-lpu-`)).map((c) => c.metadata.name).sort();
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

  it('"The LPXGD owns ... the runtime ConfigMaps": created immutable and mounted; a recompiled build gets a new table; the old one is deleted only once Ready', async () => {
    const namespace = await createTestNamespace(kubeConfig, 'lpx-configmaps');
    const name = 'configs';
    await applyDgd(aHybridDgd(namespace, name, { replicas: 1 }));
    await reconcileAll(deps, namespace, name);
    const pcsName = await lpxPcsName(namespace, name);
    const lpxgd = await user.get({ apiVersion: LPXGD_API_VERSION, kind: LPXGD_KIND, namespace, name });

    // The decoded build's LPU table: an XT single model, so no model columns (upstream
    // TestResolvedPartitionDataOmitsXTModelColumnsBeforeMaterialization); 8 chips, one endpoint.
    const [nameA = ''] = await eventually('the LPU table of the build', async () => {
      const names = await tablesOf(namespace, pcsName);
      return names.length === 1 ? names : undefined;
    });
    const storedA = await user.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace, name: nameA });
    expect({ immutable: storedA?.['immutable'], data: storedA?.['data'], labels: storedA?.metadata.labels, owners: storedA?.metadata['ownerReferences'] }).toEqual({
      immutable: true,
      data: { nodes_per_partition: '1', partition_ids: '0', partition_node_offsets: '0', partition_paths: 'part-0', topologies: REGISTRY_TEST_TOPOLOGY },
      labels: { 'lpx.nvidia.com/deployment-uid': lpxgd?.metadata.uid },
      owners: [{ apiVersion: LPXGD_API_VERSION, kind: LPXGD_KIND, name, uid: lpxgd?.metadata.uid, controller: true, blockOwnerDeletion: true }],
    });
    const pcs = await user.get({ apiVersion: GROVE, kind: 'PodCliqueSet', namespace, name: pcsName });
    const cliques = (pcs?.['spec'] as { template: { cliques: { name: string; annotations: Record<string, string>; spec: { podSpec: { volumes: { name: string; configMap?: { name: string } }[]; containers: { name: string; volumeMounts?: { name: string; mountPath: string }[] }[] } } }[] } }).template.cliques;
    expect(cliques.map((c) => [c.name, c.spec.podSpec.volumes.find((v) => v.name === 'config')?.configMap?.name, c.spec.podSpec.containers[0]?.volumeMounts?.find((m) => m.name === 'config')?.mountPath, c.annotations['nvidia.com/extra-resources-hash']?.slice(0, 16)])).toEqual([
      ['agt', nameA, '/configs', nameA.slice(-16)],
      ['cond', nameA, '/configs', nameA.slice(-16)],
    ]);

    // As Grove: the scaling group available, its role cliques ready.
    const { group, name: groupName } = await ensureGroveScalingGroup(namespace, pcsName);
    await writeGroveScalingGroupStatus(namespace, groupName, group, { replicas: 1, scheduledReplicas: 1, updatedReplicas: 1, availableReplicas: 1 });
    await actAsGroveRoleCliques(namespace, pcsName, 1);

    // A recompiled build before the scheduler bound anything: a second table; A stays for its pods.
    const rebuilt = await reconcileLpxRebuilt(deps, namespace, name, withRebuiltPartitions);
    const nameB = rebuilt.createConfigMaps[0]?.metadata.name ?? '';
    expect(nameB).toMatch(new RegExp(`^${pcsName}-lpu-[0-9a-f]{16}$`));
    expect(await tablesOf(namespace, pcsName)).toEqual([nameA, nameB].sort());
    expect((await readyOf(namespace, name))?.status).toBe('False');

    // As the scheduler: every request bound. A pass is Ready and deletes table A only.
    for (const request of await requestsOf(namespace)) await writeReceipt(request, 'bound');
    const after = await eventually('Ready, and the obsolete table deleted', async () => {
      await reconcileLpxRebuilt(deps, namespace, name, withRebuiltPartitions);
      const names = await tablesOf(namespace, pcsName);
      return (await readyOf(namespace, name))?.status === 'True' && names.length === 1 ? names : undefined;
    }, 60_000, 250);
    expect(after).toEqual([nameB]);
  });

  it('"Foreign objects at the expected names are never adopted": a ConfigMap at the name that the LPXGD does not control fails Ready and is left as it is', async () => {
    const namespace = await createTestNamespace(kubeConfig, 'lpx-configmaps-foreign');
    const name = 'foreign';
    await applyDgd(aHybridDgd(namespace, name, { replicas: 1 }));
    // The DGD pass creates the LPXGD; before its own pass, someone takes the table's name.
    await handleDgd(eventFor(DGD_V1BETA1, DGD_KIND, namespace, name), deps);
    const registry = parseModelRegistryUrl(undefined);
    const loaded = await loadLpx(deps, { apiVersion: LPXGD_API_VERSION, kind: LPXGD_KIND, namespace, name }, registry.ok ? registry.registry : undefined);
    if (loaded?.observed.dgd === undefined) throw new Error('no LPXGraphDeployment with its DGD');
    const [taken = ''] = lpxRuntimeConfigMapNames(loaded.observed.lpxgd, loaded.observed.dgd, undefined, loaded.observed.buildSnapshots);
    expect(taken).toMatch(new RegExp(`^${await lpxPcsName(namespace, name)}-lpu-[0-9a-f]{16}$`));
    const foreign: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: taken, namespace }, data: { mine: 'yes' } };
    await user.create(foreign);

    await handleLpx(eventFor(LPXGD_API_VERSION, LPXGD_KIND, namespace, name), deps);
    expect(await readyOf(namespace, name)).toMatchObject({ status: 'False', reason: 'Failed', message: `ConfigMap ${JSON.stringify(taken)} is not controlled by this LPXGraphDeployment` });
    const after = await user.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace, name: taken });
    expect({ data: after?.['data'], owners: after?.metadata['ownerReferences'] }).toEqual({ data: { mine: 'yes' }, owners: undefined });
    // Nothing mounting it was written: no LPX PodCliqueSet.
    expect(await user.get({ apiVersion: GROVE, kind: 'PodCliqueSet', namespace, name: await lpxPcsName(namespace, name) })).toBeUndefined();
  });
});
