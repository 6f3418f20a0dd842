/**
 * The DGDSA handler's fault paths, with the Kubernetes API answered by msw so that a refusal
 * can be injected (the same handler runs against a real kube-apiserver in
 * test/integration/dgdsa.test.ts and dgdsa-admission.test.ts): a refused DGD update is reported
 * as upstream's `UpdateFailed` Event and answered Permanent; a conflict (409) is transient.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { http, HttpResponse } from 'msw';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FIELD_MANAGER_RECONCILE } from '../../shared/api/index.js';
import { DEFAULT_RENDER_CONFIG } from '../../shared/domain/index.js';
import { createKube } from '../../shared/kube/index.js';
import { TransientError, defaultConfig, type KubeEvent } from '../../shared/runtime/index.js';
import { aComponent, aDgd } from '../../test/support/builders.js';
import { startMswHttpServer, type MswHttpServer } from '../../test/support/msw-server.js';
import type { ReconcileDeps } from './dgd.js';
import { handle } from './dgdsa.js';

const API = '*';
const NOW = new Date('2026-12-01T09:00:00Z');
const ADAPTERS = `${API}/apis/nvidia.com/v1beta1/namespaces/inference/dynamographdeploymentscalingadapters`;
const DGDS = `${API}/apis/nvidia.com/v1beta1/namespaces/inference/dynamographdeployments`;

interface Call {
  method: string;
  path: string;
  body?: unknown;
}
let calls: Call[] = [];

async function record(request: Request): Promise<void> {
  const text = request.method === 'GET' ? '' : await request.text();
  calls.push({ method: request.method, path: new URL(request.url).pathname, ...(text === '' ? {} : { body: JSON.parse(text) as unknown }) });
}

const dgd = { ...aDgd({ spec: { components: [aComponent('frontend', 'frontend'), aComponent('decode', 'decode', { replicas: 1, scalingAdapter: {} })] } }), metadata: { name: 'my-graph', namespace: 'inference', uid: 'u1', resourceVersion: '9' } };
const adapter = {
  apiVersion: 'nvidia.com/v1beta1',
  kind: 'DynamoGraphDeploymentScalingAdapter',
  metadata: { name: 'my-graph-decode', namespace: 'inference', uid: 'a1', resourceVersion: '3' },
  spec: { dgdRef: { name: 'my-graph', serviceName: 'decode' }, replicas: 4 },
};

const handlers = [
  http.get(`${API}/apis/nvidia.com/v1beta1`, () =>
    HttpResponse.json({
      kind: 'APIResourceList',
      groupVersion: 'nvidia.com/v1beta1',
      resources: [
        ['dynamographdeployments', 'DynamoGraphDeployment'],
        ['dynamographdeploymentscalingadapters', 'DynamoGraphDeploymentScalingAdapter'],
        ['dynamographdeploymentscalingadapters/status', 'DynamoGraphDeploymentScalingAdapter'],
      ].map(([name, kind]) => ({ name, kind, namespaced: true, singularName: '', verbs: [] })),
    }),
  ),
  http.get(`${API}/apis/events.k8s.io/v1`, () => HttpResponse.json({ kind: 'APIResourceList', groupVersion: 'events.k8s.io/v1', resources: [{ name: 'events', kind: 'Event', namespaced: true, singularName: '', verbs: [] }] })),
  http.get(`${ADAPTERS}/my-graph-decode`, () => HttpResponse.json(adapter)),
  http.get(`${DGDS}/my-graph`, () => HttpResponse.json(dgd)),
  http.post(`${API}/apis/events.k8s.io/v1/namespaces/inference/events`, async ({ request }) => {
    await record(request);
    return HttpResponse.json({ apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: 'e', namespace: 'inference' } });
  }),
];
let server: MswHttpServer;

function deps(): ReconcileDeps {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'test', server: server.url, skipTLSVerify: true }],
    users: [{ name: 'admin', token: 'secret' }],
    contexts: [{ name: 'test', cluster: 'test', user: 'admin' }],
    currentContext: 'test',
  });
  return { log: pino({ level: 'silent' }), now: () => NOW, config: defaultConfig(), kube: createKube(kubeConfig, { fieldManager: FIELD_MANAGER_RECONCILE, now: () => NOW, requestTimeoutMs: 5_000 }), render: DEFAULT_RENDER_CONFIG, instance: 'reconcile-00001' };
}

const event: KubeEvent = { id: 'e1', type: 'dev.knative.apiserver.ref.update', source: 'https://kube.test', key: { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeploymentScalingAdapter', namespace: 'inference', name: 'my-graph-decode' }, object: undefined };

beforeAll(async () => {
  server = await startMswHttpServer(handlers);
});
afterEach(() => {
  expect(server.unhandled).toEqual([]);
  server.reset();
  calls = [];
});
afterAll(() => server.close());

describe('DGDSA handler faults', () => {
  it('a DGD update refused by admission (422) becomes an UpdateFailed Warning on the adapter and a Permanent answer, with no status write', async () => {
    server.use(
      http.put(`${DGDS}/my-graph`, async ({ request }) => {
        await record(request);
        return HttpResponse.json({ kind: 'Status', code: 422, reason: 'Invalid', message: 'admission webhook "validate.dynamographdeployments.nvidia.com" denied the request: spec.components[1].replicas: Forbidden' }, { status: 422 });
      }),
    );
    const outcome = await handle(event, deps());
    expect(outcome).toMatchObject({ kind: 'Permanent', reason: 'UpdateFailed' });
    expect(calls.map((c) => `${c.method} ${c.path}`)).toEqual(['PUT /apis/nvidia.com/v1beta1/namespaces/inference/dynamographdeployments/my-graph', 'POST /apis/events.k8s.io/v1/namespaces/inference/events']);
    const put = calls[0]?.body as { metadata: { resourceVersion: string }; spec: { components: { name: string; replicas: number }[] } };
    expect(put.metadata.resourceVersion).toBe('9');
    expect(put.spec.components.map((c) => [c.name, c.replicas])).toEqual([
      ['frontend', 1],
      ['decode', 4],
    ]);
    expect(calls[1]?.body).toMatchObject({ type: 'Warning', reason: 'UpdateFailed', regarding: { kind: 'DynamoGraphDeploymentScalingAdapter', name: 'my-graph-decode' } });
    expect((calls[1]?.body as { note: string }).note).toMatch(/^Failed to update DGD my-graph: /);
  });

  it('a conflict (409: the DGD changed since it was read) is transient, so the broker retries', async () => {
    server.use(http.put(`${DGDS}/my-graph`, () => HttpResponse.json({ kind: 'Status', code: 409, reason: 'Conflict', message: 'the object has been modified' }, { status: 409 })));
    await expect(handle(event, deps())).rejects.toBeInstanceOf(TransientError);
  });
});
