/**
 * An LPX graph on the real API server for the RBAC tests (test/integration/rbac-*.test.ts):
 * a hybrid DGD (an ordinary frontend and one LPX engine of agent and conductor roles) reconciled
 * by the reconcile function's DGD and LPXGD handlers with the given dependencies (so under the
 * admin token or a ServiceAccount's), and what Grove and the LPX scheduler would write, as
 * test/integration/lpx.test.ts writes it: Grove's controller and the LPX scheduler do not run
 * here. As Grove: the scaling group `<pcs>-0-lpx` from the PodCliqueSet template's seed, its
 * status, and the PodCliqueSet's acknowledged generation; as the scheduler: receipts
 * (`status.phase`, `observedGeneration`) on pipeline requests. The compiled build the engine
 * names is a directory on this machine, as lpx.test.ts makes it ({@link prepareLpxBuild}).
 * @module
 */
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { DGD_KIND, DGD_V1BETA1, LPR_API_VERSION, LPR_KIND, LPXGD_API_VERSION, LPXGD_KIND } from '../../shared/api/index.js';
import { decideLpxGraphDeployment, lpxPodCliqueSetName, parseModelRegistryUrl, type LpxBuild, type LpxDesired } from '../../shared/domain/index.js';
import { createKube, type Kube, type KubeObject } from '../../shared/kube/index.js';
import { defaultConfig, type KubeEvent } from '../../shared/runtime/index.js';
import { depsWithKube } from '../../functions/reconcile/index.js';
import { handle as handleDgd, type ReconcileDeps } from '../../functions/reconcile/dgd.js';
import { handle as handleLpx, load as loadLpx, loadLpxConfigMaps, write as writeLpx } from '../../functions/reconcile/lpx.js';
import { testKubeConfig } from '../harness/testing.js';
import { anXtLpuOnlyFixture, encodeGbuildManifestV2 } from './gbuild-manifest.js';

const GROVE = 'grove.io/v1alpha1';
const kubeConfig = testKubeConfig();
const user: Kube = createKube(kubeConfig, { fieldManager: 'kubectl' });
const grove: Kube = createKube(kubeConfig, { fieldManager: 'grove-operator' });
const scheduler: Kube = createKube(kubeConfig, { fieldManager: 'lpx-scheduler' });

/** The reconcile function's dependencies with LPX enabled, under the admin token. */
export function adminReconcileDeps(now: () => Date = () => new Date()): ReconcileDeps {
  return depsWithKube({ log: pino({ level: 'silent' }), now, config: defaultConfig({ lpxEnabled: true }) }, createKube(kubeConfig, { fieldManager: 'dynamo-reconcile' }));
}

export function eventFor(apiVersion: string, kind: string, namespace: string, name: string): KubeEvent {
  return { id: `test-${randomUUID()}`, type: 'dev.knative.apiserver.ref.update', source: 'test', key: { apiVersion, kind, namespace, name }, object: undefined };
}

const template = (image: string) => ({ spec: { containers: [{ name: 'main', image }] } });

let buildsRoot: string | undefined;
let build: string | undefined;

/**
 * A compiled LPX build on this machine's filesystem, read by the reconcile function as upstream's
 * operator reads `file://` builds (functions/reconcile/lpx-build.ts): a real binary compiler
 * manifest (test/support/gbuild-manifest.ts, one 8-chip XT partition) and its part.
 * Out: its path, the engine's `lpx.buildId`.
 */
export async function prepareLpxBuild(): Promise<string> {
  if (build !== undefined) return build;
  buildsRoot = await mkdtemp(path.join(tmpdir(), 'rbac-lpx-builds-'));
  const dir = path.join(buildsRoot, 'llama-lpx');
  await mkdir(path.join(dir, 'part-0'), { recursive: true });
  await writeFile(path.join(dir, 'manifest.v2.capnp.bin'), encodeGbuildManifestV2(anXtLpuOnlyFixture()));
  await writeFile(path.join(dir, 'part-0', 'chip-0.gas'), 'gas');
  build = dir;
  return dir;
}

/** Removes the build {@link prepareLpxBuild} made. */
export async function removeLpxBuild(): Promise<void> {
  if (buildsRoot !== undefined) await rm(buildsRoot, { recursive: true, force: true });
  buildsRoot = undefined;
  build = undefined;
}

/**
 * A hybrid graph: an ordinary frontend and one LPX engine (agent + conductor) of the build
 * {@link prepareLpxBuild} made, `engine` merged into the engine. Throws before that build exists.
 */
export function aHybridDgd(namespace: string, name: string, engine: Record<string, unknown> = {}): KubeObject {
  if (build === undefined) throw new Error('prepareLpxBuild() first: the engine names a compiled build on disk');
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
          lpx: { buildId: build },
          roles: [
            { name: 'agent', podTemplate: template('nvcr.io/nvidia/ai-dynamo/lpx-agent:1.6.0') },
            { name: 'conductor', podTemplate: template('nvcr.io/nvidia/ai-dynamo/lpx-conductor:1.6.0') },
          ],
          ...engine,
        },
      ],
    },
  };
}

/** Applies the DGD as its user does. */
export async function applyDgd(object: KubeObject): Promise<void> {
  await user.apply(object, { force: true });
}

/** Runs the DGD reconcile, then the LPXGD reconcile (which reconciles the DGD again at its end). */
export async function reconcileAll(deps: ReconcileDeps, namespace: string, name: string): Promise<void> {
  await handleDgd(eventFor(DGD_V1BETA1, DGD_KIND, namespace, name), deps);
  await handleLpx(eventFor(LPXGD_API_VERSION, LPXGD_KIND, namespace, name), deps);
}

/** The LPX PodCliqueSet's name, from the LPXGD's uid. */
export async function lpxPcsName(namespace: string, name: string): Promise<string> {
  const lpxgd = await user.get({ apiVersion: LPXGD_API_VERSION, kind: LPXGD_KIND, namespace, name });
  return lpxPodCliqueSetName({ namespace, name, uid: lpxgd?.metadata.uid ?? '' });
}

/** A pipeline request's replica ordinal. */
export function ordinalOf(request: KubeObject): number {
  return (request['spec'] as { materializationTarget: { podCliqueScalingGroupRef: { replicaIndex: number } } }).materializationTarget.podCliqueScalingGroupRef.replicaIndex;
}

/**
 * As Grove: the scaling group `<pcs>-0-<group>` of the LPX PodCliqueSet, created from the
 * PodCliqueSet template (seed replicas, Grove's labels and controller reference) when missing.
 * Out: the group as stored, its name, and the PodCliqueSet it was read from.
 */
export async function ensureGroveScalingGroup(namespace: string, pcsName: string): Promise<{ group: KubeObject; name: string; pcs: KubeObject }> {
  const pcs = await user.get({ apiVersion: GROVE, kind: 'PodCliqueSet', namespace, name: pcsName });
  if (pcs === undefined) throw new Error(`no PodCliqueSet ${pcsName}`);
  const groupConfig = (pcs['spec'] as { template: { podCliqueScalingGroups: { name: string; replicas: number; minAvailable: number; cliqueNames: string[] }[] } }).template.podCliqueScalingGroups[0];
  if (groupConfig === undefined) throw new Error('no scaling group in the LPX PodCliqueSet');
  const name = `${pcsName}-0-${groupConfig.name}`;
  const group =
    (await grove.get({ apiVersion: GROVE, kind: 'PodCliqueScalingGroup', namespace, name })) ??
    (await grove.apply({
      apiVersion: GROVE,
      kind: 'PodCliqueScalingGroup',
      metadata: {
        name,
        namespace,
        labels: { 'app.kubernetes.io/part-of': pcsName, 'app.kubernetes.io/managed-by': 'grove-operator' },
        ownerReferences: [{ apiVersion: GROVE, kind: 'PodCliqueSet', name: pcsName, uid: pcs.metadata.uid, controller: true, blockOwnerDeletion: true }],
      },
      spec: { replicas: groupConfig.replicas, minAvailable: groupConfig.minAvailable, cliqueNames: groupConfig.cliqueNames },
    }));
  return { group, name, pcs };
}

/** As Grove: the scaling group's status, `counts`, or observed but not ready (its replicas, none scheduled, updated or available). */
export async function writeGroveScalingGroupStatus(namespace: string, name: string, group: KubeObject, counts: Record<string, number> | 'observed-not-ready'): Promise<KubeObject> {
  const replicas = (group['spec'] as { replicas: number }).replicas;
  const status = counts === 'observed-not-ready' ? { replicas, scheduledReplicas: 0, updatedReplicas: 0, availableReplicas: 0 } : counts;
  return grove.applyStatus({ apiVersion: GROVE, kind: 'PodCliqueScalingGroup', metadata: { name, namespace }, status: { observedGeneration: group.metadata.generation, ...status } }, { force: true });
}

/**
 * As Grove: creates the scaling group `<pcs>-0-lpx` when missing ({@link ensureGroveScalingGroup}),
 * writes its status as observed but not ready, and acknowledges the PodCliqueSet's generation
 * (Coherent scaling waits for it, dgd-reference).
 */
export async function actAsGroveScalingGroup(namespace: string, pcsName: string): Promise<KubeObject> {
  const { group, name, pcs } = await ensureGroveScalingGroup(namespace, pcsName);
  await grove.applyStatus({ apiVersion: GROVE, kind: 'PodCliqueSet', metadata: { name: pcsName, namespace }, status: { observedGeneration: pcs.metadata.generation, availableReplicas: 0, updatedReplicas: 0 } }, { force: true });
  return writeGroveScalingGroupStatus(namespace, name, group, 'observed-not-ready');
}

/** As the LPX scheduler: a receipt for the request's current generation. */
export async function writeReceipt(request: KubeObject, phase: string): Promise<void> {
  await scheduler.applyStatus(
    { apiVersion: LPR_API_VERSION, kind: LPR_KIND, metadata: { name: request.metadata.name, namespace: request.metadata.namespace ?? '' }, status: { phase, observedGeneration: request.metadata.generation } },
    { force: true },
  );
}

/** The namespace's pipeline requests (admin token). */
export function requestsOf(namespace: string): Promise<KubeObject[]> {
  return user.list(LPR_API_VERSION, LPR_KIND, namespace);
}

/**
 * A graph whose engine has `engine` (explicit `replicas`) and a `deadlineSeconds` scheduling
 * deadline, reconciled with `deps` (admin by default) until one request per replica is
 * published; receipts `bound` on `boundOrdinals` only (as lpx.test.ts's graphWithExpiringRequests).
 */
export async function lpxGraphWithExpiringRequests(
  namespace: string,
  name: string,
  engine: Record<string, unknown>,
  deadlineSeconds: number,
  boundOrdinals: readonly number[],
  deps: ReconcileDeps = adminReconcileDeps(),
): Promise<{ readonly pcsName: string }> {
  await applyDgd(aHybridDgd(namespace, name, { lpx: { buildId: await prepareLpxBuild(), scheduling: { attemptDeadlineSeconds: deadlineSeconds } }, ...engine }));
  await reconcileAll(deps, namespace, name);
  const pcsName = await lpxPcsName(namespace, name);
  await actAsGroveScalingGroup(namespace, pcsName);
  await handleLpx(eventFor(LPXGD_API_VERSION, LPXGD_KIND, namespace, name), deps);
  for (const request of await requestsOf(namespace)) if (boundOrdinals.includes(ordinalOf(request))) await writeReceipt(request, 'bound');
  return { pcsName };
}

/** As Grove: the owner references of a role clique of the scaling group `<pcs>-0-lpx` (Grove makes the scaling group its controller). */
export async function groveScalingGroupOwner(namespace: string, pcsName: string): Promise<Record<string, unknown>[]> {
  const name = `${pcsName}-0-lpx`;
  const group = await grove.get({ apiVersion: GROVE, kind: 'PodCliqueScalingGroup', namespace, name });
  if (group === undefined) throw new Error(`no PodCliqueScalingGroup ${name}`);
  return [{ apiVersion: GROVE, kind: 'PodCliqueScalingGroup', name, uid: group.metadata.uid, controller: true, blockOwnerDeletion: true }];
}

/** As Grove: the role cliques `agt` and `cond` of each scaling-group replica (controlled by the scaling group), with all pods ready. */
export async function actAsGroveRoleCliques(namespace: string, pcsName: string, replicas: number): Promise<void> {
  const ownerReferences = await groveScalingGroupOwner(namespace, pcsName);
  for (let i = 0; i < replicas; i += 1) {
    for (const role of ['agt', 'cond']) {
      const name = `${pcsName}-0-lpx-${i}-${role}`;
      const clique = await grove.apply({
        apiVersion: GROVE,
        kind: 'PodClique',
        metadata: { name, namespace, labels: { 'app.kubernetes.io/part-of': pcsName }, ownerReferences },
        spec: { roleName: role, replicas: 1, podSpec: { containers: [{ name: 'main', image: 'x' }] } },
      });
      await grove.applyStatus(
        { apiVersion: GROVE, kind: 'PodClique', metadata: { name, namespace }, status: { observedGeneration: clique.metadata.generation, replicas: 1, readyReplicas: 1, updatedReplicas: 1, scheduledReplicas: 1, scheduleGatedReplicas: 0 } },
        { force: true },
      );
    }
  }
}

/**
 * The LPXGD reconciled as functions/reconcile/lpx.ts's handle does (load, decide, write, again
 * while the PodCliqueSet was first written), with every decoded build replaced by
 * `rebuild(build)`: a recompiled build of the same geometry and compiler snapshot (new gas dirs),
 * so a new runtime table without a new pipeline-request intent, which real manifests alone
 * cannot give without Grove rolling the engine. The runtime ConfigMaps are read by the
 * function's own loadLpxConfigMaps. Out: the last pass's decision.
 */
export async function reconcileLpxRebuilt(deps: ReconcileDeps, namespace: string, name: string, rebuild: (build: LpxBuild) => LpxBuild): Promise<LpxDesired> {
  const key = { apiVersion: LPXGD_API_VERSION, kind: LPXGD_KIND, namespace, name };
  const registry = parseModelRegistryUrl(deps.config.lpxModelRegistryUrl);
  if (!registry.ok) throw new Error(registry.error);
  let desired: LpxDesired | undefined;
  for (let pass = 0; pass < 3; pass += 1) {
    const loaded = await loadLpx(deps, key, registry.registry);
    if (loaded === undefined || loaded.observed.dgd === undefined) throw new Error(`no LPXGraphDeployment ${namespace}/${name} with its DGD`);
    const buildSnapshots = new Map([...loaded.observed.buildSnapshots].map(([url, reading]) => [url, reading.ok && reading.build !== undefined ? { ...reading, build: rebuild(reading.build) } : reading]));
    const configMaps = await loadLpxConfigMaps(deps, loaded.observed.lpxgd, loaded.observed.dgd, registry.registry, buildSnapshots);
    const rebuilt = { ...loaded, observed: { ...loaded.observed, buildSnapshots, configMaps } };
    desired = decideLpxGraphDeployment(rebuilt.observed, { registry: registry.registry, render: deps.render }, deps.now());
    await writeLpx(deps, key, rebuilt, desired);
    if (loaded.observed.podCliqueSet !== undefined || desired.applyPodCliqueSet === undefined) break;
  }
  if (desired === undefined) throw new Error('no pass ran');
  return desired;
}

/** A recompiled build of the same geometry: every partition's gas dir under `rebuilt-` (see {@link reconcileLpxRebuilt}). */
export function withRebuiltPartitions(build: LpxBuild): LpxBuild {
  return { ...build, partitions: build.partitions.map((p) => ({ ...p, partPath: `rebuilt-${p.partPath}` })) };
}
