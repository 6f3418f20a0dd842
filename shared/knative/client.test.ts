/**
 * The Knative client's HTTP fault handling. msw (served on loopback, test/support/msw-server.ts)
 * injects the faults; the happy path runs against the real API server in
 * test/integration/status.test.ts.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { http, HttpResponse } from 'msw';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startMswHttpServer, type MswHttpServer } from '../../test/support/msw-server.js';
import { createKnativeClient, KnativeClientError, type KnativeClient } from './index.js';

const SERVICE_PATH = '/apis/serving.knative.dev/v1/namespaces/dynamo-system/services/dynamo-reconcile';
const aService = { apiVersion: 'serving.knative.dev/v1', kind: 'Service', metadata: { name: 'dynamo-reconcile', namespace: 'dynamo-system' }, status: { url: 'http://dynamo-reconcile.dynamo-system.svc.cluster.local' } };

let msw: MswHttpServer;
let client: KnativeClient;

beforeAll(async () => {
  msw = await startMswHttpServer([]);
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'c', server: msw.url, skipTLSVerify: true }],
    users: [{ name: 'u', token: 'secret-token' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  client = await createKnativeClient(kubeConfig, { maxRetries: 2, minBackoffMs: 10 });
});

afterAll(async () => {
  await client.close();
  await msw.close();
});

beforeEach(() => msw.reset());

describe('Knative client over undici', () => {
  it('sends the kubeconfig bearer token and parses the Service', async () => {
    let authorization: string | null = null;
    msw.use(http.get(`*${SERVICE_PATH}`, ({ request }) => ((authorization = request.headers.get('authorization')), HttpResponse.json(aService))));
    expect((await client.getService('dynamo-system', 'dynamo-reconcile'))?.status?.url).toBe(aService.status.url);
    expect(authorization).toBe('Bearer secret-token');
  });

  it('retries a transient 503 (then answers) and gives the object', async () => {
    let calls = 0;
    msw.use(http.get(`*${SERVICE_PATH}`, () => (++calls <= 2 ? new HttpResponse('busy', { status: 503 }) : HttpResponse.json(aService))));
    expect((await client.getService('dynamo-system', 'dynamo-reconcile'))?.metadata.name).toBe('dynamo-reconcile');
    expect(calls).toBe(3);
  });

  it('gives up after the bounded retries on a 503 that does not pass, naming what failed', async () => {
    let calls = 0;
    msw.use(http.get(`*${SERVICE_PATH}`, () => (++calls, new HttpResponse('busy', { status: 503 }))));
    await expect(client.getService('dynamo-system', 'dynamo-reconcile')).rejects.toThrow('cannot get Knative Service dynamo-system/dynamo-reconcile: HTTP 503');
    expect(calls).toBe(3);
  });

  it('does not retry a 403 and reports the API server message', async () => {
    let calls = 0;
    msw.use(
      http.get(`*${SERVICE_PATH}`, () => (++calls, HttpResponse.json({ kind: 'Status', message: 'services.serving.knative.dev "dynamo-reconcile" is forbidden' }, { status: 403 }))),
    );
    const error = await client.getService('dynamo-system', 'dynamo-reconcile').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KnativeClientError);
    expect((error as KnativeClientError).status).toBe(403);
    expect((error as Error).message).toBe('cannot get Knative Service dynamo-system/dynamo-reconcile: HTTP 403: services.serving.knative.dev "dynamo-reconcile" is forbidden');
    expect(calls).toBe(1);
  });

  it('reads a 404 as not installed', async () => {
    msw.use(http.get(`*${SERVICE_PATH}`, () => HttpResponse.json({ kind: 'Status', code: 404 }, { status: 404 })));
    expect(await client.getService('dynamo-system', 'dynamo-reconcile')).toBeUndefined();
  });

  it('refuses an answer that is not JSON', async () => {
    msw.use(http.get(`*${SERVICE_PATH}`, () => new HttpResponse('<html>', { status: 200 })));
    await expect(client.getService('dynamo-system', 'dynamo-reconcile')).rejects.toThrow('cannot get Knative Service dynamo-system/dynamo-reconcile: the answer is not JSON');
  });
});
