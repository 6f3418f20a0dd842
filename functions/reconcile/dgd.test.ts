/**
 * The reconcile handler's API calls and status report, with the Kubernetes API answered by
 * msw so that faults can be injected. The same handler runs against a real kube-apiserver in
 * test/integration/reconcile.test.ts; this file checks the exact requests and the failure paths.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { http, HttpResponse } from 'msw';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FIELD_MANAGER_RECONCILE } from '../../shared/api/index.js';
import { DEFAULT_RENDER_CONFIG } from '../../shared/domain/index.js';
import { createKube } from '../../shared/kube/index.js';
import { TransientError, defaultConfig, type KubeEvent } from '../../shared/runtime/index.js';
import { aDgd } from '../../test/support/builders.js';
import { startMswHttpServer, type MswHttpServer } from '../../test/support/msw-server.js';
import { handle, type ReconcileDeps } from './dgd.js';
import { init } from './index.js';

// msw path patterns match any origin; the server's own URL is known only once it listens.
const API = '*';
const NOW = new Date('2026-11-29T12:00:00Z');

interface Call {
  method: string;
  path: string;
  query: Record<string, string>;
  body?: unknown;
}
let calls: Call[] = [];
let stored: Record<string, unknown> | undefined;

const discovery = (groupVersion: string, resources: [string, string][]) =>
  HttpResponse.json({ kind: 'APIResourceList', groupVersion, resources: resources.map(([name, kind]) => ({ name, kind, namespaced: true, singularName: '', verbs: [] })) });

async function record(request: Request): Promise<Call> {
  const url = new URL(request.url);
  const text = request.method === 'GET' ? '' : await request.text();
  const call: Call = { method: request.method, path: url.pathname, query: Object.fromEntries(url.searchParams), ...(text === '' ? {} : { body: JSON.parse(text) as unknown }) };
  calls.push(call);
  return call;
}

const echo = async ({ request }: { request: Request }) => {
  const call = await record(request);
  const body = call.body as { metadata: Record<string, unknown> };
  return HttpResponse.json({ ...body, metadata: { ...body.metadata, uid: 'u', resourceVersion: '1' } });
};

const handlers = [
  http.get(`${API}/apis/nvidia.com/v1beta1`, () => discovery('nvidia.com/v1beta1', [['dynamographdeployments', 'DynamoGraphDeployment'], ['dynamographdeployments/status', 'DynamoGraphDeployment']])),
  http.get(`${API}/apis/grove.io/v1alpha1`, () => discovery('grove.io/v1alpha1', [['podcliquesets', 'PodCliqueSet'], ['podcliques', 'PodClique'], ['podcliquescalinggroups', 'PodCliqueScalingGroup']])),
  http.get(`${API}/api/v1`, () => discovery('v1', [['services', 'Service'], ['serviceaccounts', 'ServiceAccount'], ['persistentvolumeclaims', 'PersistentVolumeClaim']])),
  http.get(`${API}/apis/rbac.authorization.k8s.io/v1`, () => discovery('rbac.authorization.k8s.io/v1', [['roles', 'Role'], ['rolebindings', 'RoleBinding']])),
  http.get(`${API}/apis/events.k8s.io/v1`, () => discovery('events.k8s.io/v1', [['events', 'Event']])),
  http.get(`${API}/apis/nvidia.com/v1beta1/namespaces/inference/dynamographdeployments/:name`, async ({ request }) => {
    await record(request);
    return stored === undefined ? HttpResponse.json({ kind: 'Status', code: 404, reason: 'NotFound' }, { status: 404 }) : HttpResponse.json(stored);
  }),
  http.get(`${API}/apis/grove.io/v1alpha1/namespaces/inference/:plural`, async ({ request }) => {
    await record(request);
    return HttpResponse.json({ kind: 'List', metadata: {}, items: [] });
  }),
  http.get(`${API}/apis/grove.io/v1alpha1/namespaces/inference/podcliquesets/:name`, async ({ request }) => {
    await record(request);
    return HttpResponse.json({ kind: 'Status', code: 404, reason: 'NotFound' }, { status: 404 });
  }),
  http.get(`${API}/api/v1/namespaces/inference/services/:name`, async ({ request }) => {
    await record(request);
    return HttpResponse.json({ kind: 'Status', code: 404, reason: 'NotFound' }, { status: 404 });
  }),
  http.get(`${API}/api/v1/namespaces/inference/serviceaccounts/:name`, async ({ request }) => {
    await record(request);
    return HttpResponse.json({ kind: 'Status', code: 404, reason: 'NotFound' }, { status: 404 });
  }),
  http.get(`${API}/apis/rbac.authorization.k8s.io/v1/namespaces/inference/:plural/:name`, async ({ request }) => {
    await record(request);
    return HttpResponse.json({ kind: 'Status', code: 404, reason: 'NotFound' }, { status: 404 });
  }),
  http.patch(`${API}/api/v1/namespaces/inference/serviceaccounts/:name`, echo),
  http.patch(`${API}/apis/rbac.authorization.k8s.io/v1/namespaces/inference/:plural/:name`, echo),
  http.patch(`${API}/apis/grove.io/v1alpha1/namespaces/inference/podcliquesets/:name`, echo),
  http.patch(`${API}/api/v1/namespaces/inference/services/:name`, echo),
  http.patch(`${API}/apis/nvidia.com/v1beta1/namespaces/inference/dynamographdeployments/:name/status`, echo),
  http.patch(`${API}/apis/nvidia.com/v1beta1/namespaces/inference/dynamographdeployments/:name`, echo),
  http.post(`${API}/apis/events.k8s.io/v1/namespaces/inference/events`, echo),
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
  return {
    log: pino({ level: 'silent' }),
    now: () => NOW,
    config: defaultConfig(),
    kube: createKube(kubeConfig, { fieldManager: FIELD_MANAGER_RECONCILE, now: () => NOW, requestTimeoutMs: 5_000 }),
    render: DEFAULT_RENDER_CONFIG,
    instance: 'reconcile-00001',
  };
}

const event: KubeEvent = {
  id: 'e1',
  type: 'dev.knative.apiserver.ref.update',
  source: 'https://kube.test',
  key: { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', namespace: 'inference', name: 'my-graph' },
  object: undefined,
};

const writes = () => calls.filter((c) => c.method !== 'GET').map((c) => `${c.method} ${c.path}`);

beforeAll(async () => {
  server = await startMswHttpServer(handlers);
});
afterEach(() => {
  expect(server.unhandled).toEqual([]);
  server.reset();
  calls = [];
  stored = undefined;
});
afterAll(() => server.close());

describe('reconcile handler: API calls (DESIGN.md "Writes")', () => {
  it('reads the DGD now, applies the PodCliqueSet and Services with field manager dynamo-reconcile, then the status, then an Event', async () => {
    stored = { ...aDgd(), metadata: { ...aDgd().metadata, generation: 1, resourceVersion: '7' } };
    await expect(handle(event, deps())).resolves.toEqual({ kind: 'Done' });
    expect(writes()).toEqual([
      'PATCH /apis/grove.io/v1alpha1/namespaces/inference/podcliquesets/my-graph',
      'PATCH /apis/rbac.authorization.k8s.io/v1/namespaces/inference/roles/my-graph-k8s-service-discovery-role',
      'PATCH /api/v1/namespaces/inference/services/my-graph-frontend',
      'PATCH /api/v1/namespaces/inference/services/my-graph-worker',
      'PATCH /api/v1/namespaces/inference/serviceaccounts/my-graph-k8s-service-discovery',
      'PATCH /apis/rbac.authorization.k8s.io/v1/namespaces/inference/rolebindings/my-graph-k8s-service-discovery-binding',
      'PATCH /apis/nvidia.com/v1beta1/namespaces/inference/dynamographdeployments/my-graph/status',
      'POST /apis/events.k8s.io/v1/namespaces/inference/events',
    ]);
    for (const call of calls.filter((c) => c.method === 'PATCH')) {
      expect(call.query).toEqual({ fieldManager: 'dynamo-reconcile', fieldValidation: 'Strict', force: 'true' });
    }
    const status = calls.find((c) => c.path.endsWith('/status'))?.body as { status: { conditions: unknown[]; state: string; observedGeneration: number } };
    expect(status.status.state).toBe('pending');
    expect(status.status.observedGeneration).toBe(1);
    expect(status.status.conditions).toEqual([
      { type: 'Ready', status: 'False', reason: 'some_resources_are_not_ready', message: 'frontend: resource not found; worker: resource not found', lastTransitionTime: '2026-11-29T12:00:00Z', observedGeneration: 1 },
      { type: 'ScalingDeferred', status: 'False', reason: 'ScalingAllowed', message: 'No Grove replica changes are deferred', lastTransitionTime: '2026-11-29T12:00:00Z', observedGeneration: 1 },
    ]);
    expect(calls.filter((c) => c.path.endsWith('/podcliques') || c.path.endsWith('/podcliquescalinggroups')).map((c) => c.query['labelSelector'])).toEqual([
      'app.kubernetes.io/part-of=my-graph',
      'app.kubernetes.io/part-of=my-graph',
    ]);
  });

  it('a DGD carrying only upstream\'s legacy v1 nvidia.com/current-worker-hash gets v2 recorded beside it in the same pass (an apply of that annotation alone), then the WorkerHashMigrated Event (upstream migrateCurrentWorkerHashIfNeeded)', async () => {
    stored = { ...aDgd(), metadata: { ...aDgd().metadata, generation: 1, resourceVersion: '7', annotations: { 'nvidia.com/current-worker-hash': 'abc12345' } } };
    await expect(handle(event, deps())).resolves.toEqual({ kind: 'Done' });
    expect(writes().slice(-3)).toEqual([
      'POST /apis/events.k8s.io/v1/namespaces/inference/events',
      'PATCH /apis/nvidia.com/v1beta1/namespaces/inference/dynamographdeployments/my-graph',
      'POST /apis/events.k8s.io/v1/namespaces/inference/events',
    ]);
    const annotate = calls.find((c) => c.method === 'PATCH' && c.path.endsWith('/dynamographdeployments/my-graph'));
    expect(annotate?.query).toEqual({ fieldManager: 'dynamo-reconcile', fieldValidation: 'Strict', force: 'true' });
    const annotations = (annotate?.body as { metadata: { annotations: Record<string, string> } }).metadata.annotations;
    expect(Object.keys(annotations)).toEqual(['nvidia.com/current-worker-hash-v2']);
    expect(annotations['nvidia.com/current-worker-hash-v2']).toMatch(/^[0-9a-f]{8}$/);
    const migrated = calls.filter((c) => c.method === 'POST').at(-1)?.body as { reason: string; note: string; type: string };
    expect([migrated.type, migrated.reason, migrated.note]).toEqual(['Normal', 'WorkerHashMigrated', 'Recorded v2 worker hash annotation without rolling workers']);
  });

  it('the status is sent with the resourceVersion read as a precondition; a 409 Conflict (the DGD changed since) ends the pass Done with nothing more written: no Event, no worker-hash commit (the newer version\'s event decides)', async () => {
    stored = { ...aDgd(), metadata: { ...aDgd().metadata, generation: 1, resourceVersion: '7', annotations: { 'nvidia.com/current-worker-hash': 'abc12345' } } };
    server.use(
      http.patch(`${API}/apis/nvidia.com/v1beta1/namespaces/inference/dynamographdeployments/:name/status`, async ({ request }) => {
        await record(request);
        return HttpResponse.json({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Conflict', code: 409, message: 'Operation cannot be fulfilled on dynamographdeployments.nvidia.com "my-graph": the object has been modified; please apply your changes to the latest version and try again' }, { status: 409 });
      }),
    );
    await expect(handle(event, deps())).resolves.toEqual({ kind: 'Done' });
    const status = calls.find((c) => c.path.endsWith('/status'));
    expect((status?.body as { metadata: { resourceVersion?: string } }).metadata.resourceVersion).toBe('7');
    expect(writes().at(-1)).toBe('PATCH /apis/nvidia.com/v1beta1/namespaces/inference/dynamographdeployments/my-graph/status');
    expect(writes().filter((w) => w.startsWith('POST') || w.endsWith('/dynamographdeployments/my-graph'))).toEqual([]);
  });

  it('render settings come from the function\'s configuration: GANG_SCHEDULER=kai and GROVE_TERMINATION_DELAY=30m reach the applied PodCliqueSet (init -> parseRenderSettings)', async () => {
    stored = { ...aDgd(), metadata: { ...aDgd().metadata, generation: 1 } };
    const dir = mkdtempSync(join(tmpdir(), 'reconcile-init-'));
    const kubeconfigPath = join(dir, 'kubeconfig');
    writeFileSync(kubeconfigPath, `apiVersion: v1\nkind: Config\nclusters: [{name: t, cluster: {server: "${server.url}", insecure-skip-tls-verify: true}}]\nusers: [{name: t, user: {token: secret}}]\ncontexts: [{name: t, context: {cluster: t, user: t}}]\ncurrent-context: t\n`);
    try {
      const base = { log: pino({ level: 'silent' }), now: () => NOW, config: defaultConfig({ kubeconfigPath }) };
      const configured = await init(base, { GANG_SCHEDULER: 'kai', GROVE_TERMINATION_DELAY: '30m' });
      await expect(handle(event, configured)).resolves.toEqual({ kind: 'Done' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const pcs = calls.find((c) => c.method === 'PATCH' && c.path.endsWith('/podcliquesets/my-graph'))?.body as { spec: { template: { terminationDelay: string; cliques: { labels: Record<string, string>; spec: { podSpec: { schedulerName?: string } } }[] } } };
    expect(pcs.spec.template.terminationDelay).toBe('30m');
    // KAI: schedulerName kai-scheduler and the queue label (upstream injectKaiSchedulerIfEnabled, default queue "dynamo").
    expect(pcs.spec.template.cliques.map((c) => [c.spec.podSpec.schedulerName, c.labels['kai.scheduler/queue']])).toEqual([
      ['kai-scheduler', 'dynamo'],
      ['kai-scheduler', 'dynamo'],
    ]);
  });

  it('does nothing for a DGD that is gone (404 on read)', async () => {
    await expect(handle(event, deps())).resolves.toEqual({ kind: 'Done' });
    expect(writes()).toEqual([]);
  });

  it('reports an invalid spec on status with the field error and answers Permanent without applying anything', async () => {
    stored = { ...aDgd(), metadata: { ...aDgd().metadata, generation: 2, annotations: { 'nvidia.com/grove-update-strategy': 'Rolling' } } };
    const outcome = await handle(event, deps());
    expect(outcome).toEqual({
      kind: 'Permanent',
      reason: 'InvalidSpec',
      message: 'metadata.annotations[nvidia.com/grove-update-strategy]: Unsupported value: "Rolling": supported values: "Coherent", "RollingRecreate", "OnDelete"',
    });
    expect(writes()).toEqual(['PATCH /apis/nvidia.com/v1beta1/namespaces/inference/dynamographdeployments/my-graph/status', 'POST /apis/events.k8s.io/v1/namespaces/inference/events']);
    const event0 = calls.find((c) => c.method === 'POST')?.body as Record<string, unknown>;
    expect(event0).toMatchObject({ type: 'Warning', reason: 'InvalidSpec', action: 'Reconcile', reportingController: 'nvidia.com/dynamo-reconcile', reportingInstance: 'reconcile-00001' });
  });

  it('reports a persistent 500 on one object as Failed with the API server\'s message, still applies the others, and answers Transient so the broker retries', async () => {
    stored = { ...aDgd(), metadata: { ...aDgd().metadata, generation: 1 } };
    server.use(
      http.patch(`${API}/api/v1/namespaces/inference/services/my-graph-worker`, async ({ request }) => {
        await record(request);
        return HttpResponse.json({ kind: 'Status', code: 500, reason: 'InternalError', message: 'Internal error occurred: failed to allocate a serviceIP: range is full' }, { status: 500 });
      }),
    );
    const outcome = await handle(event, deps());
    expect(outcome.kind).toBe('Transient');
    expect(outcome.kind === 'Transient' ? outcome.cause : undefined).toBeInstanceOf(TransientError);
    expect(writes()).toEqual([
      'PATCH /apis/grove.io/v1alpha1/namespaces/inference/podcliquesets/my-graph',
      'PATCH /apis/rbac.authorization.k8s.io/v1/namespaces/inference/roles/my-graph-k8s-service-discovery-role',
      'PATCH /api/v1/namespaces/inference/services/my-graph-frontend',
      'PATCH /api/v1/namespaces/inference/services/my-graph-worker',
      'PATCH /api/v1/namespaces/inference/serviceaccounts/my-graph-k8s-service-discovery',
      'PATCH /apis/rbac.authorization.k8s.io/v1/namespaces/inference/rolebindings/my-graph-k8s-service-discovery-binding',
      'PATCH /apis/nvidia.com/v1beta1/namespaces/inference/dynamographdeployments/my-graph/status',
      'POST /apis/events.k8s.io/v1/namespaces/inference/events',
    ]);
    const status = calls.find((c) => c.path.endsWith('/status'))?.body as { status: { state: string; observedGeneration?: number; conditions: { reason: string; message: string }[] } };
    expect(status.status.state).toBe('failed');
    expect(status.status.observedGeneration).toBeUndefined();
    expect(status.status.conditions[0]).toMatchObject({
      reason: 'failed_to_reconcile_the_resources',
      message: 'cannot apply Service inference/my-graph-worker: 500 InternalError: Internal error occurred: failed to allocate a serviceIP: range is full',
    });
  });

  it('bounded retries: the same failure already on the status answers Permanent (left to the resync, the broker stops), with no new Event', async () => {
    const message = 'cannot apply Service inference/my-graph-worker: 500 InternalError: Internal error occurred: failed to allocate a serviceIP: range is full';
    stored = {
      ...aDgd(),
      metadata: { ...aDgd().metadata, generation: 1 },
      status: { state: 'failed', conditions: [{ type: 'Ready', status: 'False', reason: 'failed_to_reconcile_the_resources', message, lastTransitionTime: '2026-11-29T12:00:00Z' }] },
    };
    server.use(
      http.patch(`${API}/api/v1/namespaces/inference/services/my-graph-worker`, async ({ request }) => {
        await record(request);
        return HttpResponse.json({ kind: 'Status', code: 500, reason: 'InternalError', message: 'Internal error occurred: failed to allocate a serviceIP: range is full' }, { status: 500 });
      }),
    );
    await expect(handle(event, deps())).resolves.toEqual({ kind: 'Permanent', reason: 'failed_to_reconcile_the_resources', message });
    expect(writes().filter((w) => w.startsWith('POST'))).toEqual([]);
  });

  it('creates one Event per Ready transition under a deterministic name, and takes 409 AlreadyExists (another reconcile recorded it) as done', async () => {
    stored = { ...aDgd(), metadata: { ...aDgd().metadata, generation: 1 } };
    server.use(
      http.post(`${API}/apis/events.k8s.io/v1/namespaces/inference/events`, async ({ request }) => {
        await record(request);
        return HttpResponse.json({ kind: 'Status', code: 409, reason: 'AlreadyExists', message: 'events.events.k8s.io "my-graph.x" already exists' }, { status: 409 });
      }),
    );
    await expect(handle(event, deps())).resolves.toEqual({ kind: 'Done' });
    const posted = calls.filter((c) => c.method === 'POST').map((c) => (c.body as { metadata: { name: string } }).metadata.name);
    expect(posted).toHaveLength(1);
    expect(posted[0]).toMatch(/^my-graph\.[0-9a-f]{16}$/);
  });

  it('a DGD deleted during the reconcile (status answered 404) ends Done with no Event and no error logged, and removes what it created at the version it stored', async () => {
    stored = { ...aDgd(), metadata: { ...aDgd().metadata, generation: 1 } };
    server.use(
      http.patch(`${API}/apis/nvidia.com/v1beta1/namespaces/inference/dynamographdeployments/:name/status`, async ({ request }) => {
        await record(request);
        return HttpResponse.json({ kind: 'Status', code: 404, reason: 'NotFound', message: 'dynamographdeployments.nvidia.com "my-graph" not found' }, { status: 404 });
      }),
    );
    const lines: { level: number; msg: string }[] = [];
    const logged = pino({ level: 'debug' }, { write: (line: string) => lines.push(JSON.parse(line) as { level: number; msg: string }) });
    server.use(
      http.delete(`${API}/apis/grove.io/v1alpha1/namespaces/inference/podcliquesets/:name`, async ({ request }) => {
        await record(request);
        return HttpResponse.json({ kind: 'Status', status: 'Success' });
      }),
      http.delete(`${API}/api/v1/namespaces/inference/services/:name`, async ({ request }) => {
        await record(request);
        return HttpResponse.json({ kind: 'Status', status: 'Success' });
      }),
    );
    await expect(handle(event, { ...deps(), log: logged })).resolves.toEqual({ kind: 'Done' });
    expect(writes().filter((w) => w.startsWith('POST'))).toEqual([]);
    expect(writes().filter((w) => w.startsWith('DELETE'))).toEqual([
      'DELETE /apis/grove.io/v1alpha1/namespaces/inference/podcliquesets/my-graph',
      'DELETE /api/v1/namespaces/inference/services/my-graph-frontend',
      'DELETE /api/v1/namespaces/inference/services/my-graph-worker',
    ]);
    expect(calls.filter((c) => c.method === 'DELETE').map((c) => (c.body as { preconditions?: { resourceVersion?: string } }).preconditions)).toEqual([{ resourceVersion: '1' }, { resourceVersion: '1' }, { resourceVersion: '1' }]);
    expect(lines.filter((l) => l.level >= 40)).toEqual([]);
    expect(lines.map((l) => l.msg)).toContain('DynamoGraphDeployment was deleted during reconcile');
  });

  it('writes nothing for a DGD under deletion (metadata.deletionTimestamp set)', async () => {
    stored = { ...aDgd(), metadata: { ...aDgd().metadata, generation: 1, deletionTimestamp: '2026-11-29T11:00:00Z', finalizers: ['example.com/hold'] } };
    await expect(handle(event, deps())).resolves.toEqual({ kind: 'Done' });
    expect(writes()).toEqual([]);
  });

  it('reports a 422 rejection of the rendered PodCliqueSet as failed_to_reconcile_the_resources and answers Permanent (never retried forever)', async () => {
    stored = { ...aDgd(), metadata: { ...aDgd().metadata, generation: 1 } };
    server.use(
      http.patch(`${API}/apis/grove.io/v1alpha1/namespaces/inference/podcliquesets/:name`, async ({ request }) => {
        await record(request);
        return HttpResponse.json({ kind: 'Status', code: 422, reason: 'Invalid', message: 'PodCliqueSet.grove.io "my-graph" is invalid: spec.updateStrategy.type: Unsupported value' }, { status: 422 });
      }),
    );
    const outcome = await handle(event, deps());
    expect(outcome.kind).toBe('Permanent');
    const status = calls.find((c) => c.path.endsWith('/status'))?.body as { status: { state: string; conditions: { reason: string; message: string }[] } };
    expect(status.status.state).toBe('failed');
    expect(status.status.conditions[0]?.reason).toBe('failed_to_reconcile_the_resources');
    expect(status.status.conditions[0]?.message).toContain('spec.updateStrategy.type: Unsupported value');
  });
});
