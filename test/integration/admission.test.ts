/**
 * The admission webhooks behind a real kube-apiserver: our server on 127.0.0.1 over TLS (a
 * generated CA in `caBundle`), registered by a MutatingWebhookConfiguration and a
 * ValidatingWebhookConfiguration scoped to this file's namespace. Creates and updates through the
 * API server are defaulted, denied with the field path, and their warnings reach the client as
 * `Warning` headers.
 */
import { pino } from 'pino';
import { Agent, request, type Dispatcher } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateServingCertificates } from '../../functions/admission/dev-certs.js';
import { startAdmissionServer, type AdmissionServer } from '../../functions/admission/index.js';
import { createTestNamespace, testKubeConfig } from '../harness/testing.js';
import { eventually } from '../support/eventually.js';

type Obj = Record<string, unknown>;

const LABEL = 'dynamo-fn.test/admission';
const MUTATING = 'dgd-defaulting-test';
const VALIDATING = 'dgd-validation-test';

interface ApiAnswer {
  readonly status: number;
  readonly body: Obj;
  /** `Warning` header texts, without the `299 - "..."` envelope. */
  readonly warnings: readonly string[];
}

/** A thin HTTP client with the admin kubeconfig's server, CA and token (client-node hides Warning headers). */
function apiClient(): (method: Dispatcher.HttpMethod, path: string, body?: unknown, contentType?: string) => Promise<ApiAnswer> {
  const kubeConfig = testKubeConfig();
  const cluster = kubeConfig.getCurrentCluster();
  const user = kubeConfig.getCurrentUser();
  if (cluster === null || user === null) throw new Error('the kubeconfig has no current cluster or user');
  const ca = cluster.caData === undefined ? undefined : Buffer.from(cluster.caData, 'base64').toString('utf8');
  const dispatcher = new Agent({ connect: { ca } });
  return async (method, path, body, contentType = 'application/json') => {
    const response = await request(`${cluster.server}${path}`, {
      method,
      dispatcher,
      headers: { authorization: `Bearer ${user.token ?? ''}`, 'content-type': contentType, accept: 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const raw = response.headers['warning'];
    const headers = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
    // `299 - "text"`; several warnings may share one header, comma-separated.
    const warnings = headers.flatMap((h) => [...h.matchAll(/299 - "((?:[^"\\]|\\.)*)"/g)].map((m) => (m[1] ?? '').replace(/\\(.)/g, '$1')));
    return { status: response.statusCode, body: (await response.body.json()) as Obj, warnings };
  };
}

function component(name: string, type: string, fields: Obj = {}): Obj {
  return { name, type, podTemplate: { spec: { containers: [{ name: 'main', image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0' }] } }, ...fields };
}

function dgd(name: string, fields: { annotations?: Record<string, string>; components: Obj[] }): Obj {
  return {
    apiVersion: 'nvidia.com/v1beta1',
    kind: 'DynamoGraphDeployment',
    metadata: { name, ...(fields.annotations === undefined ? {} : { annotations: fields.annotations }) },
    spec: { backendFramework: 'vllm', components: fields.components },
  };
}

function webhookConfiguration(kind: 'Mutating' | 'Validating', name: string, url: string, caBundle: string): Obj {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: `${kind}WebhookConfiguration`,
    metadata: { name },
    webhooks: [
      {
        name: `${kind === 'Mutating' ? 'default' : 'validate'}.dynamographdeployments.nvidia.com`,
        clientConfig: { url, caBundle },
        rules: [{ apiGroups: ['nvidia.com'], apiVersions: ['v1beta1'], operations: ['CREATE', 'UPDATE'], resources: ['dynamographdeployments'], scope: 'Namespaced' }],
        namespaceSelector: { matchLabels: { [LABEL]: 'true' } },
        admissionReviewVersions: ['v1'],
        sideEffects: 'None',
        failurePolicy: 'Fail',
        timeoutSeconds: 10,
        ...(kind === 'Mutating' ? { reinvocationPolicy: 'Never' } : {}),
      },
    ],
  };
}

let server: AdmissionServer;
let api: ReturnType<typeof apiClient>;
let namespace: string;
let collection: string;

beforeAll(async () => {
  const certs = await generateServingCertificates({ ipAddresses: ['127.0.0.1'] });
  server = await startAdmissionServer({ port: 0, host: '127.0.0.1', tls: { cert: certs.certPem, key: certs.keyPem }, config: { lpxEnabled: false }, log: pino({ level: 'silent' }), shutdownDelaySeconds: 0 });
  api = apiClient();
  namespace = await createTestNamespace(testKubeConfig(), 'admission');
  collection = `/apis/nvidia.com/v1beta1/namespaces/${namespace}/dynamographdeployments`;
  const labelled = await api('PATCH', `/api/v1/namespaces/${namespace}`, { metadata: { labels: { [LABEL]: 'true' } } }, 'application/merge-patch+json');
  expect(labelled.status).toBe(200);
  const caBundle = Buffer.from(certs.caPem).toString('base64');
  const base = `https://127.0.0.1:${server.port}`;
  for (const [kind, name, path] of [
    ['Mutating', MUTATING, '/mutate/nvidia.com/v1beta1/dynamographdeployments'],
    ['Validating', VALIDATING, '/validate/nvidia.com/v1beta1/dynamographdeployments'],
  ] as const) {
    const created = await api('POST', `/apis/admissionregistration.k8s.io/v1/${kind.toLowerCase()}webhookconfigurations`, webhookConfiguration(kind, name, `${base}${path}`, caBundle));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
  }
  // The API server picks webhook configurations up asynchronously: wait until a bad DGD is refused.
  await eventually('the validating webhook to be active', async () => {
    const probe = await api('POST', `${collection}?dryRun=All`, dgd('probe', { annotations: { 'nvidia.com/grove-update-strategy': 'bogus' }, components: [component('frontend', 'frontend')] }));
    return probe.status === 422 ? true : undefined;
  });
});

afterAll(async () => {
  // Cluster-scoped: remove them so no later test file meets a webhook whose server is gone.
  if (api !== undefined) {
    await api('DELETE', `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${VALIDATING}`);
    await api('DELETE', `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${MUTATING}`);
  }
  await server?.close();
});

describe('DGD admission webhooks through the API server', () => {
  it('defaults a created DGD and returns the Coherent singleton-frontend warning to the client', async () => {
    const created = await api(
      'POST',
      collection,
      dgd('coherent', { annotations: { 'nvidia.com/grove-update-strategy': 'Coherent' }, components: [component('frontend', 'frontend'), component('decode', 'decode', { replicas: 2, multinode: {}, providerOverride: { apiVersion: 'grove.io/v1alpha1', value: { minAvailable: 1 } } })] }),
    );
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const components = (created.body['spec'] as { components: Obj[] }).components;
    expect(components[0]?.['replicas']).toBe(1);
    expect(components[1]?.['providerOverride']).toEqual({ apiVersion: 'grove.io/v1alpha1', target: 'PodCliqueScalingGroupConfig', value: { minAvailable: 1 } });
    expect(created.warnings).toEqual([
      'spec.components[0] ("frontend"): Coherent updates may temporarily make this entire component unavailable (replicas=1, minAvailable=1, maxUnavailable=1); provision spare serving capacity before updating',
    ]);
  });

  it('denies a create with one message naming every field path', async () => {
    const denied = await api(
      'POST',
      collection,
      dgd('bad-budget', {
        annotations: { 'nvidia.com/grove-update-strategy': 'OnDelete' },
        components: [component('frontend', 'frontend', { replicas: 1 }), component('worker', 'worker', { replicas: 2, providerOverride: { apiVersion: 'grove.io/v1alpha1', value: { rollingUpdate: { maxUnavailable: 0 }, spec: { minAvailable: 3 } } } })],
      }),
    );
    expect(denied.status).toBe(422);
    expect(denied.body['reason']).toBe('Invalid');
    expect(denied.body['message']).toBe(
      'admission webhook "validate.dynamographdeployments.nvidia.com" denied the request: DynamoGraphDeployment.nvidia.com "bad-budget" is invalid: [spec.components[1].providerOverride.value.rollingUpdate.maxUnavailable: Invalid value: 0: must be a positive 32-bit integer, spec.components[1].providerOverride.value.spec.minAvailable: Invalid value: 3: minAvailable must be less than or equal to replicas unless replicas is 0]',
    );
  });

  it('denies an update that changes the effective minimum, with the field path', async () => {
    const created = await api('POST', collection, dgd('immutable-min', { components: [component('frontend', 'frontend', { replicas: 1 }), component('worker', 'worker', { replicas: 2, minAvailable: 2 })] }));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.warnings).toEqual(['spec.components[1].minAvailable ("worker"): deprecated; use providerOverride.value.spec.minAvailable instead, migrating all components in one update']);
    const patched = await api(
      'PATCH',
      `${collection}/immutable-min`,
      [{ op: 'replace', path: '/spec/components/1/minAvailable', value: 1 }],
      'application/json-patch+json',
    );
    expect(patched.status).toBe(422);
    expect(patched.body['message']).toBe(
      'admission webhook "validate.dynamographdeployments.nvidia.com" denied the request: DynamoGraphDeployment.nvidia.com "immutable-min" is invalid: spec.components[1].minAvailable: Invalid value: 1: minAvailable is immutable after creation',
    );
    // Migrating the same value to the native form in one update is allowed, without a warning.
    const migrated = await api(
      'PATCH',
      `${collection}/immutable-min`,
      [
        { op: 'remove', path: '/spec/components/1/minAvailable' },
        { op: 'add', path: '/spec/components/1/providerOverride', value: { apiVersion: 'grove.io/v1alpha1', value: { spec: { minAvailable: 2 } } } },
      ],
      'application/json-patch+json',
    );
    expect(migrated.status, JSON.stringify(migrated.body)).toBe(200);
    expect(migrated.warnings).toEqual([]);
  });

  it('warns on a replica-only edit that introduces the risk, not on a metadata edit', async () => {
    const coherent = { 'nvidia.com/grove-update-strategy': 'Coherent' };
    const created = await api('POST', collection, dgd('replicas', { annotations: coherent, components: [component('frontend', 'frontend', { replicas: 2 }), component('worker', 'worker', { replicas: 2 })] }));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.warnings).toEqual([]);
    const labelled = await api('PATCH', `${collection}/replicas`, { metadata: { labels: { team: 'inference' } } }, 'application/merge-patch+json');
    expect({ status: labelled.status, warnings: labelled.warnings }).toEqual({ status: 200, warnings: [] });
    const scaled = await api('PATCH', `${collection}/replicas`, [{ op: 'replace', path: '/spec/components/1/replicas', value: 1 }], 'application/json-patch+json');
    expect(scaled.status, JSON.stringify(scaled.body)).toBe(200);
    expect(scaled.warnings).toEqual([
      'spec.components[1] ("worker"): Coherent updates may temporarily make this entire component unavailable (replicas=1, minAvailable=1, maxUnavailable=1); provision spare serving capacity before updating',
    ]);
  });

  it('denies adding a component and new LPX components while lpx.enabled=false', async () => {
    const created = await api('POST', collection, dgd('fixed-set', { components: [component('frontend', 'frontend', { replicas: 1 })] }));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const added = await api(
      'PATCH',
      `${collection}/fixed-set`,
      [{ op: 'add', path: '/spec/components/-', value: { name: 'lpx', type: 'lpx', replicas: 1, lpx: { buildId: 'b1' }, roles: [{ name: 'agent', podTemplate: { spec: { containers: [{ name: 'main', image: 'a:1' }] } } }, { name: 'conductor', podTemplate: { spec: { containers: [{ name: 'main', image: 'c:1' }] } } }] } }, { op: 'add', path: '/spec/restart', value: { strategy: { type: 'Parallel' } } }],
      'application/json-patch+json',
    );
    expect(added.status).toBe(422);
    expect(added.body['message']).toBe(
      'admission webhook "validate.dynamographdeployments.nvidia.com" denied the request: DynamoGraphDeployment.nvidia.com "fixed-set" is invalid: [spec.components: Forbidden: component topology is immutable and cannot be modified after creation: components added: [lpx], spec.components[1].type: Forbidden: LPX components require lpx.enabled=true]',
    );
  });

  it('the CRD holds upstream\'s rule on lpx.experimental.localPartitions (D+): "ids is required when mode is IDs and forbidden otherwise", and its mode enum, before any validating webhook', async () => {
    const engine = (localPartitions: Obj) => ({
      name: 'engine',
      type: 'lpx',
      replicas: 1,
      lpx: { buildId: 'b1', experimental: { localPartitions } },
      roles: [{ name: 'agent', podTemplate: { spec: { containers: [{ name: 'main', image: 'a:1' }] } } }, { name: 'conductor', podTemplate: { spec: { containers: [{ name: 'main', image: 'c:1' }] } } }],
    });
    const withoutIds = await api('POST', collection, { ...dgd('cel-ids', { components: [component('frontend', 'frontend', { replicas: 1 }), engine({ mode: 'IDs' })] }) });
    expect(withoutIds.status).toBe(422);
    expect(withoutIds.body['message']).toBe('DynamoGraphDeployment.nvidia.com "cel-ids" is invalid: spec.components[1].lpx.experimental.localPartitions: Invalid value: ids is required when mode is IDs and forbidden otherwise');
    expect(withoutIds.body['message']).not.toContain('admission webhook');
    const badMode = await api('POST', collection, { ...dgd('cel-mode', { components: [component('frontend', 'frontend', { replicas: 1 }), engine({ mode: 'Some', ids: [1] })] }) });
    expect(badMode.status).toBe(422);
    expect(badMode.body['message']).toContain('spec.components[1].lpx.experimental.localPartitions.mode: Unsupported value: "Some": supported values: "All", "IDs"');
  });

  it('always allows deletion', async () => {
    const deleted = await api('DELETE', `${collection}/fixed-set`);
    expect(deleted.status).toBe(200);
  });
});
