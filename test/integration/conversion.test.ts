/**
 * v1alpha1 served through the conversion webhook, on the real API server: our DGD CRD serves
 * v1alpha1 and v1beta1 (storage) with `conversion: Webhook`, pointed by the globalSetup at the
 * admission function's `/convert` on 127.0.0.1 over TLS. Every v1alpha1 DGD of
 * ../shared/corpus/dgd/ applies with server-side apply in v1alpha1 (the API server converts it
 * to v1beta1 to store it, and back to v1alpha1 to merge), reads back in both versions, and a
 * second identical apply changes nothing (issue 8 part 5: "every v1alpha1 manifest of the corpus
 * applies with kubectl apply --server-side and reads back in both versions").
 */
import { readFileSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { ANNOTATION_DGD_SPEC, convertDgdV1Alpha1 } from '../../shared/api/index.js';
import { createTestNamespace, testKubeConfig } from '../harness/testing.js';
import { apiClient, serverSideApply, type ApiClient, type Obj } from '../support/api.js';
import { sharedDir } from '../support/paths.js';

const FIELD_MANAGER = 'kubectl';

function alphaCorpus(): { name: string; object: Obj }[] {
  const dir = resolve(sharedDir, 'corpus', 'dgd');
  let index = 0;
  return readdirSync(dir)
    .sort()
    .flatMap((file) =>
      parseAllDocuments(readFileSync(resolve(dir, file), 'utf8')).flatMap((document) => {
        const object = document.toJS() as Obj | null;
        if (object?.['kind'] !== 'DynamoGraphDeployment' || object['apiVersion'] !== 'nvidia.com/v1alpha1') return [];
        index += 1;
        // Unique names: some corpus documents share a name.
        const name = `c${index}-${String((object['metadata'] as Obj)['name'])}`.slice(0, 60).replace(/-+$/, '');
        return [{ name: `${file} (${name})`, object: { ...object, metadata: { ...(object['metadata'] as Obj), name } } }];
      }),
    );
}

const cases = alphaCorpus();
let api: ApiClient;
let namespace: string;

const path = (version: string, name?: string): string => `/apis/nvidia.com/${version}/namespaces/${namespace}/dynamographdeployments${name === undefined ? '' : `/${name}`}`;

beforeAll(async () => {
  api = apiClient();
  namespace = await createTestNamespace(testKubeConfig(), 'conversion');
});

describe('DGD v1alpha1 through the conversion webhook', () => {
  it('serves v1alpha1 and v1beta1 with conversion through the webhook', async () => {
    const crd = await api('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/dynamographdeployments.nvidia.com');
    const spec = crd.body['spec'] as { conversion: { strategy: string; webhook: { conversionReviewVersions: string[] } }; versions: { name: string; served: boolean; storage: boolean }[] };
    expect(spec.conversion.strategy).toBe('Webhook');
    expect(spec.conversion.webhook.conversionReviewVersions).toEqual(['v1']);
    expect(spec.versions.map((v) => ({ name: v.name, served: v.served, storage: v.storage }))).toEqual([
      { name: 'v1beta1', served: true, storage: true },
      { name: 'v1alpha1', served: true, storage: false },
    ]);
  });

  it('finds the 28 v1alpha1 DGDs of the corpus', () => {
    expect(cases.length).toBe(28);
  });

  it.each(cases)('applies server-side in v1alpha1, reads back in both versions, and re-applies as a no-op: $name', async ({ object }) => {
    const name = (object['metadata'] as { name: string }).name;
    const manifest: Obj = { ...object, metadata: { ...(object['metadata'] as Obj), namespace } };
    const applied = await serverSideApply(api, path('v1alpha1', name), manifest, FIELD_MANAGER);
    expect(applied.status, JSON.stringify(applied.body)).toBe(201);

    // v1alpha1: every field the manifest set reads back with the value it set (the CRD's
    // structural defaults may add fields), and no reserved conversion annotation shows.
    const alpha = await api('GET', path('v1alpha1', name));
    expect(alpha.status).toBe(200);
    expect(alpha.body['apiVersion']).toBe('nvidia.com/v1alpha1');
    expect(alpha.body['spec']).toMatchObject(manifest['spec'] as Obj);
    expect(Object.keys(((alpha.body['metadata'] as Obj)['annotations'] as Obj | undefined) ?? {})).not.toContain(ANNOTATION_DGD_SPEC);

    // v1beta1 (storage): the field-by-field conversion render and admission use.
    const beta = await api('GET', path('v1beta1', name));
    expect(beta.status).toBe(200);
    const converted = convertDgdV1Alpha1(manifest);
    if (!converted.ok) throw new Error('the client-side conversion failed');
    expect(beta.body['spec']).toMatchObject(converted.object['spec'] as Obj);

    // The round trip is lossless, so the same apply again is a no-op.
    const again = await serverSideApply(api, path('v1alpha1', name), manifest, FIELD_MANAGER);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect((again.body['metadata'] as Obj)['resourceVersion']).toBe((alpha.body['metadata'] as Obj)['resourceVersion']);
  });

  it('lists in v1alpha1 (every stored object converts)', async () => {
    const list = await api('GET', path('v1alpha1'));
    expect(list.status, JSON.stringify(list.body)).toBe(200);
    expect((list.body['items'] as Obj[]).length).toBe(cases.length);
  });

  it('a replica edit in v1beta1 reads back in v1alpha1', async () => {
    const first = cases[0];
    if (first === undefined) throw new Error('no corpus case');
    const name = (first.object['metadata'] as { name: string }).name;
    const beta = await api('GET', path('v1beta1', name));
    const components = (beta.body['spec'] as { components: { name: string }[] }).components;
    const component = components[0];
    if (component === undefined) throw new Error('no component');
    const patched = await api('PATCH', path('v1beta1', name), [{ op: 'test', path: '/spec/components/0/name', value: component.name }, { op: 'replace', path: '/spec/components/0/replicas', value: 7 }], 'application/json-patch+json');
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    const alpha = await api('GET', path('v1alpha1', name));
    expect(((alpha.body['spec'] as { services: Record<string, Obj> }).services[component.name] as Obj)['replicas']).toBe(7);
  });
});
