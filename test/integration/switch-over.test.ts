/**
 * Switching from the upstream operator rolls no worker, proven on the real API server (issue 19
 * item 1). Upstream's rule (`shouldRenderGroveWorkerHashSuffix`,
 * deploy/operator/internal/controller/dgd_grove_workload_renderer.go; envtest
 * `TestGroveWorkerHashSuffixForExistingDGD`): a PodCliqueSet whose worker cliques carry no
 * `nvidia.com/dynamo-worker-hash` (written by an operator from before rolling updates) keeps
 * rendering without the hash label and `DYN_NAMESPACE_WORKER_SUFFIX` until the worker generation
 * changes; the DGD records the current worker hash meanwhile, and the next worker change renders
 * the hash on every worker clique, which rolls them as upstream would.
 *
 * The PodCliqueSet is created (POST, not an apply) under the field manager `manager` (a
 * controller-runtime binary's default) with upstream's `nvidia.com/last-applied-hash` and
 * `nvidia.com/last-applied-generation` annotations and a controller owner reference to the DGD,
 * as upstream's `reconcilePodCliqueSet` creates it; its templates are the rendered ones without
 * the hash label and env, which is what such an operator rendered. Grove's controller does not
 * run here: the test writes the status Grove would write (the PodCliqueSet's observedGeneration
 * and the PodCliques at their revision), and says so where it does.
 */
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { DGD_KIND, DGD_V1BETA1, parseDgd, type Dgd } from '../../shared/api/index.js';
import { computeWorkerHash, podCliqueSetName, renderDgd } from '../../shared/domain/index.js';
import { createKube, type Kube, type KubeObject } from '../../shared/kube/index.js';
import { defaultConfig, type KubeEvent } from '../../shared/runtime/index.js';
import { depsWithKube } from '../../functions/reconcile/index.js';
import { handle, type ReconcileDeps } from '../../functions/reconcile/dgd.js';
import { createTestNamespace, testKubeConfig } from '../harness/testing.js';

const log = pino({ level: process.env['DYNAMO_FN_TEST_VERBOSE'] === '1' ? 'debug' : 'silent' });
const kubeConfig = testKubeConfig();
const user: Kube = createKube(kubeConfig, { fieldManager: 'kubectl' });
/** The upstream operator that wrote the PodCliqueSet before the switch (controller-runtime's default field manager). */
const upstream: Kube = createKube(kubeConfig, { fieldManager: 'manager' });
const grove: Kube = createKube(kubeConfig, { fieldManager: 'grove-operator' });
const GROVE = 'grove.io/v1alpha1';
const HASH_LABEL = 'nvidia.com/dynamo-worker-hash';
const SUFFIX_ENV = 'DYN_NAMESPACE_WORKER_SUFFIX';
const IMAGE = 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0';
const NAME = 'switched';
const WORKERS = ['prefill', 'decode'];

type Clique = { name: string; labels: Record<string, string>; spec: { podSpec: { containers: { name: string; env?: { name: string; value?: string }[] }[] } } };

const deps: ReconcileDeps = depsWithKube({ log, now: () => new Date(), config: defaultConfig({ kubeconfigPath: process.env['KUBECONFIG'] }) }, createKube(kubeConfig, { fieldManager: 'dynamo-reconcile' }));
const event = (namespace: string): KubeEvent => ({ id: `test-${randomUUID()}`, type: 'dev.knative.apiserver.ref.update', source: 'test', key: { apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace, name: NAME }, object: undefined });

function aGraph(namespace: string, maxLen: string): Record<string, unknown> {
  const component = (name: string, type: string, env: { name: string; value: string }[] = []) => ({ name, type, replicas: 1, podTemplate: { spec: { containers: [{ name: 'main', image: IMAGE, ...(env.length > 0 ? { env } : {}) }] } } });
  return {
    apiVersion: DGD_V1BETA1,
    kind: DGD_KIND,
    metadata: { name: NAME, namespace },
    spec: { backendFramework: 'vllm', components: [component('frontend', 'frontend'), component('prefill', 'prefill', [{ name: 'MODEL_MAX_LEN', value: maxLen }]), component('decode', 'decode')] },
  };
}

async function storedDgd(namespace: string): Promise<{ object: KubeObject; dgd: Dgd }> {
  const object = await user.get({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace, name: NAME });
  const parsed = parseDgd(object);
  if (object === undefined || !parsed.ok) throw new Error('stored DGD does not parse');
  return { object, dgd: parsed.dgd };
}

async function storedPcs(namespace: string, name: string): Promise<KubeObject & { spec: { template: { cliques: Clique[] } } }> {
  const pcs = await user.get({ apiVersion: GROVE, kind: 'PodCliqueSet', namespace, name });
  if (pcs === undefined) throw new Error(`no PodCliqueSet ${namespace}/${name}`);
  return pcs as KubeObject & { spec: { template: { cliques: Clique[] } } };
}

const workerCliques = (pcs: { spec: { template: { cliques: Clique[] } } }) => pcs.spec.template.cliques.filter((c) => WORKERS.includes(c.name));

/** As Grove: the PodCliqueSet's generation acknowledged and every clique at its revision with its replica ready. */
async function actAsGrove(namespace: string, pcsName: string): Promise<void> {
  const pcs = await storedPcs(namespace, pcsName);
  await grove.applyStatus({ apiVersion: GROVE, kind: 'PodCliqueSet', metadata: { name: pcsName, namespace }, status: { observedGeneration: pcs.metadata.generation ?? 1 } } as unknown as KubeObject, { force: true });
  for (const clique of pcs.spec.template.cliques) {
    const name = `${pcsName}-0-${clique.name}`;
    const metadata = { name, namespace, labels: { 'app.kubernetes.io/part-of': pcsName, 'app.kubernetes.io/managed-by': 'grove-operator' }, ownerReferences: [{ apiVersion: GROVE, kind: 'PodCliqueSet', name: pcsName, uid: pcs.metadata.uid, controller: true, blockOwnerDeletion: true }] };
    await grove.apply({ apiVersion: GROVE, kind: 'PodClique', metadata, spec: { roleName: clique.name, replicas: 1, podSpec: clique.spec.podSpec } } as unknown as KubeObject, { force: true });
    const stored = await grove.get({ apiVersion: GROVE, kind: 'PodClique', namespace, name });
    await grove.applyStatus({ apiVersion: GROVE, kind: 'PodClique', metadata: { name, namespace }, status: { observedGeneration: stored?.metadata.generation ?? 1, replicas: 1, updatedReplicas: 1, readyReplicas: 1 } } as unknown as KubeObject, { force: true });
  }
}

describe('switching from the upstream operator (upstream shouldRenderGroveWorkerHashSuffix)', () => {
  let namespace = '';
  let pcsName = '';
  let legacyWorkers = '';
  let legacyGeneration: number | undefined;

  beforeAll(async () => {
    namespace = await createTestNamespace(kubeConfig, 'switch');
    await user.apply(aGraph(namespace, '4096') as Parameters<Kube['apply']>[0], { force: true });
    const { object, dgd } = await storedDgd(namespace);
    pcsName = podCliqueSetName(NAME, dgd.spec.components);
    // The PodCliqueSet as the older upstream operator wrote it: no worker hash anywhere.
    const rendered = renderDgd({ ...dgd, metadata: { ...dgd.metadata, uid: object.metadata.uid } }, { config: deps.render });
    if (!rendered.ok) throw new Error('fixture does not render');
    const pcs = structuredClone(rendered.objects.find((o) => o.kind === 'PodCliqueSet')) as unknown as KubeObject & { spec: { template: { cliques: Clique[] } } };
    for (const clique of pcs.spec.template.cliques) {
      delete clique.labels[HASH_LABEL];
      for (const container of clique.spec.podSpec.containers) if (container.env !== undefined) container.env = container.env.filter((e) => e.name !== SUFFIX_ENV);
    }
    pcs.metadata.annotations = { ...(pcs.metadata.annotations ?? {}), 'nvidia.com/last-applied-hash': 'upstream-spec-hash', 'nvidia.com/last-applied-generation': '1' };
    await upstream.create(pcs);
    await actAsGrove(namespace, pcsName);
    const before = await storedPcs(namespace, pcsName);
    legacyWorkers = JSON.stringify(workerCliques(before));
    legacyGeneration = before.metadata.generation;
    expect(legacyWorkers).not.toContain(HASH_LABEL);
    expect(legacyWorkers).not.toContain(SUFFIX_ENV);
  });

  it('"legacy PCS with no generation change remains unsuffixed": passes here leave the worker cliques\' templates byte for byte as the upstream operator wrote them (no roll), and the DGD records the current worker hash', async () => {
    // Two passes: the first may write the frontend's Services and status, the second finds the
    // PodCliqueSet as it is and commits the worker hash (upstream-notes/dgd.md §4.7 step 3).
    const first = await handle(event(namespace), deps);
    await actAsGrove(namespace, pcsName);
    const second = await handle(event(namespace), deps);
    expect([first.kind, second.kind]).toEqual(['Done', 'Done']);
    const after = await storedPcs(namespace, pcsName);
    expect(JSON.stringify(workerCliques(after))).toBe(legacyWorkers);
    expect(after.metadata.generation).toBe(legacyGeneration);
    const { object, dgd } = await storedDgd(namespace);
    expect(object.metadata.annotations?.['nvidia.com/current-worker-hash-v2']).toBe(computeWorkerHash(dgd));
    // The workers run without DYN_NAMESPACE_WORKER_SUFFIX, so they register under the bare Dynamo namespace.
    const components = (object['status'] as { components?: Record<string, { runtimeNamespace?: string }> } | undefined)?.components;
    expect(components?.['prefill']?.runtimeNamespace).toBe(`${namespace}-${NAME}`);
  });

  it('"legacy PCS renders a suffix after a worker generation change": a later worker spec change puts the new worker hash on every worker clique (label and DYN_NAMESPACE_WORKER_SUFFIX), so the workers roll as upstream rolls them', async () => {
    await user.apply(aGraph(namespace, '8192') as Parameters<Kube['apply']>[0], { force: true });
    const { dgd } = await storedDgd(namespace);
    const wantHash = computeWorkerHash(dgd);
    await handle(event(namespace), deps);
    const after = await storedPcs(namespace, pcsName);
    expect(after.metadata.generation).toBeGreaterThan(legacyGeneration ?? 0);
    const workers = workerCliques(after);
    expect(workers.map((c) => c.name).sort()).toEqual([...WORKERS].sort());
    for (const clique of workers) {
      expect(clique.labels[HASH_LABEL]).toBe(wantHash);
      expect(clique.spec.podSpec.containers.find((c) => c.name === 'main')?.env?.find((e) => e.name === SUFFIX_ENV)?.value).toBe(wantHash);
    }
    expect(after.spec.template.cliques.find((c) => c.name === 'frontend')?.labels[HASH_LABEL]).toBeUndefined();
  });
});
