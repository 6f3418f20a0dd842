/**
 * DGDSA + HPA on the real API server, through the local event bridge and the reconcile
 * function (DGD and DGDSA events, as ApiServerSource -> Broker -> Trigger would deliver them).
 * No HPA controller runs here: the test writes the adapter's `/scale` subresource the way the
 * HPA controller does (GET the autoscaling/v1 Scale, PUT it back with `spec.replicas`). Grove's
 * controllers do not run either, so scaling is asserted on the DGD component (replicas flow
 * adapter -> DGD component); the PodClique `/scale` step belongs to the DGD reconcile.
 * Source: issue 8 part 4; modelexpress-checkpoint-loader (the DGDSA + HPA demo, manifests
 * ../shared/corpus/dgd/modelexpress-trtllm-hpa-*); upstream DGDSA controllers.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { startEventBridge, type EventBridge } from '../../shared/dev/bridge.js';
import { defaultConfig, startFunctionServer, type FunctionServer } from '../../shared/runtime/index.js';
import reconcile from '../../functions/reconcile/index.js';
import { createTestNamespace, testKubeConfig } from '../harness/testing.js';
import { apiClient, serverSideApply, type ApiClient, type Obj } from '../support/api.js';
import { eventually } from '../support/eventually.js';
import { sharedDir } from '../support/paths.js';

const log = pino({ level: process.env['DYNAMO_FN_TEST_VERBOSE'] === '1' ? 'debug' : 'silent' });
const kubeConfig = testKubeConfig();
let server: FunctionServer;
let bridge: EventBridge;
let api: ApiClient;
let namespace: string;

const plural: Readonly<Record<string, string>> = {
  ConfigMap: 'configmaps',
  DynamoGraphDeployment: 'dynamographdeployments',
  DynamoGraphDeploymentScalingAdapter: 'dynamographdeploymentscalingadapters',
  HorizontalPodAutoscaler: 'horizontalpodautoscalers',
};

function pathOf(object: { apiVersion: string; kind: string; name: string }): string {
  const base = object.apiVersion === 'v1' ? '/api/v1' : `/apis/${object.apiVersion}`;
  return `${base}/namespaces/${namespace}/${plural[object.kind] ?? ''}/${object.name}`;
}

function corpusDocuments(file: string): Obj[] {
  return parseAllDocuments(readFileSync(resolve(sharedDir, 'corpus', 'dgd', file), 'utf8')).flatMap((d) => {
    const object = d.toJS() as Obj | null;
    return object === null ? [] : [object];
  });
}

async function applyAll(documents: readonly Obj[]): Promise<void> {
  for (const document of documents) {
    const metadata = document['metadata'] as { name: string };
    const applied = await serverSideApply(api, pathOf({ apiVersion: document['apiVersion'] as string, kind: document['kind'] as string, name: metadata.name }), { ...document, metadata: { ...metadata, namespace } }, 'kubectl');
    expect(applied.status, `${String(document['kind'])} ${metadata.name}: ${JSON.stringify(applied.body)}`).toBeLessThan(300);
  }
}

/** The HPA controller's write: read the Scale, set spec.replicas, update it. */
async function writeScale(adapter: string, replicas: number): Promise<Obj> {
  const scalePath = `${pathOf({ apiVersion: 'nvidia.com/v1alpha1', kind: 'DynamoGraphDeploymentScalingAdapter', name: adapter })}/scale`;
  const scale = await api('GET', scalePath);
  expect(scale.status, JSON.stringify(scale.body)).toBe(200);
  const updated = await api('PUT', scalePath, { ...scale.body, spec: { replicas } });
  expect(updated.status, JSON.stringify(updated.body)).toBe(200);
  return updated.body;
}

async function componentReplicas(dgd: string, component: string): Promise<number | undefined> {
  const object = await api('GET', pathOf({ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', name: dgd }));
  const components = ((object.body['spec'] as { components?: { name: string; replicas?: number }[] } | undefined)?.components ?? []);
  return components.find((c) => c.name === component)?.replicas;
}

beforeAll(async () => {
  api = apiClient();
  namespace = await createTestNamespace(kubeConfig, 'dgdsa');
  server = await startFunctionServer(reconcile, { config: defaultConfig({ port: 0, kubeconfigPath: process.env['KUBECONFIG'] }), log, host: '127.0.0.1' });
  bridge = await startEventBridge({
    kubeConfig,
    log,
    resyncIntervalSeconds: 0,
    retry: { retries: 3, backoffDelayMs: 50 },
    subscriptions: [
      {
        name: 'reconcile',
        url: server.url,
        mode: 'Reference',
        kinds: [
          { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment' },
          { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeploymentScalingAdapter' },
        ],
      },
    ],
  });
});

afterAll(async () => {
  await bridge?.stop();
  await server?.close();
});

describe('the ModelExpress DGDSA + HPA demo', () => {
  it('applies the DGD, the DGDSA and the HPA; an HPA-style /scale write reaches the DGD component', async () => {
    await applyAll(corpusDocuments('modelexpress-trtllm-hpa-kimi-agg-autoscale.yaml'));
    await applyAll(corpusDocuments('modelexpress-trtllm-hpa-kimi-agg-autoscale-dgdsa-and-hpa.yaml'));

    // The adapter publishes what the HPA reads: status.replicas and the pod selector.
    const scale = await eventually('the adapter scale status', async () => {
      const s = await api('GET', `${pathOf({ apiVersion: 'nvidia.com/v1alpha1', kind: 'DynamoGraphDeploymentScalingAdapter', name: 'kimi-agg-autoscale-source' })}/scale`);
      return (s.body['status'] as { selector?: string } | undefined)?.selector === undefined ? undefined : s.body;
    });
    expect(scale['status']).toEqual({ replicas: 1, selector: 'nvidia.com/dynamo-component=source,nvidia.com/dynamo-graph-deployment-name=kimi-agg-autoscale' });

    await writeScale('kimi-agg-autoscale-source', 3);
    // "the DGDSA controller propagates the value to the DGD's spec.services.<name>.replicas"
    await eventually('the DGD component scaled to 3', async () => ((await componentReplicas('kimi-agg-autoscale', 'source')) === 3 ? true : undefined));
    const alpha = await api('GET', pathOf({ apiVersion: 'nvidia.com/v1alpha1', kind: 'DynamoGraphDeployment', name: 'kimi-agg-autoscale' }));
    expect(((alpha.body['spec'] as { services: Record<string, Obj> }).services['source'] as Obj)['replicas']).toBe(3);
    const after = await eventually('status.replicas 3 on the adapter', async () => {
      const s = await api('GET', `${pathOf({ apiVersion: 'nvidia.com/v1alpha1', kind: 'DynamoGraphDeploymentScalingAdapter', name: 'kimi-agg-autoscale-source' })}/scale`);
      return (s.body['status'] as { replicas?: number }).replicas === 3 ? s.body : undefined;
    });
    expect(after['spec']).toEqual({ replicas: 3 });
    const events = await eventually('a Scaled event', async () => {
      const list = await api('GET', `/apis/events.k8s.io/v1/namespaces/${namespace}/events`);
      const scaled = (list.body['items'] as { reason: string; note: string }[]).filter((e) => e.reason === 'Scaled');
      return scaled.length > 0 ? scaled : undefined;
    });
    expect(events.map((e) => e.note)).toContain('Scaled component source from 1 to 3 replicas');
  });
});

describe('operator-managed adapters', () => {
  const dgd = (scalingAdapter: boolean, replicas: number): Obj => ({
    apiVersion: 'nvidia.com/v1beta1',
    kind: 'DynamoGraphDeployment',
    metadata: { name: 'auto', namespace },
    spec: {
      backendFramework: 'vllm',
      components: [
        { name: 'frontend', type: 'frontend', replicas: 1, podTemplate: { spec: { containers: [{ name: 'main', image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0' }] } } },
        { name: 'Decode', type: 'decode', replicas, ...(scalingAdapter ? { scalingAdapter: {} } : {}), podTemplate: { spec: { containers: [{ name: 'main', image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0' }] } } },
      ],
    },
  });
  const adapterPath = (): string => pathOf({ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeploymentScalingAdapter', name: 'auto-decode' });

  it('creates one adapter per scalingAdapter component, owned by the DGD, seeded with its replicas', async () => {
    const applied = await serverSideApply(api, pathOf({ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', name: 'auto' }), dgd(true, 2), 'kubectl');
    expect(applied.status, JSON.stringify(applied.body)).toBe(201);
    const adapter = await eventually('adapter auto-decode', async () => {
      const a = await api('GET', adapterPath());
      return a.status === 200 && (a.body['status'] as Obj | undefined)?.['selector'] !== undefined ? a.body : undefined;
    });
    expect(adapter['spec']).toEqual({ dgdRef: { name: 'auto', serviceName: 'Decode' }, replicas: 2 });
    const metadata = adapter['metadata'] as { labels: Obj; ownerReferences: Obj[] };
    expect(metadata.labels).toEqual({ 'nvidia.com/dynamo-graph-deployment-name': 'auto', 'nvidia.com/dynamo-component': 'Decode' });
    expect(metadata.ownerReferences).toEqual([{ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', name: 'auto', uid: (applied.body['metadata'] as Obj)['uid'], controller: true, blockOwnerDeletion: true }]);
    const list = await api('GET', `/apis/nvidia.com/v1beta1/namespaces/${namespace}/dynamographdeploymentscalingadapters?labelSelector=${encodeURIComponent('nvidia.com/dynamo-graph-deployment-name=auto')}`);
    expect((list.body['items'] as Obj[]).map((i) => (i['metadata'] as Obj)['name'])).toEqual(['auto-decode']);
  });

  it('a /scale write reaches the component, and a later DGD reconcile keeps the adapter intent', async () => {
    await writeScale('auto-decode', 4);
    await eventually('Decode scaled to 4', async () => ((await componentReplicas('auto', 'Decode')) === 4 ? true : undefined));
    // The user re-applies the DGD with its old replicas (no admission webhook in this
    // namespace): the adapter stays at 4 and the component converges back to it.
    const reapplied = await serverSideApply(api, pathOf({ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', name: 'auto' }), dgd(true, 2), 'kubectl');
    expect(reapplied.status, JSON.stringify(reapplied.body)).toBe(200);
    expect((reapplied.body['spec'] as { components: { name: string; replicas: number }[] }).components.find((c) => c.name === 'Decode')?.replicas).toBe(2);
    await eventually('Decode back at the adapter replicas', async () => ((await componentReplicas('auto', 'Decode')) === 4 ? true : undefined));
    const adapter = await api('GET', adapterPath());
    expect((adapter.body['spec'] as Obj)['replicas']).toBe(4);
  });

  it('deletes the adapter when the component disables scalingAdapter', async () => {
    const applied = await serverSideApply(api, pathOf({ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', name: 'auto' }), dgd(false, 4), 'kubectl');
    expect(applied.status, JSON.stringify(applied.body)).toBe(200);
    await eventually('adapter auto-decode deleted', async () => ((await api('GET', adapterPath())).status === 404 ? true : undefined));
  });

  it('never adopts an adapter it did not create', async () => {
    const foreign = { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeploymentScalingAdapter', metadata: { name: 'auto-decode', namespace }, spec: { dgdRef: { name: 'auto', serviceName: 'Decode' }, replicas: 4 } };
    const created = await serverSideApply(api, adapterPath(), foreign, 'someone');
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await serverSideApply(api, pathOf({ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', name: 'auto' }), dgd(true, 4), 'kubectl');
    await eventually('the foreign adapter status written', async () => {
      const a = await api('GET', adapterPath());
      return (a.body['status'] as Obj | undefined)?.['selector'] !== undefined ? true : undefined;
    });
    // Opting out again must not delete it either: it is not ours. Wait until the reconcile of
    // that generation has run (its status says so), and its delivery has been answered.
    const optedOut = await serverSideApply(api, pathOf({ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', name: 'auto' }), dgd(false, 4), 'kubectl');
    const generation = (optedOut.body['metadata'] as Obj)['generation'];
    await eventually('the opt-out reconciled', async () => {
      const object = await api('GET', pathOf({ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', name: 'auto' }));
      return (object.body['status'] as Obj | undefined)?.['observedGeneration'] === generation ? true : undefined;
    });
    await bridge.idle();
    const adapter = await api('GET', adapterPath());
    expect(adapter.status).toBe(200);
    expect((adapter.body['metadata'] as Obj)['ownerReferences']).toBeUndefined();
  });
});
