/**
 * The admission server over real loopback sockets: malformed and hostile requests get a clear
 * 4xx and never crash it; well-formed reviews are answered with the request's uid; TLS works
 * with a generated CA; slow bodies and bursts are bounded; close() drains the way kubelet and
 * the endpoints need; `serve` refuses bad flags and applies its configuration.
 */
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect, createSecureContext } from 'node:tls';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Readable } from 'node:stream';
import { pino } from 'pino';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateServingCertificates } from '../../functions/admission/dev-certs.js';
import { DEFAULT_ADMISSION_MAX_BODY_BYTES, exceedsNestingDepth, serve, startAdmissionServer, type AdmissionServer, type AdmissionServerOptions } from '../../functions/admission/index.js';
import { defaultDgd, validateDgd } from '../../shared/domain/index.js';
import { aComponent, aDgd, type Obj } from './admission-chain.js';
import { startSlowBodyFlood } from '../support/slow-body-flood.js';

const VALIDATE = '/validate/nvidia.com/v1beta1/dynamographdeployments';
const MUTATE = '/mutate/nvidia.com/v1beta1/dynamographdeployments';
const MAX_BODY_BYTES = 256 * 1024;
const silent = pino({ level: 'silent' });

function aReview(object: unknown, requestFields: Obj = {}): Obj {
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: { uid: 'f9b3c1d2', kind: { group: 'nvidia.com', version: 'v1beta1', kind: 'DynamoGraphDeployment' }, operation: 'CREATE', namespace: 'ns', name: 'my-graph', object, ...requestFields },
  };
}

let server: AdmissionServer;

async function post(path: string, body: string | Buffer, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  const response = await request(`${server.url}${path}`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
  return { status: response.statusCode, text: await response.body.text() };
}

beforeAll(async () => {
  server = await startAdmissionServer({ port: 0, host: '127.0.0.1', config: { lpxEnabled: false }, maxBodyBytes: MAX_BODY_BYTES, shutdownDelaySeconds: 0, log: silent });
});
afterAll(async () => {
  await server.close();
});

describe('admission server: requests it cannot answer get a clear 4xx', () => {
  const rows: { name: string; path: string; body: string; want: { status: number; text: RegExp } }[] = [
    { name: 'a body that is not JSON', path: VALIDATE, body: '{"apiVersion": ', want: { status: 400, text: /^request body is not valid JSON: / } },
    { name: 'an empty body', path: VALIDATE, body: '', want: { status: 400, text: /^request body is not valid JSON: / } },
    { name: 'JSON that is not an object', path: MUTATE, body: '[1,2,3]', want: { status: 400, text: /^request body is not an admission.k8s.io\/v1 AdmissionReview with a request.uid: / } },
    { name: 'an AdmissionReview of another version', path: VALIDATE, body: JSON.stringify({ ...aReview(aDgd()), apiVersion: 'admission.k8s.io/v1beta1' }), want: { status: 400, text: /apiVersion: / } },
    { name: 'another kind than AdmissionReview', path: VALIDATE, body: JSON.stringify({ ...aReview(aDgd()), kind: 'TokenReview' }), want: { status: 400, text: /kind: / } },
    { name: 'a review without request.uid', path: VALIDATE, body: JSON.stringify(aReview(aDgd(), { uid: undefined })), want: { status: 400, text: /request\.uid: / } },
    { name: 'a review with an empty request.uid', path: MUTATE, body: JSON.stringify(aReview(aDgd(), { uid: '' })), want: { status: 400, text: /request\.uid: / } },
    { name: 'an unknown operation', path: VALIDATE, body: JSON.stringify(aReview(aDgd(), { operation: 'PATCH' })), want: { status: 400, text: /request\.operation: / } },
    { name: 'a body nested far deeper than any object', path: VALIDATE, body: `${'['.repeat(100_000)}${']'.repeat(100_000)}`, want: { status: 400, text: /^request body nests deeper than 100 levels/ } },
    { name: 'a deeply nested object inside a valid review', path: VALIDATE, body: JSON.stringify(aReview({ ...aDgd(), spec: 'DEEP' })).replace('"DEEP"', `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`), want: { status: 400, text: /nests deeper/ } },
  ];
  it.each(rows)('$name', async ({ path, body, want }) => {
    const got = await post(path, body);
    expect(got.status).toBe(want.status);
    expect(got.text).toMatch(want.text);
  });

  it('a v1beta1 DGD mutation with a deeply nested value in its object is defaulted (nothing in the mutation recurses over the body), and the same body is still refused by validation and by a mutation of another envelope', async () => {
    const deep = `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`;
    const dgd = { ...aDgd(), spec: { ...(aDgd()['spec'] as Obj), components: [aComponent('Frontend', 'frontend', { podTemplate: { metadata: { labels: 'DEEP' } } })] } } as Obj;
    delete ((dgd['spec'] as Obj)['components'] as Obj[])[0]?.['replicas'];
    const body = JSON.stringify(aReview(dgd)).replace('"DEEP"', deep);
    const mutated = await post(MUTATE, body);
    expect(mutated.status).toBe(200);
    const response = (JSON.parse(mutated.text) as { response: { allowed: boolean; patch: string } }).response;
    expect(response.allowed).toBe(true);
    expect(JSON.parse(Buffer.from(response.patch, 'base64').toString())).toContainEqual({ op: 'add', path: '/spec/components/0/replicas', value: 1 });
    expect(await post(VALIDATE, body)).toEqual({ status: 400, text: 'request body nests deeper than 100 levels\n' });
    const v1alpha1Path = MUTATE.replace('v1beta1', 'v1alpha1');
    expect(await post(v1alpha1Path, body)).toEqual({ status: 400, text: 'request body nests deeper than 100 levels\n' });
    expect(await post(MUTATE, JSON.stringify(aReview({ ...dgd, apiVersion: 'DEEP' })).replace('"DEEP"', deep))).toEqual({ status: 400, text: 'request body nests deeper than 100 levels\n' });
  });

  it('answers 413 to a declared Content-Length over the limit, without reading it', async () => {
    const got = await post(VALIDATE, Buffer.alloc(MAX_BODY_BYTES + 1, 0x20));
    expect(got).toEqual({ status: 413, text: `request body exceeds ${MAX_BODY_BYTES} bytes\n` });
  });

  it('answers 413 to a chunked body that grows over the limit', async () => {
    async function* chunks(): AsyncGenerator<Buffer> {
      for (let i = 0; i < 8; i += 1) yield Buffer.alloc(64 * 1024, 0x20);
    }
    const response = await request(`${server.url}${VALIDATE}`, { method: 'POST', body: Readable.from(chunks()), headers: { 'content-type': 'application/json' } });
    expect(response.statusCode).toBe(413);
    await response.body.text().catch(() => '');
  });

  it.each([
    { name: 'an unknown path', method: 'POST' as const, path: '/validate/nvidia.com/v1/dynamographdeployments', want: 404 },
    { name: 'a GET on a webhook path', method: 'GET' as const, path: VALIDATE, want: 405 },
    { name: 'liveness', method: 'GET' as const, path: '/healthz', want: 200 },
    { name: 'readiness', method: 'GET' as const, path: '/readyz', want: 200 },
  ])('$name -> $want', async ({ method, path, want }) => {
    const response = await request(`${server.url}${path}`, { method });
    await response.body.text();
    expect(response.statusCode).toBe(want);
  });

  it('answers a garbled HTTP request line with 400 and stays up', async () => {
    const text = await new Promise<string>((resolve, reject) => {
      const socket = connect(server.port, '127.0.0.1', () => socket.write('NOT HTTP AT ALL\r\n\r\n'));
      let received = '';
      socket.on('data', (d) => (received += d.toString()));
      socket.on('end', () => resolve(received));
      socket.on('error', reject);
    });
    expect(text).toMatch(/^HTTP\/1\.1 400 Bad Request/);
    expect((await post(VALIDATE, JSON.stringify(aReview(aDgd())))).status).toBe(200);
  });
});

describe('admission server: well-formed reviews it does not admit are denied with code 400', () => {
  const rows: { name: string; path: string; review: Obj; want: { allowed: boolean; code?: number; message?: string } }[] = [
    {
      name: 'another kind (a Pod)',
      path: VALIDATE,
      review: aReview({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } }, { kind: { group: '', version: 'v1', kind: 'Pod' } }),
      want: { allowed: false, code: 400, message: 'this webhook admits nvidia.com/v1beta1, Kind=DynamoGraphDeployment, not /v1, Kind=Pod' },
    },
    {
      name: 'a v1alpha1 object sent to the v1beta1 path',
      path: VALIDATE,
      review: aReview({ ...aDgd(), apiVersion: 'nvidia.com/v1alpha1' }),
      want: { allowed: false, code: 400, message: 'request.object must be a nvidia.com/v1beta1 DynamoGraphDeployment, not "nvidia.com/v1alpha1" "DynamoGraphDeployment"' },
    },
    { name: 'an object that is not an object', path: MUTATE, review: aReview('a string'), want: { allowed: false, code: 400, message: 'request.object must be an object' } },
    { name: 'a CREATE without an object', path: VALIDATE, review: aReview(undefined), want: { allowed: false, code: 400, message: 'request.object must be an object' } },
    { name: 'an UPDATE without oldObject (issue 12)', path: VALIDATE, review: aReview(aDgd(), { operation: 'UPDATE' }), want: { allowed: false, code: 400, message: 'request.oldObject must be an object on UPDATE' } },
    { name: 'an UPDATE whose oldObject is not an object (issue 12)', path: MUTATE, review: aReview(aDgd(), { operation: 'UPDATE', oldObject: [1] }), want: { allowed: false, code: 400, message: 'request.oldObject must be an object on UPDATE' } },
    {
      name: 'an UPDATE whose oldObject is another kind (issue 12)',
      path: VALIDATE,
      review: aReview(aDgd(), { operation: 'UPDATE', oldObject: { apiVersion: 'v1', kind: 'ConfigMap' } }),
      want: { allowed: false, code: 400, message: 'request.oldObject must be a nvidia.com/v1beta1 DynamoGraphDeployment, not "v1" "ConfigMap"' },
    },
    { name: 'DELETE is always allowed (deletion is never refused)', path: VALIDATE, review: aReview(null, { operation: 'DELETE', oldObject: aDgd() }), want: { allowed: true } },
    { name: 'a status subresource update is allowed untouched', path: VALIDATE, review: aReview({ ...aDgd(), spec: {} }, { operation: 'UPDATE', subResource: 'status', oldObject: aDgd() }), want: { allowed: true } },
  ];
  it.each(rows)('$name', async ({ path, review, want }) => {
    const got = await post(path, JSON.stringify(review));
    expect(got.status).toBe(200);
    const response = (JSON.parse(got.text) as { response: { uid: string; allowed: boolean; status?: { code: number; message: string } } }).response;
    expect(response.uid).toBe('f9b3c1d2');
    expect({ allowed: response.allowed, code: response.status?.code, message: response.status?.message }).toEqual({ allowed: want.allowed, code: want.code, message: want.message });
  });
});

describe('admission server: answers', () => {
  it('denies with code 422 and one message listing every field error with its full path', async () => {
    const dgd = aDgd({
      annotations: { 'nvidia.com/grove-update-strategy': 'coherent' },
      components: [aComponent('frontend', 'frontend', { replicas: 1 }), aComponent('worker', 'worker', { replicas: 2, providerOverride: { apiVersion: 'grove.io/v1alpha1', target: 'PodCliqueTemplateSpec', value: { rollingUpdate: { maxUnavailable: 0 } } } })],
    });
    const got = await post(`${VALIDATE}?timeout=10s`, JSON.stringify(aReview(dgd)));
    expect(got.status).toBe(200);
    expect(JSON.parse(got.text)).toEqual({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: {
        uid: 'f9b3c1d2',
        allowed: false,
        status: {
          code: 422,
          reason: 'Invalid',
          message:
            'DynamoGraphDeployment.nvidia.com "my-graph" is invalid: [metadata.annotations[nvidia.com/grove-update-strategy]: Unsupported value: "coherent": supported values: "Coherent", "RollingRecreate", "OnDelete", spec.components[1].providerOverride.value.rollingUpdate.maxUnavailable: Invalid value: 0: must be a positive 32-bit integer]',
          details: {
            name: 'my-graph',
            group: 'nvidia.com',
            kind: 'DynamoGraphDeployment',
            causes: [
              { reason: 'FieldValueNotSupported', field: 'metadata.annotations[nvidia.com/grove-update-strategy]', message: 'Unsupported value: "coherent": supported values: "Coherent", "RollingRecreate", "OnDelete"' },
              { reason: 'FieldValueInvalid', field: 'spec.components[1].providerOverride.value.rollingUpdate.maxUnavailable', message: 'Invalid value: 0: must be a positive 32-bit integer' },
            ],
          },
        },
      },
    });
  });

  it('mutates with a base64 JSON Patch and allows (a CREATE also gets upstream\'s stamps: the origin version = OPERATOR_VERSION default 1.6.1, the workload provider grove)', async () => {
    const got = await post(MUTATE, JSON.stringify(aReview(aDgd())));
    const response = (JSON.parse(got.text) as { response: { uid: string; allowed: boolean; patchType: string; patch: string } }).response;
    expect({ uid: response.uid, allowed: response.allowed, patchType: response.patchType }).toEqual({ uid: 'f9b3c1d2', allowed: true, patchType: 'JSONPatch' });
    expect(JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8'))).toEqual([
      { op: 'add', path: '/spec/components/1/replicas', value: 1 },
      { op: 'add', path: '/spec/components/0/replicas', value: 1 },
      { op: 'add', path: '/metadata/annotations', value: { 'nvidia.com/workload-provider': 'grove', 'nvidia.com/dynamo-operator-origin-version': '1.6.1' } },
    ]);
  });

  it('answers a huge but legal object (25 components with large pod templates) within the limit', async () => {
    const env = Array.from({ length: 100 }, (_, i) => ({ name: `VAR_${i}`, value: 'x'.repeat(64) }));
    const components = Array.from({ length: 25 }, (_, i) => aComponent(`worker-${i}`, 'worker', { replicas: 1, podTemplate: { spec: { containers: [{ name: 'main', image: 'img:1.6.1', env }] } } }));
    const body = JSON.stringify(aReview(aDgd({ components })));
    expect(body.length).toBeLessThan(MAX_BODY_BYTES);
    const got = await post(VALIDATE, body);
    expect(got.status).toBe(200);
    expect((JSON.parse(got.text) as { response: { allowed: boolean } }).response.allowed).toBe(true);
  });

  it('counts reviews on /metrics', async () => {
    const response = await request(`${server.url}/metrics`);
    expect(await response.body.text()).toMatch(/dynamo_fn_admission_reviews_total\{webhook="validate",version="v1beta1",allowed="false"\} \d+/);
  });
});

/** A small deterministic PRNG (mulberry32), so fuzz failures reproduce. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ODD_VALUES: readonly unknown[] = [null, 0, -1, 1.5, 2 ** 53, '', 'x', '50%', true, [], {}, [null], { a: { b: {} } }, 'Coherent', 'lpx', -0];

/** Replaces, deletes or retypes one randomly chosen node of `value`. */
function mutateAt(value: unknown, random: () => number): unknown {
  if (typeof value !== 'object' || value === null) return ODD_VALUES[Math.floor(random() * ODD_VALUES.length)];
  const copy: Record<string, unknown> | unknown[] = Array.isArray(value) ? [...(value as unknown[])] : { ...(value as Record<string, unknown>) };
  const keys = Object.keys(copy);
  if (keys.length === 0 || random() < 0.15) return ODD_VALUES[Math.floor(random() * ODD_VALUES.length)];
  const key = keys[Math.floor(random() * keys.length)] as string;
  const target = copy as Record<string, unknown>;
  if (random() < 0.2) delete target[key];
  else target[key] = mutateAt(target[key], random);
  return copy;
}

describe('admission server: fuzzed reviews', () => {
  it('answers 400 or an AdmissionReview to every mutated review, never 5xx, and stays up', async () => {
    const random = prng(20261129);
    const base = aReview(
      aDgd({
        annotations: { 'nvidia.com/grove-update-strategy': 'Coherent' },
        components: [
          aComponent('frontend', 'frontend', { replicas: 1 }),
          aComponent('decode', 'decode', { replicas: 2, multinode: { nodeCount: 2 }, minAvailable: 1, providerOverride: { apiVersion: 'grove.io/v1alpha1', value: { minAvailable: 1, rollingUpdate: { maxUnavailable: 2 } } } }),
          aComponent('lpx', 'lpx', { replicas: 1, lpx: { buildId: 'b' }, roles: [{ name: 'agent', podTemplate: { spec: { containers: [{ name: 'main', image: 'a' }] } } }] }),
        ],
        spec: { restart: { strategy: { type: 'Parallel' } }, topologyConstraint: { clusterTopologyName: 't' } },
      }),
      { operation: 'UPDATE', oldObject: aDgd() },
    );
    const statuses = new Map<number, number>();
    for (let i = 0; i < 400; i += 1) {
      // Mostly inside the object (where the rules are), sometimes anywhere in the envelope.
      const isEnvelope = random() < 0.2;
      let node: unknown = isEnvelope ? base : (base['request'] as Obj)['object'];
      const edits = 1 + Math.floor(random() * 4);
      for (let e = 0; e < edits; e += 1) node = mutateAt(node, random);
      const review = isEnvelope ? node : { ...base, request: { ...(base['request'] as Obj), object: node } };
      const path = random() < 0.5 ? VALIDATE : MUTATE;
      const got = await post(path, JSON.stringify(review) ?? 'null');
      statuses.set(got.status, (statuses.get(got.status) ?? 0) + 1);
      expect([200, 400], `review ${i}: ${got.text.slice(0, 200)}`).toContain(got.status);
      if (got.status === 200) expect((JSON.parse(got.text) as { response: { uid: unknown } }).response.uid).toBeTypeOf('string');
    }
    expect(statuses.get(200)).toBeGreaterThan(100);
    expect((await request(`${server.url}/healthz`)).statusCode).toBe(200);
  });
});

describe('admission decisions: fuzzed objects', () => {
  it('defaultDgd and validateDgd never throw, and validation results are deterministic', () => {
    const random = prng(424242);
    const base = aDgd({
      annotations: { 'nvidia.com/grove-update-strategy': 'Coherent' },
      components: [
        aComponent('frontend', 'frontend', { replicas: 1 }),
        aComponent('decode', 'decode', { replicas: 2, multinode: { nodeCount: 2 }, providerOverride: { apiVersion: 'grove.io/v1alpha1', value: { minAvailable: 1, rollingUpdate: { maxUnavailable: 2 } } }, roles: [{ name: 'leader', providerOverride: { apiVersion: 'grove.io/v1alpha1', value: { topologyConstraint: { packDomain: 'host' } } } }] }),
        aComponent('prefill', 'prefill', { replicas: 2, minAvailable: 1 }),
      ],
      spec: { providerOverride: { apiVersion: 'grove.io/v1alpha1', value: { spec: { template: { topologyConstraint: { packDomain: 'zone' } } } } } },
    });
    for (let i = 0; i < 3000; i += 1) {
      let object: unknown = base;
      const edits = 1 + Math.floor(random() * 5);
      for (let e = 0; e < edits; e += 1) object = mutateAt(object, random);
      const old = random() < 0.5 ? base : undefined;
      const defaulted = defaultDgd(object);
      const config = { lpxEnabled: random() < 0.5 };
      const first = validateDgd(defaulted, old, config);
      expect(validateDgd(structuredClone(defaulted), old, config), `deterministic (${i})`).toEqual(first);
      expect(defaultDgd(defaulted), `defaulting is idempotent (${i})`).toEqual(defaulted);
      expect(first.issues.every((issue) => typeof issue.path === 'string' && issue.detail.length > 0)).toBe(true);
    }
  });
});

describe('exceedsNestingDepth', () => {
  it.each([
    { name: 'a scalar', value: 1, limit: 0, want: false },
    { name: 'an object at the limit', value: { a: { b: 1 } }, limit: 2, want: false },
    { name: 'an object past the limit', value: { a: { b: {} } }, limit: 2, want: true },
    { name: 'arrays count as levels', value: [[[]]], limit: 2, want: true },
  ])('$name', ({ value, limit, want }) => {
    expect(exceedsNestingDepth(value, limit)).toBe(want);
  });
});

describe('admission server over TLS', () => {
  it('serves AdmissionReviews to a client trusting the generated CA', async () => {
    const certs = await generateServingCertificates();
    const tlsServer = await startAdmissionServer({ port: 0, host: '127.0.0.1', tls: { cert: certs.certPem, key: certs.keyPem }, config: { lpxEnabled: false }, shutdownDelaySeconds: 0, log: silent });
    const dispatcher = new Agent({ connect: { ca: certs.caPem } });
    try {
      expect(tlsServer.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      const response = await request(`${tlsServer.url}${VALIDATE}`, { method: 'POST', body: JSON.stringify(aReview(aDgd())), headers: { 'content-type': 'application/json' }, dispatcher });
      expect(response.statusCode).toBe(200);
      expect((await response.body.json()) as unknown).toEqual({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'f9b3c1d2', allowed: true } });
      await expect(request(`${tlsServer.url}/healthz`)).rejects.toThrow();
    } finally {
      await dispatcher.close();
      await tlsServer.close();
    }
  });
});

/** Resolves 'connected' with the negotiated cipher, or the handshake's error code. */
function tlsHandshake(port: number, options: { ca: string; ciphers?: string; maxVersion?: 'TLSv1.2' | 'TLSv1.1' | 'TLSv1.3'; minVersion?: 'TLSv1' | 'TLSv1.1' | 'TLSv1.2' }): Promise<string> {
  return new Promise((resolve) => {
    const socket = tlsConnect({ port, host: '127.0.0.1', servername: 'localhost', ...options }, () => {
      const cipher = socket.getCipher().name;
      socket.destroy();
      resolve(`connected ${cipher}`);
    });
    socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

describe('admission server TLS hardening (issue 12)', () => {
  it.each([
    { name: 'TLS 1.3', options: { maxVersion: 'TLSv1.3' as const }, want: /^connected TLS_/ },
    { name: 'TLS 1.2 with ECDHE (forward secret)', options: { maxVersion: 'TLSv1.2' as const, ciphers: 'ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES128-GCM-SHA256' }, want: /^connected ECDHE-/ },
    { name: 'TLS 1.2 with static RSA key exchange only (no forward secrecy): refused', options: { maxVersion: 'TLSv1.2' as const, ciphers: 'AES128-GCM-SHA256:AES256-GCM-SHA384' }, want: /^(?!connected)/ },
    { name: 'TLS 1.2 with finite-field DHE only: refused', options: { maxVersion: 'TLSv1.2' as const, ciphers: 'DHE-RSA-AES128-GCM-SHA256' }, want: /^(?!connected)/ },
    { name: 'TLS 1.1: refused', options: { maxVersion: 'TLSv1.1' as const, minVersion: 'TLSv1' as const, ciphers: 'DEFAULT:@SECLEVEL=0' }, want: /^(?!connected)/ },
  ])('$name', async ({ options, want }) => {
    const certs = await generateServingCertificates();
    const tlsServer = await aServer({ tls: { cert: certs.certPem, key: certs.keyPem } });
    try {
      expect(await tlsHandshake(tlsServer.port, { ca: certs.caPem, ...options })).toMatch(want);
    } finally {
      await tlsServer.close();
    }
  });

  it('"if (ca) addCACerts(...) else context.addRootCerts()" (Node 24 lib/internal/tls/secure-context.js): the serving contexts load none of Node\'s root certificates (a cold start\'s 13-18 ms), and a client trusting the generated CA still gets its review answered', async () => {
    // The native SecureContext's prototype, shared by every context this process makes.
    const native = Object.getPrototypeOf((createSecureContext({ ca: [] }) as unknown as { context: object }).context) as { addRootCerts: (...args: unknown[]) => unknown };
    const addRootCerts = native.addRootCerts;
    let rootLoads = 0;
    native.addRootCerts = function (this: unknown, ...args: unknown[]) {
      rootLoads += 1;
      return addRootCerts.apply(this, args);
    };
    const certs = await generateServingCertificates();
    const dir = await mkdtemp(join(tmpdir(), 'admission-roots-'));
    try {
      // The check that the rule still holds for this Node: a context without `ca` loads them.
      createSecureContext({});
      expect(rootLoads).toBe(1);
      rootLoads = 0;
      await writeFile(join(dir, 'tls.crt'), certs.certPem);
      await writeFile(join(dir, 'tls.key'), certs.keyPem);
      const tlsServer = await aServer({ tls: { certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key') } });
      const dispatcher = new Agent({ connect: { ca: certs.caPem } });
      try {
        const response = await request(`${tlsServer.url}${VALIDATE}`, { method: 'POST', body: JSON.stringify(aReview(aDgd())), headers: { 'content-type': 'application/json' }, dispatcher });
        expect({ status: response.statusCode, body: (await response.body.json()) as unknown }).toEqual({ status: 200, body: { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'f9b3c1d2', allowed: true } } });
        // The client's context has its `ca` too: no context of the exchange loaded the roots.
        expect(rootLoads).toBe(0);
      } finally {
        await dispatcher.close();
        await tlsServer.close();
      }
    } finally {
      native.addRootCerts = addRootCerts;
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('reloads a rotated certificate from its files without dropping open connections', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'admission-tls-'));
    const certFile = join(dir, 'tls.crt');
    const keyFile = join(dir, 'tls.key');
    const before = await generateServingCertificates();
    await writeFile(certFile, before.certPem);
    await writeFile(keyFile, before.keyPem);
    const tlsServer = await aServer({ tls: { certFile, keyFile }, tlsReloadIntervalMs: 50 });
    const oldClient = new Agent({ connect: { ca: before.caPem }, keepAliveTimeout: 60_000 });
    try {
      const first = await request(`${tlsServer.url}${VALIDATE}`, { method: 'POST', body: REVIEW, headers: { 'content-type': 'application/json' }, dispatcher: oldClient });
      expect(first.statusCode).toBe(200);
      await first.body.text();

      // cert-manager rotates: a new CA and serving pair, swapped in as kubelet swaps a Secret volume.
      const after = await generateServingCertificates();
      await writeFile(`${certFile}.new`, after.certPem);
      await writeFile(`${keyFile}.new`, after.keyPem);
      await rename(`${keyFile}.new`, keyFile);
      await rename(`${certFile}.new`, certFile);
      const rotated = new Agent({ connect: { ca: after.caPem } });
      try {
        let status = 0;
        for (let attempt = 0; attempt < 50 && status !== 200; attempt += 1) {
          try {
            const response = await request(`${tlsServer.url}/readyz`, { dispatcher: rotated });
            status = response.statusCode;
            await response.body.text();
          } catch {
            await sleep(50);
          }
        }
        expect(status).toBe(200);
      } finally {
        await rotated.close();
      }
      // The connection made before the rotation still carries reviews.
      const again = await request(`${tlsServer.url}${VALIDATE}`, { method: 'POST', body: REVIEW, headers: { 'content-type': 'application/json' }, dispatcher: oldClient });
      expect(again.statusCode).toBe(200);
      await again.body.text();
      // A client that trusts only the old CA cannot make a new connection any more.
      expect(await tlsHandshake(tlsServer.port, { ca: before.caPem })).not.toMatch(/^connected/);
    } finally {
      await oldClient.close();
      await tlsServer.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

/** A raw HTTP/1.1 client connection, so a test can send part of a request and watch the socket. */
interface RawConnection {
  readonly socket: Socket;
  /** Resolves with the next complete response (head and Content-Length body); rejects after `timeoutMs`. */
  nextResponse(timeoutMs?: number): Promise<RawResponse>;
  /** Resolves once the server has closed the connection (FIN or reset). */
  readonly closed: Promise<void>;
  readonly isClosed: () => boolean;
}

interface RawResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

async function openRaw(port: number, options: { localAddress?: string; tls?: { ca: string } } = {}): Promise<RawConnection> {
  const socket: Socket =
    options.tls === undefined
      ? connect({ port, host: '127.0.0.1', ...(options.localAddress === undefined ? {} : { localAddress: options.localAddress }) })
      : tlsConnect({ port, host: '127.0.0.1', servername: 'localhost', ca: options.tls.ca, ...(options.localAddress === undefined ? {} : { localAddress: options.localAddress }) });
  const readyEvent = options.tls === undefined ? 'connect' : 'secureConnect';
  await new Promise<void>((resolve, reject) => {
    socket.once(readyEvent, resolve);
    socket.once('error', reject);
  });
  let buffer = '';
  let isClosed = false;
  const waiters: (() => void)[] = [];
  const wake = (): void => {
    for (const waiter of waiters.splice(0)) waiter();
  };
  socket.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('latin1');
    wake();
  });
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => {
    const onClosed = (): void => {
      isClosed = true;
      wake();
      resolve();
    };
    socket.once('end', onClosed);
    socket.once('close', onClosed);
  });
  const takeResponse = (): RawResponse | undefined => {
    const headEnd = buffer.indexOf('\r\n\r\n');
    if (headEnd === -1) return undefined;
    const [statusLine = '', ...lines] = buffer.slice(0, headEnd).split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    if (buffer.length < headEnd + 4 + length) return undefined;
    const body = buffer.slice(headEnd + 4, headEnd + 4 + length);
    buffer = buffer.slice(headEnd + 4 + length);
    return { status: Number(statusLine.split(' ')[1]), headers, body };
  };
  return {
    socket,
    closed,
    isClosed: () => isClosed,
    async nextResponse(timeoutMs = 5000): Promise<RawResponse> {
      const deadline = performance.now() + timeoutMs;
      for (;;) {
        const response = takeResponse();
        if (response !== undefined) return response;
        if (isClosed) throw new Error(`connection closed without a complete response; received ${JSON.stringify(buffer.slice(0, 200))}`);
        const remaining = deadline - performance.now();
        if (remaining <= 0) throw new Error(`no response within ${timeoutMs} ms`);
        await Promise.race([new Promise<void>((resolve) => waiters.push(resolve)), sleep(remaining)]);
      }
    },
  };
}

/** The head of a POST of `bodyBytes` bytes. */
function postHead(path: string, bodyBytes: number, headers: Record<string, string> = {}): string {
  const lines = Object.entries({ host: '127.0.0.1', 'content-type': 'application/json', 'content-length': String(bodyBytes), ...headers }).map(([name, value]) => `${name}: ${value}\r\n`);
  return `POST ${path} HTTP/1.1\r\n${lines.join('')}\r\n`;
}

function get(path: string): string {
  return `GET ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n`;
}

/** Resolves to the error code when a new connection to `port` fails, or 'connected'. */
function tryConnect(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

const REVIEW = JSON.stringify(aReview(aDgd()));

async function aServer(overrides: Partial<AdmissionServerOptions> = {}): Promise<AdmissionServer> {
  return startAdmissionServer({ port: 0, host: '127.0.0.1', config: { lpxEnabled: false }, shutdownDelaySeconds: 0, log: silent, ...overrides });
}

function uidOf(response: RawResponse): unknown {
  return (JSON.parse(response.body) as { response: { uid: unknown } }).response.uid;
}

describe('admission server: close() drains', () => {
  it('turns /readyz 503 at once, keeps answering reviews for the shutdown delay with Connection: close, then refuses connections', async () => {
    const drained = await aServer({ shutdownDelaySeconds: 0.6 });
    const kept = await openRaw(drained.port);
    kept.socket.write(postHead(VALIDATE, Buffer.byteLength(REVIEW)) + REVIEW);
    const before = await kept.nextResponse();
    expect({ status: before.status, connection: before.headers['connection'] }).toEqual({ status: 200, connection: 'keep-alive' });

    const startedAt = performance.now();
    const closing = drained.close();

    const probe = await openRaw(drained.port);
    probe.socket.write(get('/readyz'));
    expect((await probe.nextResponse()).status).toBe(503);
    kept.socket.write(postHead(VALIDATE, Buffer.byteLength(REVIEW)) + REVIEW);
    const onKeptAlive = await kept.nextResponse();
    expect({ status: onKeptAlive.status, uid: uidOf(onKeptAlive), connection: onKeptAlive.headers['connection'] }).toEqual({ status: 200, uid: 'f9b3c1d2', connection: 'close' });
    await kept.closed;
    const fresh = await openRaw(drained.port);
    fresh.socket.write(postHead(MUTATE, Buffer.byteLength(REVIEW)) + REVIEW);
    const onFresh = await fresh.nextResponse();
    expect({ status: onFresh.status, connection: onFresh.headers['connection'] }).toEqual({ status: 200, connection: 'close' });

    await closing;
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(550);
    expect(await tryConnect(drained.port)).toBe('ECONNREFUSED');
  });

  it('answers a review that was half sent when close() was called', async () => {
    const drained = await aServer({ shutdownDelaySeconds: 0 });
    const connection = await openRaw(drained.port);
    const half = Math.floor(REVIEW.length / 2);
    connection.socket.write(postHead(VALIDATE, Buffer.byteLength(REVIEW)) + REVIEW.slice(0, half));
    await sleep(100);

    const closing = drained.close();
    await sleep(100);
    connection.socket.write(REVIEW.slice(half));
    const answer = await connection.nextResponse();

    expect({ status: answer.status, uid: uidOf(answer), connection: answer.headers['connection'] }).toEqual({ status: 200, uid: 'f9b3c1d2', connection: 'close' });
    await closing;
    await connection.closed;
  });

  it('closes idle kept-alive connections once it stops accepting', async () => {
    const drained = await aServer({ shutdownDelaySeconds: 0.3 });
    const idle = await openRaw(drained.port);
    idle.socket.write(get('/healthz'));
    expect((await idle.nextResponse()).status).toBe(200);

    const startedAt = performance.now();
    const closing = drained.close();
    await idle.closed;
    const closedAfterMs = performance.now() - startedAt;
    await closing;

    expect(closedAfterMs).toBeGreaterThanOrEqual(250);
    expect(closedAfterMs).toBeLessThan(2000);
  });

  it('cuts a review still unfinished when the drain timeout passes', async () => {
    const drained = await aServer({ shutdownDelaySeconds: 0, drainTimeoutSeconds: 0.5, bodyTimeoutMs: 60_000 });
    const stuck = await openRaw(drained.port);
    stuck.socket.write(postHead(VALIDATE, Buffer.byteLength(REVIEW)) + REVIEW.slice(0, 10));
    await sleep(50);

    const startedAt = performance.now();
    await drained.close();

    expect(performance.now() - startedAt).toBeLessThan(2000);
    await stuck.closed;
  });
});

describe('admission server: slow bodies and bursts are bounded', () => {
  it('answers 408 to a body that trickles in, and closes the connection', async () => {
    const slow = await aServer({ bodyTimeoutMs: 500 });
    try {
      const connection = await openRaw(slow.port);
      const startedAt = performance.now();
      connection.socket.write(postHead(VALIDATE, 100_000));
      const answered = connection.nextResponse(5000);
      // One byte every 50 ms, as long as the server keeps the connection (bounded: 5 s).
      for (let sent = 0; sent < 100 && !connection.isClosed(); sent += 1) {
        connection.socket.write(' ');
        await sleep(50);
      }
      const answer = await answered;
      expect({ status: answer.status, connection: answer.headers['connection'], body: answer.body }).toEqual({ status: 408, connection: 'close', body: 'request body not received within 500 ms\n' });
      await connection.closed;
      expect(performance.now() - startedAt).toBeLessThan(4000);
    } finally {
      await slow.close();
    }
  });

  it('a slow body holds no review slot: six slow-body clients leave a whole review answered at once (issue 12)', async () => {
    const bounded = await aServer({ bodyTimeoutMs: 60_000 });
    const slow: RawConnection[] = [];
    try {
      for (let index = 0; index < 6; index += 1) {
        const connection = await openRaw(bounded.port);
        connection.socket.write(postHead(VALIDATE, Buffer.byteLength(REVIEW)) + REVIEW.slice(0, 10));
        slow.push(connection);
      }
      await sleep(50);
      const valid = await openRaw(bounded.port);
      const startedAt = performance.now();
      valid.socket.write(postHead(MUTATE, Buffer.byteLength(REVIEW)) + REVIEW);
      expect((await valid.nextResponse(1000)).status).toBe(200);
      expect(performance.now() - startedAt).toBeLessThan(1000);
      const metrics = await request(`${bounded.url}/metrics`);
      expect(await metrics.body.text()).toMatch(/dynamo_fn_admission_reviews_active 6/);
    } finally {
      for (const connection of slow) connection.socket.destroy();
      await bounded.close();
    }
  });

  it('holds at most maxBufferedBodyBytes of bodies, counted as received, and queues the rest until bytes free up', async () => {
    const bounded = await aServer({ maxBufferedBodyBytes: Buffer.byteLength(REVIEW) });
    try {
      const first = await openRaw(bounded.port);
      const half = Math.floor(REVIEW.length / 2);
      first.socket.write(postHead(VALIDATE, Buffer.byteLength(REVIEW)) + REVIEW.slice(0, half));
      await sleep(50);
      const second = await openRaw(bounded.port);
      second.socket.write(postHead(MUTATE, Buffer.byteLength(REVIEW)) + REVIEW);

      await expect(second.nextResponse(300)).rejects.toThrow('no response within 300 ms');
      first.socket.write(REVIEW.slice(half));

      expect((await first.nextResponse()).status).toBe(200);
      expect((await second.nextResponse()).status).toBe(200);
      const metrics = await request(`${bounded.url}/metrics`);
      expect(await metrics.body.text()).toMatch(/dynamo_fn_admission_reviews_queued 0/);
    } finally {
      await bounded.close();
    }
  });

  it('frees the bytes of a queued review whose client left, at once rather than at the body timeout', async () => {
    const bounded = await aServer({ maxBufferedBodyBytes: Buffer.byteLength(REVIEW), bodyTimeoutMs: 60_000 });
    try {
      const holder = await openRaw(bounded.port);
      holder.socket.write(postHead(VALIDATE, Buffer.byteLength(REVIEW)) + REVIEW.slice(0, 10));
      await sleep(50);
      const leaver = await openRaw(bounded.port);
      leaver.socket.write(postHead(VALIDATE, Buffer.byteLength(REVIEW)) + REVIEW.slice(0, 10));
      await sleep(50);
      leaver.socket.destroy();
      await sleep(50);
      const waiting = await openRaw(bounded.port);
      waiting.socket.write(postHead(VALIDATE, Buffer.byteLength(REVIEW)) + REVIEW);
      await sleep(50);

      holder.socket.write(REVIEW.slice(10));
      expect((await holder.nextResponse()).status).toBe(200);
      expect((await waiting.nextResponse(2000)).status).toBe(200);
    } finally {
      await bounded.close();
    }
  });

  it.each([
    { name: 'the queue is full', options: { maxQueuedReviews: 0 }, want: { body: 'too many admission reviews waiting\n', minMs: 0 } },
    { name: 'no room frees up within queueTimeoutMs', options: { maxQueuedReviews: 4, queueTimeoutMs: 300 }, want: { body: 'timed out waiting for room for the admission review body\n', minMs: 280 } },
  ])('answers 429 with Retry-After when $name', async ({ options, want }) => {
    const bounded = await aServer({ maxBufferedBodyBytes: Buffer.byteLength(REVIEW), ...options });
    try {
      const holder = await openRaw(bounded.port);
      holder.socket.write(postHead(VALIDATE, Buffer.byteLength(REVIEW)) + REVIEW.slice(0, 10));
      await sleep(50);
      const refused = await openRaw(bounded.port);
      const startedAt = performance.now();
      refused.socket.write(postHead(VALIDATE, Buffer.byteLength(REVIEW)) + REVIEW);
      const answer = await refused.nextResponse();
      expect({ status: answer.status, retryAfter: answer.headers['retry-after'], connection: answer.headers['connection'], body: answer.body }).toEqual({ status: 429, retryAfter: '1', connection: 'close', body: want.body });
      expect(performance.now() - startedAt).toBeGreaterThanOrEqual(want.minMs);
      holder.socket.write(REVIEW.slice(10));
      expect((await holder.nextResponse()).status).toBe(200);
    } finally {
      await bounded.close();
    }
  });

  it('a slow-body flood (80 connections each declaring 7 MiB, a byte every 500 ms, reconnecting when cut) leaves every valid review answered within 1 s (issue 20 item 2)', async () => {
    // The default limits: 7 MiB bodies, 64 MiB budget, 3 s body deadline. The budget counts bytes
    // received, so each trickling body holds the few bytes it sent, not the 7 MiB it declared
    // (counting the declared length, 62 of 63 valid reviews got 429 "queue full").
    const defaults = await aServer();
    const flood = new Set<RawConnection>();
    let isFlooding = true;
    const trickler = async (): Promise<void> => {
      while (isFlooding) {
        const connection = await openRaw(defaults.port);
        flood.add(connection);
        connection.socket.write(postHead(VALIDATE, DEFAULT_ADMISSION_MAX_BODY_BYTES) + '{');
        while (isFlooding && !connection.isClosed()) {
          await sleep(500);
          if (!connection.isClosed()) connection.socket.write(' ');
        }
        flood.delete(connection);
        connection.socket.destroy();
      }
    };
    const tricklers = Array.from({ length: 80 }, () => trickler());
    try {
      await sleep(300);
      expect(flood.size).toBe(80);
      const answers: { status: number; ms: number }[] = [];
      // Valid reviews for 4 s, through the body deadline (3 s) and the reconnects after it.
      for (const startedAt = performance.now(); performance.now() - startedAt < 4000; ) {
        const sentAt = performance.now();
        const response = await request(`${defaults.url}${VALIDATE}`, { method: 'POST', body: REVIEW, headers: { 'content-type': 'application/json' } });
        await response.body.text();
        answers.push({ status: response.statusCode, ms: performance.now() - sentAt });
        await sleep(100);
      }
      expect(answers.length).toBeGreaterThan(10);
      expect(answers.filter((a) => a.status !== 200 || a.ms >= 1000)).toEqual([]);
      const metrics = await (await request(`${defaults.url}/metrics`)).body.text();
      const buffered = Number(/dynamo_fn_admission_body_bytes_buffered (\d+)/.exec(metrics)?.[1]);
      // What the 80 hold is what they sent: a few bytes each, nowhere near 80 x 7 MiB.
      expect(buffered).toBeLessThan(80 * 64);
    } finally {
      isFlooding = false;
      for (const connection of flood) connection.socket.destroy();
      await Promise.all(tricklers);
      await defaults.close();
    }
  }, 20_000);

  /**
   * Runs the issue's flood against `target` while valid reviews are sent every 100 ms for
   * `probeMs`; resolves every answer's status and time. Each flood connection declares
   * `declaredBytes`, sends `burstBytes` at once, then a byte every 500 ms, and reconnects when cut.
   * The flood runs in a worker thread (test/support/slow-body-flood.ts): its connections' TLS
   * handshakes and writes are the attacker's CPU, not the server's event loop's.
   */
  async function underFlood(target: { port: number; url: string; ca?: string }, flood: { connections: number; declaredBytes: number; burstBytes: number; localAddress?: string }, probeMs: number): Promise<{ answers: { status: number; ms: number }[]; peakOpen: number }> {
    const attacker = startSlowBodyFlood({ port: target.port, path: VALIDATE, ...flood, ...(target.ca === undefined ? {} : { ca: target.ca }) });
    const dispatcher = target.ca === undefined ? undefined : new Agent({ connect: { ca: target.ca, servername: 'localhost' } });
    let peakOpen = 0;
    const answers: { status: number; ms: number }[] = [];
    try {
      await Promise.all([attacker.allOpened, sleep(500)]);
      for (const startedAt = performance.now(); performance.now() - startedAt < probeMs; ) {
        const sentAt = performance.now();
        const response = await request(`${target.url}${VALIDATE}`, { method: 'POST', body: REVIEW, headers: { 'content-type': 'application/json' }, ...(dispatcher === undefined ? {} : { dispatcher }) });
        await response.body.text();
        answers.push({ status: response.statusCode, ms: performance.now() - sentAt });
        await sleep(100);
      }
    } finally {
      peakOpen = (await attacker.stop()).peakOpen;
      await dispatcher?.close();
    }
    return { answers, peakOpen };
  }

  it.each([
    { name: '80 connections', connections: 80 },
    { name: '10 connections', connections: 10 },
  ])('"valid reviews keep being answered within 1 s while any number of connections trickle bodies of any declared size up to the limit": over TLS, $name each declaring 7 MiB and trickling a byte every 500 ms (issue 20 item 2)', async ({ connections }) => {
    const certs = await generateServingCertificates();
    const tlsServer = await aServer({ tls: { cert: certs.certPem, key: certs.keyPem } });
    try {
      const { answers, peakOpen } = await underFlood({ port: tlsServer.port, url: tlsServer.url, ca: certs.caPem }, { connections, declaredBytes: DEFAULT_ADMISSION_MAX_BODY_BYTES, burstBytes: 1 }, 4000);
      expect(peakOpen).toBe(connections);
      expect(answers.length).toBeGreaterThan(10);
      expect(answers.filter((a) => a.status !== 200 || a.ms >= 1000)).toEqual([]);
    } finally {
      await tlsServer.close();
    }
  }, 30_000);

  it('"valid reviews keep being answered within 1 s": bodies that send most of what they declare at once and then stop mid-way, from another address, hold only that source\'s share of the budget (issue 20 item 2)', async () => {
    // Small limits keep the test quick; the shape is the default's (a source holds a quarter of
    // the budget, never less than one whole body). Eight connections from 127.0.0.2 each send
    // 1 MiB less 100 bytes and stall: 8 MiB wanted, 4 MiB budget. Counting bytes received alone,
    // they held the whole budget and every valid review from 127.0.0.1 waited for one of them to
    // reach the 3 s body deadline.
    // The stalled connections still queued for their source's bytes are cut by the drain timeout.
    const limited = await aServer({ maxBodyBytes: 1024 * 1024, maxBufferedBodyBytes: 4 * 1024 * 1024, drainTimeoutSeconds: 1 });
    try {
      const { answers } = await underFlood({ port: limited.port, url: limited.url }, { connections: 8, declaredBytes: 1024 * 1024, burstBytes: 1024 * 1024 - 100, localAddress: '127.0.0.2' }, 4000);
      expect(answers.length).toBeGreaterThan(10);
      expect(answers.filter((a) => a.status !== 200 || a.ms >= 1000)).toEqual([]);
    } finally {
      await limited.close();
    }
  }, 30_000);

  it('"valid reviews keep being answered within 1 s": a declared length smaller than what is sent (the rest parsed as further requests), 80 connections (issue 20 item 2)', async () => {
    const defaults = await aServer();
    try {
      const { answers } = await underFlood({ port: defaults.port, url: defaults.url }, { connections: 80, declaredBytes: 10, burstBytes: 5000, localAddress: '127.0.0.2' }, 3000);
      expect(answers.length).toBeGreaterThan(10);
      expect(answers.filter((a) => a.status !== 200 || a.ms >= 1000)).toEqual([]);
    } finally {
      await defaults.close();
    }
  }, 30_000);

  it('"valid reviews keep being answered within 1 s": 1,000 connections trickling 7 MiB declared bodies (issue 20 item 2)', async () => {
    const defaults = await aServer();
    try {
      const { answers, peakOpen } = await underFlood({ port: defaults.port, url: defaults.url }, { connections: 1000, declaredBytes: DEFAULT_ADMISSION_MAX_BODY_BYTES, burstBytes: 1, localAddress: '127.0.0.2' }, 4000);
      expect(peakOpen).toBe(1000);
      expect(answers.length).toBeGreaterThan(10);
      expect(answers.filter((a) => a.status !== 200 || a.ms >= 1000)).toEqual([]);
    } finally {
      await defaults.close();
    }
  }, 30_000);

  it('shows a client that uploads the whole 8 MiB body the 413 (default limit), not a connection reset', async () => {
    const defaults = await aServer();
    try {
      // A client that writes the whole body before it reads (allowHalfOpen: the server's FIN
      // does not end our side). Destroying a socket with unread input sends RST, and this
      // client's next write then fails with EPIPE/ECONNRESET before it has read anything.
      const socket = connect({ port: defaults.port, host: '127.0.0.1', allowHalfOpen: true });
      let received = '';
      let writeError: string | undefined;
      socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
      socket.on('error', (error: NodeJS.ErrnoException) => (writeError = error.code));
      let serverEnded = false;
      const ended = new Promise<void>((resolve) => {
        socket.once('end', resolve);
        socket.once('close', resolve);
      }).then(() => {
        serverEnded = true;
      });
      await new Promise<void>((resolve) => socket.once('connect', resolve));
      const bodyBytes = 8 * 1024 * 1024;
      socket.write(postHead(VALIDATE, bodyBytes));
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      // Stop writing once the server has ended its side: a half-open socket stays writable, and
      // waiting for 'drain' on every further write would pile up listeners that never fire.
      for (let written = 0; written < bodyBytes && !socket.destroyed && !serverEnded; written += chunk.length) {
        if (!socket.write(chunk)) await Promise.race([new Promise((resolve) => socket.once('drain', resolve)), ended]);
      }
      await ended;
      socket.destroy();

      expect({ writeError, statusLine: received.split('\r\n', 1)[0], body: received.slice(received.indexOf('\r\n\r\n') + 4) }).toEqual({
        writeError: undefined,
        statusLine: 'HTTP/1.1 413 Payload Too Large',
        body: `request body exceeds ${DEFAULT_ADMISSION_MAX_BODY_BYTES} bytes\n`,
      });
    } finally {
      await defaults.close();
    }
  });
});

describe('admission server: content type', () => {
  it.each([
    { name: 'text/plain', headers: { 'content-type': 'text/plain' } as Record<string, string>, want: 415 },
    { name: 'no Content-Type', headers: {} as Record<string, string>, want: 415 },
    { name: 'application/json-patch+json', headers: { 'content-type': 'application/json-patch+json' }, want: 415 },
    { name: 'application/json', headers: { 'content-type': 'application/json' }, want: 200 },
    { name: 'application/json with a charset', headers: { 'content-type': 'application/json; charset=utf-8' }, want: 200 },
    { name: 'Application/JSON', headers: { 'content-type': 'Application/JSON' }, want: 200 },
  ])('$name -> $want', async ({ headers, want }) => {
    const response = await request(`${server.url}${VALIDATE}`, { method: 'POST', body: Buffer.from(REVIEW), headers });
    const text = await response.body.text();
    expect(response.statusCode, text).toBe(want);
    if (want === 415) expect(text).toBe(`content type must be application/json, got ${JSON.stringify(headers['content-type'] ?? '')}\n`);
  });
});

describe('dynamo-fn serve admission', () => {
  const deps = (env: Record<string, string> = {}) => {
    const errors: string[] = [];
    const logs: Record<string, unknown>[] = [];
    let stop: (signal: string) => void = () => undefined;
    return {
      errors,
      logs,
      stop: () => stop('SIGTERM'),
      /** The 'Started admission server' line, once the server listens (bounded: 5 s). */
      async started(): Promise<Record<string, unknown>> {
        for (let waited = 0; waited < 5000; waited += 10) {
          const line = logs.find((entry) => entry['msg'] === 'Started admission server');
          if (line !== undefined) return line;
          await sleep(10);
        }
        throw new Error(`the server did not start; errors: ${errors.join('')}`);
      },
      deps: {
        env,
        writeError: (text: string) => errors.push(text),
        logDestination: { write: (line: string) => logs.push(JSON.parse(line) as Record<string, unknown>) },
        onShutdownSignal: (listener: (signal: string) => void) => {
          stop = listener;
          return () => undefined;
        },
      },
    };
  };

  it.each<{ name: string; argv: string[]; env?: Record<string, string>; want: RegExp }>([
    { name: 'TLS files are required without --plain-http', argv: ['--port', '0'], want: /--tls-cert and --tls-key are required/ },
    { name: '--plain-http excludes TLS files', argv: ['--plain-http', '--tls-cert', 'c.pem', '--tls-key', 'k.pem'], want: /--plain-http cannot be combined/ },
    { name: 'unknown flags are refused', argv: ['--plain-http', '--verbose'], want: /Unknown option '--verbose'/ },
    { name: 'unreadable TLS files are refused', argv: ['--tls-cert', '/nonexistent/c.pem', '--tls-key', '/nonexistent/k.pem', '--port', '0'], want: /cannot read TLS material: ENOENT/ },
    { name: 'a bad LPX_ENABLED stops it before it listens', argv: ['--plain-http', '--port', '0'], env: { LPX_ENABLED: 'yes' }, want: /LPX_ENABLED must be "true" or "false", got "yes"/ },
    { name: 'a bad MAX_BODY_BYTES stops it before it listens', argv: ['--plain-http', '--port', '0'], env: { MAX_BODY_BYTES: 'lots' }, want: /MAX_BODY_BYTES must be an integer/ },
    { name: 'a bad --max-body-bytes is refused', argv: ['--plain-http', '--max-body-bytes', '1e3'], want: /--max-body-bytes must be a positive integer, got "1e3"/ },
    { name: 'a bad --shutdown-delay-seconds is refused', argv: ['--plain-http', '--shutdown-delay-seconds', 'soon'], want: /--shutdown-delay-seconds must be a number of seconds from 0 to 3600, got "soon"/ },
    { name: 'a port in use names the cause', argv: ['--plain-http', '--port', 'IN_USE'], want: /^dynamo-fn serve admission: cannot start: listen EADDRINUSE: address already in use 127\.0\.0\.1:\d+\n$/ },
  ])('$name', async ({ argv, env, want }) => {
    const blocker = argv.includes('IN_USE') ? await aServer() : undefined;
    try {
      const run = deps(env);
      expect(await serve(argv.map((arg) => (arg === 'IN_USE' ? String(blocker?.port) : arg)), run.deps)).toBe(1);
      expect(run.errors.join('')).toMatch(want);
    } finally {
      await blocker?.close();
    }
  });

  it('serves plain HTTP until a shutdown signal, then exits 0', async () => {
    const run = deps();
    const exit = serve(['--plain-http', '--port', '0', '--host', '127.0.0.1', '--shutdown-delay-seconds', '0'], run.deps);
    await run.started();
    run.stop();
    expect(await exit).toBe(0);
    expect(run.errors).toEqual([]);
  });

  it('--plain-http listens on 127.0.0.1 by default and logs the bound address', async () => {
    const run = deps();
    const exit = serve(['--plain-http', '--port', '0', '--shutdown-delay-seconds', '0'], run.deps);
    const started = await run.started();
    run.stop();
    expect(await exit).toBe(0);
    expect({ url: started['url'], address: started['address'] }).toEqual({ url: `http://127.0.0.1:${String(started['port'])}`, address: '127.0.0.1' });
  });

  it.each<{ name: string; argv: string[]; env: Record<string, string>; want: number }>([
    { name: 'MAX_BODY_BYTES when set', argv: [], env: { MAX_BODY_BYTES: '1000' }, want: 1000 },
    { name: '--max-body-bytes over MAX_BODY_BYTES', argv: ['--max-body-bytes', '2000'], env: { MAX_BODY_BYTES: '1000' }, want: 2000 },
    { name: 'the admission default when MAX_BODY_BYTES is unset', argv: [], env: {}, want: 7 * 1024 * 1024 },
    { name: 'the admission default when MAX_BODY_BYTES is empty', argv: [], env: { MAX_BODY_BYTES: '' }, want: 7 * 1024 * 1024 },
  ])('limits bodies by $name', async ({ argv, env, want }) => {
    const run = deps(env);
    const exit = serve(['--plain-http', '--port', '0', '--shutdown-delay-seconds', '0', ...argv], run.deps);
    const started = await run.started();
    try {
      expect(started['maxBodyBytes']).toBe(want);
      const url = String(started['url']);
      const over = await request(`${url}${VALIDATE}`, { method: 'POST', body: Buffer.alloc(want + 1, 0x20), headers: { 'content-type': 'application/json' } });
      await over.body.text();
      expect(over.statusCode).toBe(413);
      const atLimit = await request(`${url}${VALIDATE}`, { method: 'POST', body: Buffer.alloc(want, 0x20), headers: { 'content-type': 'application/json' } });
      await atLimit.body.text();
      expect(atLimit.statusCode).toBe(400);
    } finally {
      run.stop();
      expect(await exit).toBe(0);
    }
  });

  it('on SIGTERM answers the review in flight, turns /readyz 503 and keeps accepting for the delay, then exits 0', async () => {
    const run = deps();
    const exit = serve(['--plain-http', '--port', '0', '--host', '127.0.0.1', '--shutdown-delay-seconds', '0.5'], run.deps);
    const port = Number((await run.started())['port']);
    const inFlight = await openRaw(port);
    const half = Math.floor(REVIEW.length / 2);
    inFlight.socket.write(postHead(VALIDATE, Buffer.byteLength(REVIEW)) + REVIEW.slice(0, half));
    await sleep(50);

    run.stop();
    const probe = await openRaw(port);
    probe.socket.write(get('/readyz'));
    expect((await probe.nextResponse()).status).toBe(503);
    inFlight.socket.write(REVIEW.slice(half));
    const answer = await inFlight.nextResponse();

    expect({ status: answer.status, uid: uidOf(answer), connection: answer.headers['connection'] }).toEqual({ status: 200, uid: 'f9b3c1d2', connection: 'close' });
    expect(await exit).toBe(0);
    expect(await tryConnect(port)).toBe('ECONNREFUSED');
    expect(run.logs.map((line) => line['msg'])).toEqual(expect.arrayContaining(['Received shutdown signal', 'Started draining', 'Stopped accepting connections', 'Stopped admission server']));
  });
});
