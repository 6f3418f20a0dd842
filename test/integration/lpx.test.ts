/**
 * LPX against the real kube-apiserver (issue 11), with our LPXGraphDeployment CRD (infra/lpx),
 * the test-only LpuPipelineRequest CRD (test/crds, written from upstream-notes/lpx.md §3.1) and
 * Grove's CRDs, PodGang included. The real `handle` of the reconcile function's DGD and LPXGD
 * routes and of the cleanup function's deadline route run against it.
 *
 * Grove's controller and the LPX scheduler cannot run here: the test writes what they would
 * write. As Grove it creates the PodCliqueScalingGroups (from the PCS template seed) and role
 * PodCliques and writes their status (and the PodCliqueSet's updateProgress during a Coherent
 * rollout); as the LPX scheduler it writes receipts (`status.phase`, `observedGeneration`) on
 * the pipeline requests; as an external scaler it writes a scaling group's `spec.replicas`.
 * kube-controller-manager's garbage collector does run, so the foreground deletion of a
 * replaced PodCliqueSet really waits for its requests and scaling groups.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DGD_KIND, DGD_V1BETA1, FIELD_MANAGER_CLEANUP, LPR_API_VERSION, LPR_KIND, LPXGD_API_VERSION, LPXGD_KIND, parseDgd } from '../../shared/api/index.js';
import { buildSnapshotContentId, lpxPodCliqueSetName, podCliqueSetName } from '../../shared/domain/index.js';
import { createKube, createListSnapshot, type Kube, type KubeObject } from '../../shared/kube/index.js';
import { defaultConfig, type HandlerDeps, type KubeEvent } from '../../shared/runtime/index.js';
import { depsWithKube as reconcileDeps } from '../../functions/reconcile/index.js';
import { handle as handleDgd, type ReconcileDeps } from '../../functions/reconcile/dgd.js';
import { handle as handleLpx } from '../../functions/reconcile/lpx.js';
import { MODEL_STATUS, createModelExpressClient } from '../../functions/reconcile/model-express.js';
import { checkLpxStartup } from '../../functions/reconcile/lpx-startup.js';
import { depsWithKube as cleanupDeps, type CleanupDeps } from '../../functions/cleanup/index.js';
import { handle as handleDeadlines, load as loadDeadlines } from '../../functions/cleanup/lpx-deadlines.js';
import { createTestNamespace, testKubeConfig } from '../harness/testing.js';
import { eventually } from '../support/eventually.js';
import { fileChunks, startTestModelExpress } from '../support/model-express.js';
import { anXtLpuOnlyFixture, encodeGbuildManifestV2 } from '../support/gbuild-manifest.js';
import { actAsGroveRoleCliques, ensureGroveScalingGroup, eventFor, groveScalingGroupOwner, lpxPcsName, ordinalOf, reconcileAll, requestsOf, writeGroveScalingGroupStatus, writeReceipt } from '../support/lpx-world.js';

const log = pino({ level: process.env['DYNAMO_FN_TEST_VERBOSE'] === '1' ? 'debug' : 'silent' });
const kubeConfig = testKubeConfig();
/** The user (kubectl), Grove, the LPX scheduler and an external scaler, each with its own field manager. */
const user: Kube = createKube(kubeConfig, { fieldManager: 'kubectl' });
const grove: Kube = createKube(kubeConfig, { fieldManager: 'grove-operator' });
const scheduler: Kube = createKube(kubeConfig, { fieldManager: 'lpx-scheduler' });

const GROVE = 'grove.io/v1alpha1';
const DEADLINE_SECONDS = 60;
/**
 * The compiled builds the LPX components name: directories on this machine's filesystem, read by
 * the reconcile function as upstream's operator reads `file://` builds (lpx-build.ts). The
 * manifest is a real Cap'n Proto compiler manifest (test/support/gbuild-manifest.ts): fenced,
 * hashed and decoded.
 */
let buildsRoot = '';
let BUILD = '';
const MANIFEST_BYTES = encodeGbuildManifestV2(anXtLpuOnlyFixture());

function baseDeps(lpxEnabled: boolean, now: () => Date = () => new Date()): HandlerDeps {
  return { log, now, config: defaultConfig({ lpxEnabled, kubeconfigPath: process.env['KUBECONFIG'] }) };
}
function reconcileWith(lpxEnabled: boolean, now: () => Date = () => new Date()): ReconcileDeps {
  return reconcileDeps(baseDeps(lpxEnabled, now), createKube(kubeConfig, { fieldManager: 'dynamo-reconcile' }));
}
function cleanupAt(now: () => Date, lpxEnabled = true): CleanupDeps {
  return cleanupDeps(baseDeps(lpxEnabled, now), createKube(kubeConfig, { fieldManager: FIELD_MANAGER_CLEANUP }));
}
const template = (image: string) => ({ spec: { containers: [{ name: 'main', image }] } });
const lpxRoles = [
  { name: 'agent', podTemplate: template('nvcr.io/nvidia/ai-dynamo/lpx-agent:1.6.0') },
  { name: 'conductor', podTemplate: template('nvcr.io/nvidia/ai-dynamo/lpx-conductor:1.6.0') },
];

/** A hybrid graph: an ordinary frontend and one LPX engine (agent + conductor). */
function aHybridDgd(namespace: string, name: string, engine: Record<string, unknown> = {}, annotations: Record<string, string> = {}): Record<string, unknown> {
  return {
    apiVersion: DGD_V1BETA1,
    kind: DGD_KIND,
    metadata: { name, namespace, annotations },
    spec: {
      restart: { strategy: { type: 'Parallel' } },
      components: [
        { name: 'frontend', type: 'frontend', replicas: 1, podTemplate: template('nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.6.0') },
        { name: 'engine', type: 'lpx', lpx: { buildId: BUILD }, roles: lpxRoles, ...engine },
      ],
    },
  };
}

async function applyDgd(object: Record<string, unknown>): Promise<KubeObject> {
  return user.apply(object as Parameters<Kube['apply']>[0], { force: true });
}
async function getDgd(namespace: string, name: string): Promise<KubeObject | undefined> {
  return user.get({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace, name });
}
async function getLpxgd(namespace: string, name: string): Promise<KubeObject | undefined> {
  return user.get({ apiVersion: LPXGD_API_VERSION, kind: LPXGD_KIND, namespace, name });
}
function conditionOf(object: KubeObject | undefined, type: string): { status: string; reason: string; message: string } | undefined {
  return ((object?.['status'] as { conditions?: { type: string; status: string; reason: string; message: string }[] } | undefined)?.conditions ?? []).find((c) => c.type === type);
}
/** As Grove: creates the scaling group `<pcs>-0-lpx` from the PCS template (seed replicas) and writes its status. */
async function actAsGroveScalingGroup(namespace: string, pcsName: string, status: Record<string, number> | 'observed-not-ready'): Promise<KubeObject> {
  const { group, name } = await ensureGroveScalingGroup(namespace, pcsName);
  return writeGroveScalingGroupStatus(namespace, name, group, status);
}

/** As Grove: the frontend's PodClique, ready. */
async function actAsGroveFrontendReady(namespace: string, dgdName: string): Promise<void> {
  const dgd = parseDgd(await getDgd(namespace, dgdName));
  if (!dgd.ok) throw new Error('stored DGD does not parse');
  const pcsName = podCliqueSetName(dgdName, dgd.dgd.spec.components.filter((c) => c.type !== 'lpx'));
  const name = `${pcsName}-0-frontend`;
  const owner = await grove.get({ apiVersion: GROVE, kind: 'PodCliqueSet', namespace, name: pcsName });
  if (owner === undefined) throw new Error(`no PodCliqueSet ${pcsName}`);
  const clique = await grove.apply({
    apiVersion: GROVE,
    kind: 'PodClique',
    metadata: { name, namespace, labels: { 'app.kubernetes.io/part-of': pcsName }, ownerReferences: [{ apiVersion: GROVE, kind: 'PodCliqueSet', name: pcsName, uid: owner.metadata.uid, controller: true, blockOwnerDeletion: true }] },
    spec: { roleName: 'frontend', replicas: 1, podSpec: { containers: [{ name: 'main', image: 'x' }] } },
  });
  await grove.applyStatus(
    { apiVersion: GROVE, kind: 'PodClique', metadata: { name, namespace }, status: { observedGeneration: clique.metadata.generation, replicas: 1, readyReplicas: 1, updatedReplicas: 1, scheduledReplicas: 1, scheduleGatedReplicas: 0 } },
    { force: true },
  );
  // Grove acknowledges the ordinary PodCliqueSet's generation too; until it does, the DGD reads
  // its ready cliques as still "updating" (dgd-reference "Coherent capacity and disruption").
  const pcs = await user.get({ apiVersion: GROVE, kind: 'PodCliqueSet', namespace, name: pcsName });
  await grove.applyStatus({ apiVersion: GROVE, kind: 'PodCliqueSet', metadata: { name: pcsName, namespace }, status: { observedGeneration: pcs?.metadata.generation } }, { force: true });
}

describe('LPX on a real API server (issue 11)', () => {
  let enabled: ReconcileDeps;
  beforeAll(async () => {
    enabled = reconcileWith(true);
    buildsRoot = await mkdtemp(path.join(tmpdir(), 'lpx-builds-'));
    BUILD = path.join(buildsRoot, 'llama-lpx');
    await mkdir(path.join(BUILD, 'part-0'), { recursive: true });
    await writeFile(path.join(BUILD, 'manifest.v2.capnp.bin'), MANIFEST_BYTES);
    await writeFile(path.join(BUILD, 'part-0', 'chip-0.gas'), 'gas');
  });
  afterAll(async () => {
    await rm(buildsRoot, { recursive: true, force: true });
  });

  it('the lpx.enabled start-up check passes with the LpuPipelineRequest and PodGang APIs installed', async () => {
    await expect(checkLpxStartup(enabled)).resolves.toBeUndefined();
  });

  it('a hybrid graph renders two PodCliqueSets and becomes Ready only when both parts are', async () => {
    const namespace = await createTestNamespace(kubeConfig, 'lpx-hybrid');
    const name = 'hybrid';
    await applyDgd(aHybridDgd(namespace, name, { replicas: 2 }));
    await reconcileAll(enabled, namespace, name);

    // Two PodCliqueSets: the ordinary one owned by the DGD, the LPX one owned by the LPXGD,
    // which the DGD controls (lpx.md §2.3 ownership chain).
    const dgd = await getDgd(namespace, name);
    const lpxgd = await getLpxgd(namespace, name);
    expect(lpxgd?.metadata['ownerReferences']).toEqual([{ apiVersion: DGD_V1BETA1, kind: DGD_KIND, name, uid: dgd?.metadata.uid, controller: true, blockOwnerDeletion: true }]);
    const pcsList = await user.list(GROVE, 'PodCliqueSet', namespace);
    expect(pcsList.map((p) => p.metadata.name).sort()).toEqual([await lpxPcsName(namespace, name), name].sort());
    const lpxPcs = pcsList.find((p) => p.metadata.name !== name);
    expect(lpxPcs?.metadata['ownerReferences']).toEqual([{ apiVersion: LPXGD_API_VERSION, kind: LPXGD_KIND, name, uid: lpxgd?.metadata.uid, controller: true, blockOwnerDeletion: true }]);
    const ordinaryPcs = pcsList.find((p) => p.metadata.name === name);
    const cliqueNames = (p: KubeObject | undefined) => (p?.['spec'] as { template: { cliques: { name: string }[] } }).template.cliques.map((c) => c.name);
    expect(cliqueNames(ordinaryPcs)).toEqual(['frontend']);
    expect(cliqueNames(lpxPcs)).toEqual(['agt', 'cond']);
    // The serving Service selects the conductor pods and is owned by the LPXGD (lpx.md §2.3).
    const serving = await user.get({ apiVersion: 'v1', kind: 'Service', namespace, name: `${name}-engine` });
    expect((serving?.['spec'] as { selector: Record<string, string> }).selector).toMatchObject({ 'lpx.nvidia.com/serving': 'true', 'nvidia.com/dynamo-component': 'engine' });
    expect((serving?.metadata['ownerReferences'] as { kind: string }[])[0]?.kind).toBe(LPXGD_KIND);

    await actAsGroveFrontendReady(namespace, name);
    const pcsName = await lpxPcsName(namespace, name);
    await actAsGroveScalingGroup(namespace, pcsName, 'observed-not-ready');
    await handleLpx(eventFor(LPXGD_API_VERSION, LPXGD_KIND, namespace, name), enabled);

    // Explicit replicas 2: the scaling group is scaled from its seed (minAvailable 1) and one
    // request per replica is published (lpx.md §3.2: one per workload, model and ordinal).
    const group = await user.get({ apiVersion: GROVE, kind: 'PodCliqueScalingGroup', namespace, name: `${pcsName}-0-lpx` });
    expect((group?.['spec'] as { replicas: number }).replicas).toBe(2);
    const requests = await requestsOf(namespace);
    expect(requests.map(ordinalOf).sort()).toEqual([0, 1]);
    expect(requests.every((r) => (r.metadata['ownerReferences'] as { kind: string; controller: boolean; blockOwnerDeletion: boolean }[])[0]?.kind === 'PodCliqueSet')).toBe(true);
    expect(conditionOf(await getDgd(namespace, name), 'Ready')?.status).toBe('False');

    // The ordinary part is ready, the scheduler binds both requests, but Grove has not made the
    // engine available yet: still not Ready.
    for (const request of requests) await writeReceipt(request, 'bound');
    await handleLpx(eventFor(LPXGD_API_VERSION, LPXGD_KIND, namespace, name), enabled);
    const notYet = conditionOf(await getDgd(namespace, name), 'Ready');
    expect(notYet?.status).toBe('False');

    await actAsGroveScalingGroup(namespace, pcsName, { replicas: 2, scheduledReplicas: 2, updatedReplicas: 2, availableReplicas: 2 });
    await handleLpx(eventFor(LPXGD_API_VERSION, LPXGD_KIND, namespace, name), enabled);
    // The scaling group reports two available engines, but their role cliques are not there yet.
    expect(conditionOf(await getDgd(namespace, name), 'Ready')).toMatchObject({ status: 'False', message: 'Waiting for LPX role agt' });

    await actAsGroveRoleCliques(namespace, pcsName, 2);
    await handleLpx(eventFor(LPXGD_API_VERSION, LPXGD_KIND, namespace, name), enabled);
    const ready = await getDgd(namespace, name);
    expect(conditionOf(ready, 'Ready')).toMatchObject({ status: 'True', reason: 'all_resources_are_ready' });
    expect((ready?.['status'] as { components: Record<string, unknown> }).components['engine']).toMatchObject({ componentKind: 'PodCliqueScalingGroup', replicas: 2, availableReplicas: 2 });

    // A receipt going back to pending takes the whole DGD out of Ready, with the scheduler's message.
    const first = (await requestsOf(namespace))[0];
    if (first === undefined) throw new Error('no request');
    await writeReceipt(first, 'binding');
    await handleLpx(eventFor(LPXGD_API_VERSION, LPXGD_KIND, namespace, name), enabled);
    expect(conditionOf(await getDgd(namespace, name), 'Ready')).toMatchObject({ status: 'False', reason: 'Pending', message: 'LPX scheduler is binding the planned workload Pods' });
  });

  it('"AcquireBuildSnapshot ... Require the supported binary compiler manifest": without manifest.v2.capnp.bin nothing LPX is rendered; with it, its snapshot digest is on the Agents and every request; a recompiled build\'s requests are replaced only after Grove rolls their engine ("An immutable mismatch waits for the Grove engine to roll")', async () => {
    const namespace = await createTestNamespace(kubeConfig, 'lpx-build');
    const name = 'compiled';
    const build = path.join(buildsRoot, 'uncompiled');
    await mkdir(build, { recursive: true });
    await writeFile(path.join(build, 'manifest.json'), '{}');
    await applyDgd(aHybridDgd(namespace, name, { replicas: 1, lpx: { buildId: build } }));
    await reconcileAll(enabled, namespace, name);

    // A permanent failure: reported on the child and the DGD, nothing LPX rendered, the event answered.
    const message = `acquiring immutable LPX build snapshot for model "engine" build "${build}": immutable build snapshot is inconsistent: immutable build "file://${build}": missing build contract: require manifest.v2.capnp.bin or deployment.v1.capnp.bin`;
    expect(conditionOf(await getLpxgd(namespace, name), 'Ready')).toMatchObject({ status: 'False', reason: 'Failed', message });
    expect(conditionOf(await getDgd(namespace, name), 'Ready')).toMatchObject({ status: 'False', message });
    expect((await user.list(GROVE, 'PodCliqueSet', namespace)).map((p) => p.metadata.name)).toEqual([name]);
    expect(await requestsOf(namespace)).toEqual([]);

    // The compiler writes the manifest: the next reconcile (an event or the resync) proceeds.
    await writeFile(path.join(build, 'manifest.v2.capnp.bin'), MANIFEST_BYTES);
    await handleLpx(eventFor(LPXGD_API_VERSION, LPXGD_KIND, namespace, name), enabled);
    const digest = buildSnapshotContentId(['manifest.json', 'manifest.v2.capnp.bin'], MANIFEST_BYTES);
    const pcsName = await lpxPcsName(namespace, name);
    const pcs = await user.get({ apiVersion: GROVE, kind: 'PodCliqueSet', namespace, name: pcsName });
    const cliques = (pcs?.['spec'] as { template: { cliques: { name: string; annotations?: Record<string, string> }[] } }).template.cliques;
    expect(cliques.map((c) => [c.name, c.annotations?.['scheduling.lpu.nvidia.com/compiler-snapshot-digest']])).toEqual([['agt', digest], ['cond', undefined]]);
    await actAsGroveScalingGroup(namespace, pcsName, 'observed-not-ready');
    await handleLpx(eventFor(LPXGD_API_VERSION, LPXGD_KIND, namespace, name), enabled);
    const requests = await requestsOf(namespace);
    expect(requests.map((r) => r.metadata.annotations?.['scheduling.lpu.nvidia.com/compiler-snapshot-digest'])).toEqual([digest]);
    expect(conditionOf(await getLpxgd(namespace, name), 'Ready')).toMatchObject({ status: 'False', reason: 'Pending', message: 'Waiting for published LPX requests to appear in the cache' });
    await handleLpx(eventFor(LPXGD_API_VERSION, LPXGD_KIND, namespace, name), enabled);
    expect((await requestsOf(namespace)).map((r) => r.metadata.resourceVersion)).toEqual(requests.map((r) => r.metadata.resourceVersion));

    // The build is recompiled in place: the Agents' template moves to the new digest at once, but
    // the request waits until Grove has rolled its engine replica (lpx.md §3.2 "An immutable
    // mismatch waits for the Grove engine to roll").
    const rebuiltBytes = encodeGbuildManifestV2(anXtLpuOnlyFixture({ program: { batchSize: 16, supportsCpuEmbeddings: false, standaloneTokenEmbeddings: false } }));
    await writeFile(path.join(build, 'manifest.v2.capnp.bin'), rebuiltBytes);
    const rebuilt = buildSnapshotContentId(['manifest.json', 'manifest.v2.capnp.bin'], rebuiltBytes);
    await handleLpx(eventFor(LPXGD_API_VERSION, LPXGD_KIND, namespace, name), enabled);
    const rolledPcs = await user.get({ apiVersion: GROVE, kind: 'PodCliqueSet', namespace, name: pcsName });
    const templates = (rolledPcs?.['spec'] as { template: { cliques: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> }[] } }).template.cliques;
    expect(templates.find((c) => c.name === 'agt')?.annotations?.['scheduling.lpu.nvidia.com/compiler-snapshot-digest']).toBe(rebuilt);
    expect((await requestsOf(namespace)).map((r) => r.metadata.annotations?.['scheduling.lpu.nvidia.com/compiler-snapshot-digest'])).toEqual([digest]);
    expect(conditionOf(await getLpxgd(namespace, name), 'Ready')).toMatchObject({ status: 'False', reason: 'Pending', message: 'Waiting for Grove replicas and their LPX requests to reach the desired build' });

    // As Grove: replica 0's role cliques rolled to the new template. The old request is retired,
    // and once it is gone, published again for the new build.
    const ownerReferences = await groveScalingGroupOwner(namespace, pcsName);
    for (const template of templates) {
      await grove.apply({
        apiVersion: GROVE,
        kind: 'PodClique',
        metadata: { name: `${pcsName}-0-lpx-0-${template.name}`, namespace, labels: { ...(template.labels ?? {}), 'app.kubernetes.io/part-of': pcsName }, annotations: template.annotations ?? {}, ownerReferences },
        spec: { roleName: template.name, replicas: 1, podSpec: { containers: [{ name: 'main', image: 'x' }] } },
      });
    }
    await handleLpx(eventFor(LPXGD_API_VERSION, LPXGD_KIND, namespace, name), enabled);
    await eventually('the old request is gone', async () => ((await requestsOf(namespace)).length === 0 ? true : undefined));
    await handleLpx(eventFor(LPXGD_API_VERSION, LPXGD_KIND, namespace, name), enabled);
    expect((await requestsOf(namespace)).map((r) => r.metadata.annotations?.['scheduling.lpu.nvidia.com/compiler-snapshot-digest'])).toEqual([rebuilt]);
  });

  it('a manifest that does not normalize is an acquisition failure with upstream\'s text (normalizeBuildSnapshot): Ready=False, Failed, nothing LPX rendered; a corrected manifest proceeds', async () => {
    const namespace = await createTestNamespace(kubeConfig, 'lpx-manifest');
    const name = 'miscompiled';
    const build = path.join(buildsRoot, 'miscompiled');
    await mkdir(build, { recursive: true });
    // One 8-chip XT partition occupies one node; the manifest declares three.
    await writeFile(path.join(build, 'manifest.v2.capnp.bin'), encodeGbuildManifestV2(anXtLpuOnlyFixture({ numLpuNodes: 3 })));
    await applyDgd(aHybridDgd(namespace, name, { replicas: 1, lpx: { buildId: build } }));
    await reconcileAll(enabled, namespace, name);

    const message = `acquiring immutable LPX build snapshot for model "engine" build "${build}": manifest.v2.capnp.bin LPU partitions use 1 LPU nodes, want deployment.numLpuNodes 3`;
    expect(conditionOf(await getLpxgd(namespace, name), 'Ready')).toMatchObject({ status: 'False', reason: 'Failed', message });
    expect(conditionOf(await getDgd(namespace, name), 'Ready')).toMatchObject({ status: 'False', message });
    expect((await user.list(GROVE, 'PodCliqueSet', namespace)).map((p) => p.metadata.name)).toEqual([name]);
    expect(await requestsOf(namespace)).toEqual([]);

    // Bytes that are no Cap'n Proto message at all: upstream's "parsing manifest.v2.capnp.bin".
    await writeFile(path.join(build, 'manifest.v2.capnp.bin'), 'compiled LPX manifest v2');
    await handleLpx(eventFor(LPXGD_API_VERSION, LPXGD_KIND, namespace, name), enabled);
    expect(conditionOf(await getLpxgd(namespace, name), 'Ready')).toMatchObject({ status: 'False', reason: 'Failed', message: expect.stringMatching(/^acquiring immutable LPX build snapshot for model "engine" build ".*": parsing manifest\.v2\.capnp\.bin: /) });

    await writeFile(path.join(build, 'manifest.v2.capnp.bin'), encodeGbuildManifestV2(anXtLpuOnlyFixture()));
    await handleLpx(eventFor(LPXGD_API_VERSION, LPXGD_KIND, namespace, name), enabled);
    const pcsName = await lpxPcsName(namespace, name);
    expect((await user.list(GROVE, 'PodCliqueSet', namespace)).map((p) => p.metadata.name).sort()).toEqual([name, pcsName].sort());
    // The decoded build reaches the rendering: an LPU-only XT build's Agents run workload mode v2LpuOnly, one pod for 8 chips.
    const pcs = await user.get({ apiVersion: GROVE, kind: 'PodCliqueSet', namespace, name: pcsName });
    const agent = (pcs?.['spec'] as { template: { cliques: { name: string; annotations?: Record<string, string>; spec: { replicas: number } }[] } }).template.cliques.find((c) => c.name === 'agt');
    expect([agent?.annotations?.['scheduling.lpu.nvidia.com/workload-mode'], agent?.spec.replicas]).toEqual(['v2LpuOnly', 1]);
  });

  it('a gs:// build is downloaded through Model Express before anything LPX is rendered ("Waiting for model downloads to complete"), then read through it; a fresh download is not checked again', async () => {
    // Model Express is a real gRPC server on loopback: it answers DOWNLOADING until the test says otherwise.
    const manifest = encodeGbuildManifestV2(anXtLpuOnlyFixture());
    const build = 'gs://models-bucket/llama/b1';
    let isDownloaded = false;
    const mx = await startTestModelExpress({
      download: (modelName) => [{ modelName, status: isDownloaded ? MODEL_STATUS.DOWNLOADED : MODEL_STATUS.DOWNLOADING, message: '' }],
      files: () => ['manifest.v2.capnp.bin', 'part-0/chip-0.gas'],
      chunks: () => fileChunks(manifest, 1024),
    });
    const client = await createModelExpressClient(mx.url);
    try {
      const withMx: ReconcileDeps = { ...enabled, modelExpress: client };
      const namespace = await createTestNamespace(kubeConfig, 'lpx-gs');
      const name = 'remote';
      await applyDgd(aHybridDgd(namespace, name, { replicas: 1, lpx: { buildId: build } }));
      await reconcileAll(withMx, namespace, name);
      const waiting = await getLpxgd(namespace, name);
      expect(conditionOf(waiting, 'Ready')).toMatchObject({ status: 'False', reason: 'Pending', message: `Waiting for model downloads to complete: ${build}` });
      expect((waiting?.['status'] as { modelDownload?: unknown }).modelDownload).toEqual({ builds: [] });
      expect((await user.list(GROVE, 'PodCliqueSet', namespace)).map((p) => p.metadata.name)).toEqual([name]);

      isDownloaded = true;
      await handleLpx(eventFor(LPXGD_API_VERSION, LPXGD_KIND, namespace, name), withMx);
      const downloaded = await getLpxgd(namespace, name);
      expect((downloaded?.['status'] as { modelDownload?: { builds: string[]; lastCheckedAt: string } }).modelDownload).toMatchObject({ builds: [build], lastCheckedAt: expect.stringMatching(/Z$/) });
      const pcs = await user.get({ apiVersion: GROVE, kind: 'PodCliqueSet', namespace, name: await lpxPcsName(namespace, name) });
      const agent = (pcs?.['spec'] as { template: { cliques: { name: string; annotations?: Record<string, string> }[] } }).template.cliques.find((c) => c.name === 'agt');
      expect(agent?.annotations?.['scheduling.lpu.nvidia.com/compiler-snapshot-digest']).toBe(buildSnapshotContentId(['manifest.v2.capnp.bin', 'part-0/chip-0.gas'], manifest));

      // "Builds already in a fresh status.modelDownload.builds are reused without re-checking".
      const checks = () => mx.requests.filter((r) => r.rpc === 'EnsureModelDownloaded').length;
      const before = checks();
      await handleLpx(eventFor(LPXGD_API_VERSION, LPXGD_KIND, namespace, name), withMx);
      expect(checks()).toBe(before);
    } finally {
      client.close();
      await mx.stop();
    }
  });

  /** A graph whose engine has `replicas` (or omitted), a 60 s deadline, receipts bound on `bound` ordinals only. */
  async function graphWithExpiringRequests(prefix: string, engine: Record<string, unknown>, annotations: Record<string, string>, liveReplicas: number, boundOrdinals: readonly number[]) {
    const namespace = await createTestNamespace(kubeConfig, prefix);
    const name = 'deadline';
    await applyDgd(aHybridDgd(namespace, name, { lpx: { buildId: BUILD, scheduling: { attemptDeadlineSeconds: DEADLINE_SECONDS } }, ...engine }, annotations));
    await reconcileAll(enabled, namespace, name);
    const pcsName = await lpxPcsName(namespace, name);
    if (engine['replicas'] === undefined) {
      // As the external scaler: capacity on the scaling group's spec (the operator never writes it).
      const created = await actAsGroveScalingGroup(namespace, pcsName, 'observed-not-ready');
      await grove.replace({ ...created, spec: { ...(created['spec'] as object), replicas: liveReplicas } });
    } else {
      await actAsGroveScalingGroup(namespace, pcsName, 'observed-not-ready');
    }
    // As Grove: the PodCliqueSet's configuration is acknowledged (Coherent scaling waits for it, dgd-reference).
    const pcs = await user.get({ apiVersion: GROVE, kind: 'PodCliqueSet', namespace, name: pcsName });
    await grove.applyStatus({ apiVersion: GROVE, kind: 'PodCliqueSet', metadata: { name: pcsName, namespace }, status: { observedGeneration: pcs?.metadata.generation, availableReplicas: 0, updatedReplicas: 0 } }, { force: true });
    await handleLpx(eventFor(LPXGD_API_VERSION, LPXGD_KIND, namespace, name), enabled);
    const requests = await requestsOf(namespace);
    expect(requests.map(ordinalOf).sort()).toEqual(Array.from({ length: liveReplicas }, (_, i) => i));
    for (const request of requests) if (boundOrdinals.includes(ordinalOf(request))) await writeReceipt(request, 'bound');
    return { namespace, name, pcsName };
  }
  const afterDeadline = () => new Date(Date.now() + (DEADLINE_SECONDS + 60) * 1000);
  const groupReplicas = async (namespace: string, pcsName: string) =>
    ((await user.get({ apiVersion: GROVE, kind: 'PodCliqueScalingGroup', namespace, name: `${pcsName}-0-lpx` }))?.['spec'] as { replicas: number }).replicas;

  it('RollingRecreate, explicit replicas: expired trailing requests are recorded, capacity reduced, then the requests deleted', async () => {
    const { namespace, name, pcsName } = await graphWithExpiringRequests('lpx-rr', { replicas: 3 }, {}, 3, [0]);
    // Before the deadline nothing happens.
    await handleDeadlines(eventFor(LPXGD_API_VERSION, LPXGD_KIND, namespace, name), cleanupAt(() => new Date()));
    expect(conditionOf(await getLpxgd(namespace, name), 'SchedulingFailed')).toBeUndefined();

    await handleDeadlines(eventFor(LPXGD_API_VERSION, LPXGD_KIND, namespace, name), cleanupAt(afterDeadline));
    expect(conditionOf(await getLpxgd(namespace, name), 'SchedulingFailed')).toMatchObject({ status: 'True', reason: 'LPXSchedulingDeadlineExceeded', message: 'An LPX request exceeded its scheduling deadline' });
    expect(await groupReplicas(namespace, pcsName)).toBe(1);
    // Ordinals 1 and 2 expired (no receipt); 0 is bound. Only the trailing suffix goes.
    await eventually('expired requests deleted', async () => ((await requestsOf(namespace)).map(ordinalOf).join() === '0' ? true : undefined));

    // Publication stays blocked for this generation and the graph reports the failure.
    await handleLpx(eventFor(LPXGD_API_VERSION, LPXGD_KIND, namespace, name), enabled);
    expect((await requestsOf(namespace)).map(ordinalOf)).toEqual([0]);
    expect(await groupReplicas(namespace, pcsName)).toBe(1);
    expect(conditionOf(await getLpxgd(namespace, name), 'Ready')).toMatchObject({ status: 'False', reason: 'Failed', message: 'An LPX request exceeded its scheduling deadline' });
    const dgd = await getDgd(namespace, name);
    expect(conditionOf(dgd, 'Ready')).toMatchObject({ status: 'False', reason: 'Failed', message: 'An LPX request exceeded its scheduling deadline' });
    expect((dgd?.['status'] as { state: string }).state).toBe('failed');
  });

  it('lpx.md §3.4 "Skipped: current-generation bound": a resync whose snapshot was listed before the scheduler bound the requests never records SchedulingFailed for them once the deadline has passed (a durable failure is decided from the API server, not from the snapshot)', async () => {
    const { namespace, name, pcsName } = await graphWithExpiringRequests('lpx-stale', { replicas: 3 }, {}, 3, [0]);
    const key = { apiVersion: LPXGD_API_VERSION, kind: LPXGD_KIND, namespace, name };
    // The resync lists every kind it reads first (here while ordinals 1 and 2 are still pending)...
    const snapshot = createListSnapshot(user);
    expect((await loadDeadlines(cleanupAt(afterDeadline), key, snapshot))?.observed.requests.filter((r) => r.status?.phase === 'bound')).toHaveLength(1);
    // ...then the LPX scheduler binds them, before their deadline...
    for (const request of await requestsOf(namespace)) if (ordinalOf(request) !== 0) await writeReceipt(request, 'bound');
    // ...and the resync reaches this LPXGraphDeployment after the deadline.
    await handleDeadlines(eventFor(LPXGD_API_VERSION, LPXGD_KIND, namespace, name), { ...cleanupAt(afterDeadline), snapshot });
    expect(conditionOf(await getLpxgd(namespace, name), 'SchedulingFailed')).toBeUndefined();
    expect(await groupReplicas(namespace, pcsName)).toBe(3);
    expect((await requestsOf(namespace)).map(ordinalOf).sort()).toEqual([0, 1, 2]);
  });

  it('"Own what you read ... the same rule everywhere a function reads what a Job or a user could also write" (issue 20 item 1): a PodCliqueScalingGroup of the group\'s name that the PodCliqueSet does not control is never scaled by the deadline cleanup', async () => {
    const { namespace, name, pcsName } = await graphWithExpiringRequests('lpx-foreign-group', { replicas: 3 }, {}, 3, [0]);
    const group = await user.get({ apiVersion: GROVE, kind: 'PodCliqueScalingGroup', namespace, name: `${pcsName}-0-lpx` });
    if (group === undefined) throw new Error('no scaling group');
    // Someone else's object under Grove's name and label: no controller reference to the PodCliqueSet.
    await user.replace({ ...group, metadata: { ...group.metadata, ownerReferences: [] } });
    await handleDeadlines(eventFor(LPXGD_API_VERSION, LPXGD_KIND, namespace, name), cleanupAt(afterDeadline)).catch(() => undefined);
    expect(await groupReplicas(namespace, pcsName)).toBe(3);
  });

  it('"Own what you read ... the same rule everywhere a function reads what a Job or a user could also write" (issue 20 item 1): a PodCliqueScalingGroup of the group\'s name that the PodCliqueSet does not control is never scaled by the reconcile, and no request is published for its replicas', async () => {
    const namespace = await createTestNamespace(kubeConfig, 'lpx-planted-group');
    const name = 'planted';
    await applyDgd(aHybridDgd(namespace, name, { replicas: 2 }));
    await reconcileAll(enabled, namespace, name);
    const pcsName = await lpxPcsName(namespace, name);
    const pcs = await user.get({ apiVersion: GROVE, kind: 'PodCliqueSet', namespace, name: pcsName });
    const groupConfig = (pcs?.['spec'] as { template: { podCliqueScalingGroups: { minAvailable: number; cliqueNames: string[] }[] } } | undefined)?.template.podCliqueScalingGroups[0];
    if (pcs === undefined || groupConfig === undefined) throw new Error('no LPX PodCliqueSet');
    // Someone else's object under Grove's name and label, before Grove makes its own: no controller reference, 5 available engines.
    const planted = await user.apply({
      apiVersion: GROVE,
      kind: 'PodCliqueScalingGroup',
      metadata: { name: `${pcsName}-0-lpx`, namespace, labels: { 'app.kubernetes.io/part-of': pcsName } },
      spec: { replicas: 5, minAvailable: groupConfig.minAvailable, cliqueNames: groupConfig.cliqueNames },
    });
    await user.applyStatus({ apiVersion: GROVE, kind: 'PodCliqueScalingGroup', metadata: { name: `${pcsName}-0-lpx`, namespace }, status: { observedGeneration: planted.metadata.generation, replicas: 5, scheduledReplicas: 5, updatedReplicas: 5, availableReplicas: 5 } }, { force: true });
    await grove.applyStatus({ apiVersion: GROVE, kind: 'PodCliqueSet', metadata: { name: pcsName, namespace }, status: { observedGeneration: pcs.metadata.generation, availableReplicas: 0, updatedReplicas: 0 } }, { force: true });
    await handleLpx(eventFor(LPXGD_API_VERSION, LPXGD_KIND, namespace, name), enabled);
    expect(await groupReplicas(namespace, pcsName)).toBe(5);
    expect(await requestsOf(namespace)).toEqual([]);
  });

  it('Coherent, explicit replicas: cleanup waits until capacity can be reduced (ScalingDeferred), then proceeds', async () => {
    const { namespace, name, pcsName } = await graphWithExpiringRequests('lpx-coh', { replicas: 2 }, { 'nvidia.com/grove-update-strategy': 'Coherent' }, 2, [0]);
    const pcs = await user.get({ apiVersion: GROVE, kind: 'PodCliqueSet', namespace, name: pcsName });
    // As Grove: a Coherent update is in progress on the LPX PodCliqueSet.
    await grove.applyStatus(
      { apiVersion: GROVE, kind: 'PodCliqueSet', metadata: { name: pcsName, namespace }, status: { observedGeneration: pcs?.metadata.generation, availableReplicas: 0, updatedReplicas: 0, updateProgress: { updateStartedAt: new Date().toISOString() } } },
      { force: true },
    );
    await handleDeadlines(eventFor(LPXGD_API_VERSION, LPXGD_KIND, namespace, name), cleanupAt(afterDeadline));
    expect(conditionOf(await getLpxgd(namespace, name), 'SchedulingFailed')?.status).toBe('True');
    expect(await groupReplicas(namespace, pcsName)).toBe(2);
    expect((await requestsOf(namespace)).map(ordinalOf).sort()).toEqual([0, 1]);
    await handleLpx(eventFor(LPXGD_API_VERSION, LPXGD_KIND, namespace, name), reconcileWith(true, afterDeadline));
    expect((await requestsOf(namespace)).map(ordinalOf).sort()).toEqual([0, 1]);
    expect(conditionOf(await getLpxgd(namespace, name), 'ScalingDeferred')).toMatchObject({ status: 'True', reason: 'GroveUpdatePending' });

    // The rollout completes: capacity can be reduced, so the expired replica is cleaned up.
    await grove.applyStatus(
      { apiVersion: GROVE, kind: 'PodCliqueSet', metadata: { name: pcsName, namespace }, status: { observedGeneration: pcs?.metadata.generation, availableReplicas: 0, updatedReplicas: 0, updateProgress: { updateStartedAt: new Date().toISOString(), updateEndedAt: new Date().toISOString() } } },
      { force: true },
    );
    await handleDeadlines(eventFor(LPXGD_API_VERSION, LPXGD_KIND, namespace, name), cleanupAt(afterDeadline));
    expect(await groupReplicas(namespace, pcsName)).toBe(1);
    await eventually('expired request deleted', async () => ((await requestsOf(namespace)).map(ordinalOf).join() === '0' ? true : undefined));
  });

  it('Coherent, omitted replicas: expired requests are cleaned up during the rollout and the external capacity is never written', async () => {
    const { namespace, name, pcsName } = await graphWithExpiringRequests('lpx-coh-ext', {}, { 'nvidia.com/grove-update-strategy': 'Coherent' }, 3, [0, 1]);
    const pcs = await user.get({ apiVersion: GROVE, kind: 'PodCliqueSet', namespace, name: pcsName });
    await grove.applyStatus(
      { apiVersion: GROVE, kind: 'PodCliqueSet', metadata: { name: pcsName, namespace }, status: { observedGeneration: pcs?.metadata.generation, availableReplicas: 0, updatedReplicas: 0, updateProgress: { updateStartedAt: new Date().toISOString() } } },
      { force: true },
    );
    await handleDeadlines(eventFor(LPXGD_API_VERSION, LPXGD_KIND, namespace, name), cleanupAt(afterDeadline));
    await eventually('expired request deleted', async () => ((await requestsOf(namespace)).map(ordinalOf).sort().join() === '0,1' ? true : undefined));
    expect(await groupReplicas(namespace, pcsName)).toBe(3);
  });

  it('with lpx.enabled=false nothing LPX is created, changed or deleted, and the DGD reports the disabled status', async () => {
    const namespace = await createTestNamespace(kubeConfig, 'lpx-off');
    const disabled = reconcileWith(false);
    // A new LPX DGD: only its status is written.
    await applyDgd(aHybridDgd(namespace, 'fresh', { replicas: 1 }));
    await handleDgd(eventFor(DGD_V1BETA1, DGD_KIND, namespace, 'fresh'), disabled);
    expect(conditionOf(await getDgd(namespace, 'fresh'), 'Ready')).toMatchObject({ status: 'False', reason: 'LPXDisabled' });
    expect(await getLpxgd(namespace, 'fresh')).toBeUndefined();
    expect(await user.list(GROVE, 'PodCliqueSet', namespace)).toEqual([]);

    // An existing LPX workload (made while enabled) is left exactly as it is.
    await applyDgd(aHybridDgd(namespace, 'existing', { replicas: 1 }));
    await reconcileAll(enabled, namespace, 'existing');
    const pcsName = await lpxPcsName(namespace, 'existing');
    await actAsGroveScalingGroup(namespace, pcsName, 'observed-not-ready');
    await handleLpx(eventFor(LPXGD_API_VERSION, LPXGD_KIND, namespace, 'existing'), enabled);
    const versions = async () => {
      const objects = [
        await getLpxgd(namespace, 'existing'),
        ...(await user.list(GROVE, 'PodCliqueSet', namespace)),
        ...(await user.list(GROVE, 'PodCliqueScalingGroup', namespace)),
        ...(await requestsOf(namespace)),
      ];
      return objects.map((o) => `${o?.kind}/${o?.metadata.name}@${o?.metadata.resourceVersion}`).sort();
    };
    const before = await versions();
    expect(before.filter((v) => v.startsWith(`${LPR_KIND}/`))).toHaveLength(1);
    await applyDgd(aHybridDgd(namespace, 'existing', { replicas: 2 }));
    await handleDgd(eventFor(DGD_V1BETA1, DGD_KIND, namespace, 'existing'), disabled);
    await handleLpx(eventFor(LPXGD_API_VERSION, LPXGD_KIND, namespace, 'existing'), disabled);
    await handleDeadlines(eventFor(LPXGD_API_VERSION, LPXGD_KIND, namespace, 'existing'), cleanupAt(afterDeadline, false));
    expect(await versions()).toEqual(before);
    expect(conditionOf(await getDgd(namespace, 'existing'), 'Ready')).toMatchObject({ status: 'False', reason: 'LPXDisabled' });
  });

  it('a whole PodCliqueSet replacement keeps the externally managed engine count (beyond upstream: it fell back to one)', async () => {
    const namespace = await createTestNamespace(kubeConfig, 'lpx-replace');
    const name = 'external';
    await applyDgd(aHybridDgd(namespace, name));
    await reconcileAll(enabled, namespace, name);
    const pcsName = await lpxPcsName(namespace, name);
    const seeded = await actAsGroveScalingGroup(namespace, pcsName, 'observed-not-ready');
    expect((seeded['spec'] as { replicas: number }).replicas).toBe(1);
    // The external scaler sets three engines.
    await grove.replace({ ...seeded, spec: { ...(seeded['spec'] as object), replicas: 3 } });
    await handleLpx(eventFor(LPXGD_API_VERSION, LPXGD_KIND, namespace, name), enabled);
    expect((await requestsOf(namespace)).map(ordinalOf).sort()).toEqual([0, 1, 2]);
    const oldPcs = await user.get({ apiVersion: GROVE, kind: 'PodCliqueSet', namespace, name: pcsName });

    // An incompatible layout (a new minAvailable) replaces the whole PodCliqueSet (lpx.md §6.2).
    await applyDgd(aHybridDgd(namespace, name, { minAvailable: 2 }));
    await reconcileAll(enabled, namespace, name);
    // Foreground deletion: the garbage collector removes the requests and the scaling group first.
    await eventually(
      'the old PodCliqueSet replaced',
      async () => {
        await handleLpx(eventFor(LPXGD_API_VERSION, LPXGD_KIND, namespace, name), enabled);
        const current = await user.get({ apiVersion: GROVE, kind: 'PodCliqueSet', namespace, name: pcsName });
        return current !== undefined && current.metadata.uid !== oldPcs?.metadata.uid ? current : undefined;
      },
      60_000,
      500,
    );
    const newPcs = await user.get({ apiVersion: GROVE, kind: 'PodCliqueSet', namespace, name: pcsName });
    const groupConfig = (newPcs?.['spec'] as { template: { podCliqueScalingGroups: { replicas: number; minAvailable: number }[] } }).template.podCliqueScalingGroups[0];
    expect(groupConfig).toMatchObject({ replicas: 3, minAvailable: 2 });

    // Grove creates the new scaling group from that seed; the engine count is three again.
    await actAsGroveScalingGroup(namespace, pcsName, 'observed-not-ready');
    await handleLpx(eventFor(LPXGD_API_VERSION, LPXGD_KIND, namespace, name), enabled);
    expect(await groupReplicas(namespace, pcsName)).toBe(3);
    expect((await requestsOf(namespace)).map(ordinalOf).sort()).toEqual([0, 1, 2]);
    expect(((await getLpxgd(namespace, name))?.['status'] as { components: Record<string, { retainedReplicas?: number }> }).components['engine']?.retainedReplicas).toBe(3);
  });
});
