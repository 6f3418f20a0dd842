/**
 * The admission server over real loopback sockets: malformed and hostile requests get a clear
 * 4xx and never crash it; well-formed reviews are answered with the request's uid; TLS works
 * with a generated CA; `serve` refuses bad flags.
 */
import { connect } from 'node:net';
import { Readable } from 'node:stream';
import { pino } from 'pino';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateServingCertificates } from '../../functions/admission/dev-certs.js';
import { exceedsNestingDepth, serve, startAdmissionServer, type AdmissionServer } from '../../functions/admission/index.js';
import { defaultDgd, validateDgd } from '../../shared/domain/index.js';
import { aComponent, aDgd, type Obj } from './admission-chain.js';

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
  server = await startAdmissionServer({ port: 0, host: '127.0.0.1', config: { lpxEnabled: false }, maxBodyBytes: MAX_BODY_BYTES, log: silent });
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

  it('answers 413 to a declared Content-Length over the limit, without reading it', async () => {
    const got = await post(VALIDATE, Buffer.alloc(MAX_BODY_BYTES + 1, 0x20));
    expect(got).toEqual({ status: 413, text: `request body exceeds ${MAX_BODY_BYTES} bytes\n` });
  });

  it('answers 413 to a chunked body that grows over the limit', async () => {
    async function* chunks(): AsyncGenerator<Buffer> {
      for (let i = 0; i < 8; i += 1) yield Buffer.alloc(64 * 1024, 0x20);
    }
    const response = await request(`${server.url}${VALIDATE}`, { method: 'POST', body: Readable.from(chunks()) });
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

  it('mutates with a base64 JSON Patch and allows', async () => {
    const got = await post(MUTATE, JSON.stringify(aReview(aDgd())));
    const response = (JSON.parse(got.text) as { response: { uid: string; allowed: boolean; patchType: string; patch: string } }).response;
    expect({ uid: response.uid, allowed: response.allowed, patchType: response.patchType }).toEqual({ uid: 'f9b3c1d2', allowed: true, patchType: 'JSONPatch' });
    expect(JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8'))).toEqual([
      { op: 'add', path: '/spec/components/1/replicas', value: 1 },
      { op: 'add', path: '/spec/components/0/replicas', value: 1 },
    ]);
  });

  it('answers a huge but legal object (25 components with large pod templates) within the limit', async () => {
    const env = Array.from({ length: 100 }, (_, i) => ({ name: `VAR_${i}`, value: 'x'.repeat(64) }));
    const components = Array.from({ length: 25 }, (_, i) => aComponent(`worker-${i}`, 'worker', { replicas: 1, podTemplate: { spec: { containers: [{ name: 'main', image: 'img:1', env }] } } }));
    const body = JSON.stringify(aReview(aDgd({ components })));
    expect(body.length).toBeLessThan(MAX_BODY_BYTES);
    const got = await post(VALIDATE, body);
    expect(got.status).toBe(200);
    expect((JSON.parse(got.text) as { response: { allowed: boolean } }).response.allowed).toBe(true);
  });

  it('counts reviews on /metrics', async () => {
    const response = await request(`${server.url}/metrics`);
    expect(await response.body.text()).toMatch(/dynamo_admission_reviews_total\{webhook="validate",version="v1beta1",allowed="false"\} \d+/);
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
    const tlsServer = await startAdmissionServer({ port: 0, host: '127.0.0.1', tls: { cert: certs.certPem, key: certs.keyPem }, config: { lpxEnabled: false }, log: silent });
    const dispatcher = new Agent({ connect: { ca: certs.caPem } });
    try {
      expect(tlsServer.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      const response = await request(`${tlsServer.url}${VALIDATE}`, { method: 'POST', body: JSON.stringify(aReview(aDgd())), dispatcher });
      expect(response.statusCode).toBe(200);
      expect((await response.body.json()) as unknown).toEqual({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'f9b3c1d2', allowed: true } });
      await expect(request(`${tlsServer.url}/healthz`)).rejects.toThrow();
    } finally {
      await dispatcher.close();
      await tlsServer.close();
    }
  });
});

describe('dynamo-fn serve admission', () => {
  const deps = (env: Record<string, string> = {}) => {
    const errors: string[] = [];
    let stop: (signal: string) => void = () => undefined;
    return {
      errors,
      stop: () => stop('SIGTERM'),
      deps: {
        env,
        writeError: (text: string) => errors.push(text),
        logDestination: { write: () => undefined },
        onShutdownSignal: (listener: (signal: string) => void) => {
          stop = listener;
          return () => undefined;
        },
      },
    };
  };

  it.each([
    { name: 'TLS files are required without --plain-http', argv: ['--port', '0'], want: /--tls-cert and --tls-key are required/ },
    { name: '--plain-http excludes TLS files', argv: ['--plain-http', '--tls-cert', 'c.pem', '--tls-key', 'k.pem'], want: /--plain-http cannot be combined/ },
    { name: 'unknown flags are refused', argv: ['--plain-http', '--verbose'], want: /Unknown option '--verbose'/ },
    { name: 'unreadable TLS files are refused', argv: ['--tls-cert', '/nonexistent/c.pem', '--tls-key', '/nonexistent/k.pem', '--port', '0'], want: /cannot read TLS material: ENOENT/ },
    { name: 'a bad LPX_ENABLED stops it before it listens', argv: ['--plain-http', '--port', '0'], env: { LPX_ENABLED: 'yes' }, want: /LPX_ENABLED must be "true" or "false", got "yes"/ },
  ])('$name', async ({ argv, env, want }) => {
    const run = deps(env);
    expect(await serve(argv, run.deps)).toBe(1);
    expect(run.errors.join('')).toMatch(want);
  });

  it('serves plain HTTP until a shutdown signal, then exits 0', async () => {
    const run = deps();
    const exit = serve(['--plain-http', '--port', '0', '--host', '127.0.0.1'], run.deps);
    await new Promise((resolve) => setTimeout(resolve, 200));
    run.stop();
    expect(await exit).toBe(0);
    expect(run.errors).toEqual([]);
  });
});
