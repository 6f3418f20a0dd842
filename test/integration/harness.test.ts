/**
 * The test API server behaves like a real one where our code depends on it: the Grove CRD
 * schema (PR #649's Coherent variant) is enforced, server-side apply works, and a stale
 * resourceVersion is refused with 409. Uses plain client-node, not shared/kube, so these hold
 * independently of our client.
 */
import { ApiException, KubernetesObjectApi, PatchStrategy, type KubernetesObject } from '@kubernetes/client-node';
import { beforeAll, describe, expect, inject, it } from 'vitest';

import { createTestNamespace, testKubeConfig } from '../harness/testing.js';

interface PodCliqueSet extends KubernetesObject {
  spec: Record<string, unknown>;
}

function aPodCliqueSet(namespace: string, name: string, spec: Record<string, unknown> = {}): PodCliqueSet {
  return {
    apiVersion: 'grove.io/v1alpha1',
    kind: 'PodCliqueSet',
    metadata: { name, namespace },
    spec: {
      replicas: 1,
      updateStrategy: { type: 'Coherent' },
      template: {
        cliques: [
          {
            name: 'worker',
            rollingUpdate: { maxUnavailable: 1 },
            spec: {
              roleName: 'worker',
              replicas: 1,
              podSpec: { containers: [{ name: 'main', image: 'registry.invalid/worker:1' }] },
            },
          },
        ],
      },
      ...spec,
    },
  };
}

/** The HTTP code and Status of a rejected request. */
async function rejection(request: Promise<unknown>): Promise<{ code: number; reason: string; message: string }> {
  try {
    await request;
  } catch (error) {
    if (!(error instanceof ApiException)) throw error;
    const status = (typeof error.body === 'string' ? JSON.parse(error.body) : error.body) as {
      reason?: string;
      message?: string;
    };
    return { code: error.code, reason: status.reason ?? '', message: status.message ?? '' };
  }
  throw new Error('expected the API server to reject the request');
}

describe('the integration API server', () => {
  const kubeConfig = testKubeConfig();
  const api = KubernetesObjectApi.makeApiClient(kubeConfig);
  let namespace = '';

  beforeAll(async () => {
    namespace = await createTestNamespace(kubeConfig, 'harness');
  });

  it('serves our, Grove and Knative CRDs', async () => {
    const list = await api.list('apiextensions.k8s.io/v1', 'CustomResourceDefinition');
    const names = list.items.map((crd) => crd.metadata?.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'podcliquesets.grove.io',
        'podcliques.grove.io',
        'podcliquescalinggroups.grove.io',
        'podgangmaps.grove.io',
        'podgangs.scheduler.grove.io',
        'clustertopologybindings.grove.io',
        'services.serving.knative.dev',
        'apiserversources.sources.knative.dev',
        'pingsources.sources.knative.dev',
        'brokers.eventing.knative.dev',
        'triggers.eventing.knative.dev',
      ]),
    );
  });

  it('points only our CRDs\' conversion webhooks at the run\'s admission /convert; Knative\'s PingSource keeps its own webhook Service', async () => {
    const conversionOf = async (name: string) => {
      const crd = (await api.read({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name } })) as KubernetesObject & { spec: { conversion?: { strategy?: string; webhook?: { clientConfig?: Record<string, unknown> } } } };
      return crd.spec.conversion;
    };
    const ours = { url: `${inject('admissionUrl')}/convert`, caBundle: inject('admissionCaBundle') };
    for (const name of ['dynamographdeployments.nvidia.com', 'dynamographdeploymentrequests.nvidia.com']) {
      expect((await conversionOf(name))?.webhook?.clientConfig, name).toEqual(ours);
    }
    // As shipped in ../shared/crds/knative/sources.knative.dev_pingsource.yaml.
    expect(await conversionOf('pingsources.sources.knative.dev')).toEqual({
      strategy: 'Webhook',
      webhook: { conversionReviewVersions: ['v1', 'v1beta1'], clientConfig: { service: { name: 'eventing-webhook', namespace: 'knative-eventing', port: 443 } } },
    });
  });

  it('accepts a minimal Coherent PodCliqueSet with a clique rollingUpdate.maxUnavailable', async () => {
    const created = await api.create(aPodCliqueSet(namespace, 'coherent'));
    const stored = (await api.read({ ...created, metadata: { name: 'coherent', namespace } })) as PodCliqueSet;
    expect(stored.spec).toMatchObject({
      updateStrategy: { type: 'Coherent' },
      template: { cliques: [{ name: 'worker', rollingUpdate: { maxUnavailable: 1 } }] },
    });
  });

  it('defaults updateStrategy.type to Coherent (the PR #649 CRD default)', async () => {
    const stored = (await api.create(aPodCliqueSet(namespace, 'defaulted', { updateStrategy: {} }))) as PodCliqueSet;
    expect(stored.spec['updateStrategy']).toEqual({ type: 'Coherent' });
  });

  it('rejects an updateStrategy.type outside the enum with 422', async () => {
    const got = await rejection(api.create(aPodCliqueSet(namespace, 'bad-enum', { updateStrategy: { type: 'Rolling' } })));
    expect(got.code).toBe(422);
    expect(got.reason).toBe('Invalid');
    expect(got.message).toContain('spec.updateStrategy.type: Unsupported value: "Rolling"');
  });

  it('rejects a field of the wrong type with 422', async () => {
    const got = await rejection(api.create(aPodCliqueSet(namespace, 'bad-type', { replicas: 'three' })));
    expect(got.code).toBe(422);
    expect(got.message).toContain('spec.replicas: Invalid value: "string"');
  });

  it('rejects a PodCliqueSet missing a required field with 422', async () => {
    const pcs = aPodCliqueSet(namespace, 'no-template');
    delete pcs.spec['template'];
    const got = await rejection(api.create(pcs));
    expect(got.code).toBe(422);
    expect(got.message).toContain('spec.template: Required value');
  });

  it('server-side apply creates, then changes only what the manager applies', async () => {
    const configMap = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'applied', namespace },
      data: { a: '1' },
    };
    const first: KubernetesObject = await api.patch(configMap, undefined, undefined, 'harness-test', undefined, PatchStrategy.ServerSideApply);
    const second: KubernetesObject = await api.patch(
      { ...configMap, data: { a: '2' } },
      undefined,
      undefined,
      'harness-test',
      undefined,
      PatchStrategy.ServerSideApply,
    );
    expect(second).toMatchObject({ data: { a: '2' } });
    expect(second.metadata?.resourceVersion).not.toBe(first.metadata?.resourceVersion);
    expect(second.metadata?.managedFields?.map((entry) => [entry.manager, entry.operation])).toEqual([
      ['harness-test', 'Apply'],
    ]);
  });

  it('refuses a replace with a stale resourceVersion with 409 Conflict', async () => {
    const created = await api.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'versioned', namespace },
      data: { a: '1' },
    });
    await api.replace({ ...created, data: { a: '2' } });
    const got = await rejection(api.replace({ ...created, data: { a: '3' } }));
    expect(got.code).toBe(409);
    expect(got.reason).toBe('Conflict');
  });
});
