/**
 * `POST /convert` over real HTTP on the admission server: the same request checks as the
 * webhooks (405, 415, 413, 400) and a ConversionReview answer, counted in `/metrics`.
 */
import pino from 'pino';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdmissionServer, type AdmissionServer } from './index.js';

const MAX_BODY_BYTES = 64 * 1024;
let server: AdmissionServer;

async function call(method: 'GET' | 'POST', body?: string | Buffer, contentType = 'application/json'): Promise<{ status: number; text: string; headers: Record<string, unknown> }> {
  const response = await request(`${server.url}/convert?timeout=30s`, { method, ...(body === undefined ? {} : { body }), headers: { 'content-type': contentType } });
  return { status: response.statusCode, text: await response.body.text(), headers: response.headers };
}

const review = JSON.stringify({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'ConversionReview',
  request: {
    uid: 'c-1',
    desiredAPIVersion: 'nvidia.com/v1alpha1',
    objects: [{ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', metadata: { name: 'g', namespace: 'ns' }, spec: { components: [{ name: 'frontend', type: 'frontend', replicas: 1, podTemplate: { spec: { containers: [{ name: 'main', image: 'f:1' }] } } }] } }],
  },
});

beforeAll(async () => {
  server = await startAdmissionServer({ port: 0, host: '127.0.0.1', config: { lpxEnabled: false }, maxBodyBytes: MAX_BODY_BYTES, shutdownDelaySeconds: 0, log: pino({ level: 'silent' }) });
});
afterAll(async () => {
  await server.close();
});

describe('POST /convert', () => {
  it('answers a ConversionReview with the converted objects (the query string the API server adds is ignored)', async () => {
    const got = await call('POST', review);
    expect(got.status).toBe(200);
    expect(got.headers['content-type']).toBe('application/json');
    expect(JSON.parse(got.text)).toEqual({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
      response: {
        uid: 'c-1',
        result: { status: 'Success' },
        convertedObjects: [{ apiVersion: 'nvidia.com/v1alpha1', kind: 'DynamoGraphDeployment', metadata: { name: 'g', namespace: 'ns' }, spec: { services: { frontend: { replicas: 1, componentType: 'frontend', extraPodSpec: { mainContainer: { image: 'f:1' } } } } } }],
      },
    });
    const metrics = await request(`${server.url}/metrics`);
    // The metric prefix is the admission server's (dynamo_admission_ or dynamo_fn_admission_).
    expect(await metrics.body.text()).toMatch(/_reviews_total\{webhook="convert",version="nvidia.com\/v1alpha1",allowed="true"\} 1\n/);
  });

  it.each([
    { name: 'a GET', method: 'GET' as const, body: undefined, contentType: 'application/json', status: 405 },
    { name: 'a body that is not JSON', method: 'POST' as const, body: '{', contentType: 'application/json', status: 400 },
    { name: 'another content type', method: 'POST' as const, body: review, contentType: 'text/plain', status: 415 },
    { name: 'a body over the limit', method: 'POST' as const, body: Buffer.alloc(MAX_BODY_BYTES + 1, 0x20), contentType: 'application/json', status: 413 },
  ])('refuses $name with $status', async ({ method, body, contentType, status }) => {
    expect((await call(method, body, contentType)).status).toBe(status);
  });
});
