/**
 * The main path against a real kube-apiserver: a DGD applied to the API server reaches the
 * reconcile function through the local event bridge (as ApiServerSource -> Broker -> Trigger
 * would deliver it), and the function's PodCliqueSet and Services are accepted under the
 * Grove CRD schema (../shared/crds/grove/grove.io_podcliquesets.coherent.yaml, installed by
 * the global setup). Also: re-delivery writes nothing, an edit updates the PodCliqueSet, a
 * change made while the bridge was down is picked up by the next resync, and a DGD the
 * renderer rejects ends with Ready=False and the field error, and no PodCliqueSet.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { DGD_KIND, DGD_V1BETA1, parseDgd, type Dgd } from '../../shared/api/index.js';
import { podCliqueSetName } from '../../shared/domain/index.js';
import { reconcileSubscriptions, startEventBridge, type EventBridge } from '../../shared/dev/bridge.js';
import { createKube, type Kube, type KubeObject } from '../../shared/kube/index.js';
import { defaultConfig, startFunctionServer, type FunctionServer } from '../../shared/runtime/index.js';
import reconcile from '../../functions/reconcile/index.js';
import { createTestNamespace, testKubeConfig } from '../harness/testing.js';
import { eventually } from '../support/eventually.js';
import { sharedDir } from '../support/paths.js';

const log = pino({ level: process.env['DYNAMO_FN_TEST_VERBOSE'] === '1' ? 'debug' : 'silent' });
const kubeConfig = testKubeConfig();
const user: Kube = createKube(kubeConfig, { fieldManager: 'kubectl' });
let server: FunctionServer;
let bridge: EventBridge;

const DGD_REF = { apiVersion: DGD_V1BETA1, kind: DGD_KIND };

function startBridge(): Promise<EventBridge> {
  return startEventBridge({
    kubeConfig,
    log,
    resyncIntervalSeconds: 0,
    retry: { retries: 3, backoffDelayMs: 50 },
    subscriptions: reconcileSubscriptions(server.url),
  });
}

beforeAll(async () => {
  server = await startFunctionServer(reconcile, {
    config: defaultConfig({ port: 0, kubeconfigPath: process.env['KUBECONFIG'] }),
    log,
    host: '127.0.0.1',
  });
  bridge = await startBridge();
});

afterAll(async () => {
  await bridge.stop();
  await server.close();
});

/** Applies a DGD the way a user's `kubectl apply --server-side` would. */
async function applyDgd(dgd: Dgd | Record<string, unknown>): Promise<KubeObject> {
  const { status: _status, ...object } = dgd as Record<string, unknown>;
  return user.apply(object as Parameters<Kube['apply']>[0], { force: true });
}

async function getPcs(namespace: string, name: string): Promise<KubeObject | undefined> {
  return user.get({ apiVersion: 'grove.io/v1alpha1', kind: 'PodCliqueSet', namespace, name });
}

function readyCondition(dgd: KubeObject | undefined): { status: string; reason: string; message: string } | undefined {
  const conditions = (dgd?.['status'] as { conditions?: { type: string; status: string; reason: string; message: string }[] } | undefined)?.conditions;
  return conditions?.find((c) => c.type === 'Ready');
}

interface CorpusCase {
  readonly name: string;
  readonly dgd: Dgd;
}

function corpusCases(): CorpusCase[] {
  const dir = resolve(sharedDir, 'corpus', 'dgd');
  const cases: CorpusCase[] = [];
  for (const file of readdirSync(dir).sort()) {
    parseAllDocuments(readFileSync(resolve(dir, file), 'utf8')).forEach((document, index) => {
      const object = document.toJS() as { kind?: string } | null;
      if (object?.kind !== DGD_KIND) return;
      const parsed = parseDgd(object);
      if (!parsed.ok) throw new Error(`${file}: ${JSON.stringify(parsed.issues)}`);
      cases.push({ name: `${file}#${index}`, dgd: parsed.dgd });
    });
  }
  return cases;
}

describe('reconcile through the event bridge against a real API server', () => {
  const cases = corpusCases();

  it.each(cases)('corpus $name: the PodCliqueSet and Services are created and accepted by the API server', async ({ dgd }) => {
    const namespace = await createTestNamespace(kubeConfig, 'corpus');
    const object = { ...dgd, metadata: { name: dgd.metadata.name, namespace, ...(dgd.metadata.annotations === undefined ? {} : { annotations: dgd.metadata.annotations }) } };
    await applyDgd(object);
    if (dgd.metadata.annotations?.['nvidia.com/enable-grove'] === 'false') {
      const ready = await eventually('Ready=False on the non-Grove DGD', async () => readyCondition(await user.get({ ...DGD_REF, namespace, name: dgd.metadata.name ?? '' })));
      expect(ready).toMatchObject({ status: 'False', reason: 'InvalidSpec' });
      expect(await user.list('grove.io/v1alpha1', 'PodCliqueSet', namespace)).toEqual([]);
      return;
    }
    const pcsName = podCliqueSetName(dgd.metadata.name ?? '', dgd.spec.components.filter((c) => c.type !== 'lpx'));
    const pcs = await eventually(`PodCliqueSet ${namespace}/${pcsName}`, () => getPcs(namespace, pcsName));
    const cliques = (pcs['spec'] as { template: { cliques: unknown[] } }).template.cliques;
    expect(cliques.length).toBeGreaterThanOrEqual(dgd.spec.components.length);
    const services = await eventually('component Services', async () => {
      const list = await user.list('v1', 'Service', namespace);
      return list.length === dgd.spec.components.length ? list : undefined;
    });
    expect(services.map((s) => s.metadata.ownerReferences)).toEqual(services.map(() => [expect.objectContaining({ kind: DGD_KIND, name: dgd.metadata.name, controller: true })]));
    const ready = await eventually('a Ready condition', async () => readyCondition(await user.get({ ...DGD_REF, namespace, name: dgd.metadata.name ?? '' })));
    const waiting = dgd.spec.components.filter((c) => c.type !== 'lpx' && (c.experimental?.checkpoint as { enabled?: unknown; startupPolicy?: unknown } | undefined)?.enabled === true && (c.experimental?.checkpoint as { startupPolicy?: unknown }).startupPolicy === 'WaitForCheckpoint');
    if (waiting.length > 0) {
      // No DynamoCheckpoint controller runs here, so its checkpoint is absent: as upstream's
      // applyCheckpointStartupReadiness, the DGD says what it waits for (and status.checkpoints
      // was accepted by the API server's schema).
      expect(ready).toMatchObject({ status: 'False', reason: 'waiting_for_checkpoint', message: `Waiting for checkpoints: ${waiting.map((c) => c.name).sort().join(', ')}` });
      const stored = await user.get({ ...DGD_REF, namespace, name: dgd.metadata.name ?? '' });
      expect((stored?.['status'] as { checkpoints?: unknown } | undefined)?.checkpoints).toEqual(Object.fromEntries(waiting.map((c) => [c.name, { ready: false }])));
      return;
    }
    // No Grove operator runs here, so the children never appear: the DGD reports that honestly.
    expect(ready).toMatchObject({ status: 'False', reason: 'some_resources_are_not_ready' });
  });

  describe('level-triggered behaviour', () => {
    let namespace: string;
    const name = 'qwen3-agg';
    const base = (tag: string): Record<string, unknown> => ({
      apiVersion: DGD_V1BETA1,
      kind: DGD_KIND,
      metadata: { name, namespace },
      spec: {
        backendFramework: 'vllm',
        components: [
          { name: 'frontend', type: 'frontend', replicas: 1, podTemplate: { spec: { containers: [{ name: 'main', image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0' }] } } },
          { name: 'worker', type: 'worker', replicas: 2, podTemplate: { spec: { containers: [{ name: 'main', image: `nvcr.io/nvidia/ai-dynamo/vllm-runtime:${tag}` }] } } },
        ],
      },
    });
    // A pod-template edit is what rewrites the PodCliqueSet; a replica edit goes to the clique's
    // scale subresource instead (test/integration/scaling.test.ts).
    const workerImage = async (): Promise<string | undefined> => {
      const pcs = await getPcs(namespace, name);
      const cliques = (pcs?.['spec'] as { template: { cliques: { name: string; spec: { podSpec: { containers: { name: string; image: string }[] } } }[] } } | undefined)?.template.cliques;
      return cliques?.find((c) => c.name === 'worker')?.spec.podSpec.containers.find((c) => c.name === 'main')?.image;
    };
    const hasTag = async (tag: string): Promise<true | undefined> => ((await workerImage())?.endsWith(`:${tag}`) === true ? true : undefined);
    const versions = async (): Promise<string[]> => {
      const objects = [
        await user.get({ ...DGD_REF, namespace, name }),
        await getPcs(namespace, name),
        await user.get({ apiVersion: 'v1', kind: 'Service', namespace, name: `${name}-frontend` }),
        await user.get({ apiVersion: 'v1', kind: 'Service', namespace, name: `${name}-worker` }),
      ];
      return objects.map((o) => o?.metadata.resourceVersion ?? 'missing');
    };

    beforeAll(async () => {
      namespace = await createTestNamespace(kubeConfig, 'level');
      await applyDgd(base('1.4.0'));
      await eventually('worker clique with image 1.4.0', () => hasTag('1.4.0'));
      await eventually('Ready condition', async () => readyCondition(await user.get({ ...DGD_REF, namespace, name })));
      await bridge.idle();
    });

    it('re-delivering the same event writes nothing (resourceVersions unchanged)', async () => {
      const before = await versions();
      await bridge.resync();
      await bridge.resync();
      await bridge.idle();
      expect(await versions()).toEqual(before);
    });

    it('editing the DGD\'s pod template updates the PodCliqueSet', async () => {
      await applyDgd(base('1.4.1'));
      await eventually('worker clique with image 1.4.1', () => hasTag('1.4.1'));
    });

    it('a change made while the bridge was down is picked up by the next resync', async () => {
      await bridge.stop();
      await applyDgd(base('1.4.2'));
      await new Promise((r) => setTimeout(r, 500));
      expect(await hasTag('1.4.1')).toBe(true);
      bridge = await startBridge();
      // Like ApiServerSource, the new bridge emits nothing for what already exists...
      await new Promise((r) => setTimeout(r, 500));
      expect(await hasTag('1.4.1')).toBe(true);
      // ...so the resync (a PingSource in production) covers it.
      await bridge.resync();
      await eventually('worker clique with image 1.4.2', () => hasTag('1.4.2'));
    });
  });

  it('a DGD the renderer rejects ends with Ready=False and the field error on its status, and no PodCliqueSet', async () => {
    const namespace = await createTestNamespace(kubeConfig, 'invalid');
    await applyDgd({
      apiVersion: DGD_V1BETA1,
      kind: DGD_KIND,
      metadata: { name: 'bad-strategy', namespace, annotations: { 'nvidia.com/grove-update-strategy': 'coherent' } },
      spec: { components: [{ name: 'worker', type: 'worker', replicas: 1, podTemplate: { spec: { containers: [{ name: 'main', image: 'img:1' }] } } }] },
    });
    const ready = await eventually('Ready=False', async () => readyCondition(await user.get({ ...DGD_REF, namespace, name: 'bad-strategy' })));
    expect(ready).toEqual(
      expect.objectContaining({
        status: 'False',
        reason: 'InvalidSpec',
        message: 'metadata.annotations[nvidia.com/grove-update-strategy]: Unsupported value: "coherent": supported values: "Coherent", "RollingRecreate", "OnDelete"',
      }),
    );
    const dgd = await user.get({ ...DGD_REF, namespace, name: 'bad-strategy' });
    expect((dgd?.['status'] as { state?: string }).state).toBe('failed');
    expect(await user.list('grove.io/v1alpha1', 'PodCliqueSet', namespace)).toEqual([]);
  });
});
