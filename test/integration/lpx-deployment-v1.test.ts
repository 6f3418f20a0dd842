/**
 * Upstream's split build contract on the real API server (issue 11; upstream
 * model_deployment_v1.go, build_snapshot.go): a build that publishes `deployment.v1.capnp.bin`
 * (and its opaque execution contract) instead of `manifest.v2.capnp.bin` is selected, fenced,
 * decoded and normalized by the reconcile function, and reaches the Agents and the pipeline
 * requests with its content digest; a build publishing both contracts is refused as ambiguous.
 *
 * The build is a directory on this machine, read as upstream's operator reads `file://` builds.
 * Grove's controller and the LPX scheduler do not run here: the test writes what Grove would
 * (the scaling group from the PodCliqueSet's seed, and its status) through test/support/lpx-world.ts.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LPXGD_API_VERSION, LPXGD_KIND } from '../../shared/api/index.js';
import { buildSnapshotContentId } from '../../shared/domain/index.js';
import { createKube, type KubeObject } from '../../shared/kube/index.js';
import { handle as handleLpx } from '../../functions/reconcile/lpx.js';
import { createTestNamespace, testKubeConfig } from '../harness/testing.js';
import { eventually } from '../support/eventually.js';
import { EXECUTION_V1_BYTES, EXECUTION_V1_FILE, anXtLpuOnlyFixture, deploymentV1Of, encodeGbuildDeploymentV1, encodeGbuildManifestV2 } from '../support/gbuild-manifest.js';
import { actAsGroveScalingGroup, adminReconcileDeps, aHybridDgd, applyDgd, eventFor, lpxPcsName, prepareLpxBuild, reconcileAll, removeLpxBuild, requestsOf } from '../support/lpx-world.js';

const kubeConfig = testKubeConfig();
const user = createKube(kubeConfig, { fieldManager: 'kubectl' });
const GROVE = 'grove.io/v1alpha1';
const DEPLOYMENT = 'deployment.v1.capnp.bin';
const DIGEST = 'scheduling.lpu.nvidia.com/compiler-snapshot-digest';
/** The split contract of the LPU-only XT build the other LPX tests deploy as a manifest (one 8-chip partition at `part-0`). */
const DEPLOYMENT_BYTES = encodeGbuildDeploymentV1(deploymentV1Of(anXtLpuOnlyFixture()));

const readyOf = async (namespace: string, name: string) =>
  ((await user.get({ apiVersion: LPXGD_API_VERSION, kind: LPXGD_KIND, namespace, name }))?.['status'] as { conditions?: { type: string; status: string; reason: string; message: string }[] } | undefined)?.conditions?.find((c) => c.type === 'Ready');
const agentOf = (pcs: KubeObject | undefined) =>
  (pcs?.['spec'] as { template: { cliques: { name: string; annotations?: Record<string, string>; spec: { replicas: number } }[] } } | undefined)?.template.cliques.find((c) => c.name === 'agt');

describe('the deployment.v1 build contract on a real API server', () => {
  const deps = adminReconcileDeps();
  let root = '';
  let build = '';
  beforeAll(async () => {
    // lpx-world's graph names a build it prepared; this file's engine names its own split build instead.
    await prepareLpxBuild();
    root = await mkdtemp(path.join(tmpdir(), 'lpx-deployment-v1-'));
    build = path.join(root, 'llama-lpx-split');
    await mkdir(path.join(build, 'part-0'), { recursive: true });
    await writeFile(path.join(build, DEPLOYMENT), DEPLOYMENT_BYTES);
    await writeFile(path.join(build, EXECUTION_V1_FILE), EXECUTION_V1_BYTES);
    await writeFile(path.join(build, 'part-0', 'chip-0.gas'), 'gas');
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
    await removeLpxBuild();
  });

  it('"Acquire and normalize exactly the scheduler contract": a deployment.v1 build reaches the Agents and the requests with its content digest; publishing manifest.v2 beside it is "ambiguous build contracts"', async () => {
    const namespace = await createTestNamespace(kubeConfig, 'lpx-deployment-v1');
    const name = 'split';
    await applyDgd(aHybridDgd(namespace, name, { replicas: 1, lpx: { buildId: build } }));
    await reconcileAll(deps, namespace, name);

    // The identity binds the whole inventory and the selected contract's bytes under its own name.
    const digest = buildSnapshotContentId([DEPLOYMENT, EXECUTION_V1_FILE, 'part-0/chip-0.gas'], DEPLOYMENT_BYTES, DEPLOYMENT);
    const pcsName = await lpxPcsName(namespace, name);
    const agent = await eventually('the LPX PodCliqueSet with the decoded build', async () => agentOf(await user.get({ apiVersion: GROVE, kind: 'PodCliqueSet', namespace, name: pcsName })));
    // Decoded, not only hashed: the LPU-only XT build's Agents run workload mode v2LpuOnly, one pod for 8 chips.
    expect([agent.annotations?.[DIGEST], agent.annotations?.['scheduling.lpu.nvidia.com/workload-mode'], agent.spec.replicas]).toEqual([digest, 'v2LpuOnly', 1]);

    // As Grove: the scaling group from the seed; the next pass publishes the engine's request with the same digest.
    await actAsGroveScalingGroup(namespace, pcsName);
    const requests = await eventually('the pipeline request of the engine replica', async () => {
      await handleLpx(eventFor(LPXGD_API_VERSION, LPXGD_KIND, namespace, name), deps);
      const listed = await requestsOf(namespace);
      return listed.length === 1 ? listed : undefined;
    }, 60_000, 250);
    expect(requests.map((r) => r.metadata.annotations?.[DIGEST])).toEqual([digest]);

    // The legacy manifest published beside the split contract: neither is chosen; the PodCliqueSet keeps the acquired build.
    await writeFile(path.join(build, 'manifest.v2.capnp.bin'), encodeGbuildManifestV2(anXtLpuOnlyFixture()));
    const message = `acquiring immutable LPX build snapshot for model "engine" build "${build}": immutable build snapshot is inconsistent: immutable build "file://${build}": ambiguous build contracts: both manifest.v2.capnp.bin and ${DEPLOYMENT}`;
    const ready = await eventually('Ready=False for the ambiguous build', async () => {
      await handleLpx(eventFor(LPXGD_API_VERSION, LPXGD_KIND, namespace, name), deps);
      const condition = await readyOf(namespace, name);
      return condition?.message === message ? condition : undefined;
    }, 60_000, 250);
    expect(ready).toMatchObject({ status: 'False', reason: 'Failed', message });
    expect(agentOf(await user.get({ apiVersion: GROVE, kind: 'PodCliqueSet', namespace, name: pcsName }))?.annotations?.[DIGEST]).toBe(digest);
  });
});
