/**
 * DGD conversion v1alpha1 <-> v1beta1 round-trips without loss, as upstream's hub/spoke
 * conversion requires ("For every v1beta1 input V, ConvertTo(ConvertFrom(V)) must equal V",
 * api/v1alpha1/dynamographdeployment_conversion.go; the spoke direction likewise through the
 * reserved `nvidia.com/dgd-spec` annotation), over every DGD of ../shared/corpus/dgd/.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { sharedDir } from '../../test/support/paths.js';
import { ANNOTATION_DGD_SPEC } from './constants.js';
import { convertDgd, convertDgdFromHub, convertDgdToHub, type DgdConversion } from './dgd-conversion.js';
import { convertDgdV1Alpha1 } from './dgd-v1alpha1.js';

type Obj = Record<string, unknown>;

function corpus(apiVersion: string): { name: string; object: Obj }[] {
  const dir = resolve(sharedDir, 'corpus', 'dgd');
  return readdirSync(dir)
    .sort()
    .flatMap((file) =>
      parseAllDocuments(readFileSync(resolve(dir, file), 'utf8')).flatMap((document, index) => {
        const object = document.toJS() as Obj | null;
        return object?.['kind'] === 'DynamoGraphDeployment' && object['apiVersion'] === apiVersion ? [{ name: `${file}#${index}`, object }] : [];
      }),
    );
}

function ok(result: DgdConversion): Obj {
  if (!result.ok) throw new Error(result.message);
  return result.object;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

const alphas = corpus('nvidia.com/v1alpha1');
const betas = corpus('nvidia.com/v1beta1');

describe('DGD conversion over the corpus', () => {
  it('finds the corpus manifests of both versions', () => {
    expect({ alpha: alphas.length, beta: betas.length }).toEqual({ alpha: 28, beta: 14 });
  });

  it.each(alphas)('v1alpha1 -> v1beta1 -> v1alpha1 gives back the same object: $name', ({ object }) => {
    const hub = ok(convertDgdToHub(deepFreeze(structuredClone(object))));
    expect(hub['apiVersion']).toBe('nvidia.com/v1beta1');
    expect(ok(convertDgdFromHub(deepFreeze(hub)))).toEqual(object);
  });

  it.each(alphas)('the hub spec of a v1alpha1 manifest is the field-by-field conversion render and admission use: $name', ({ object }) => {
    const hub = ok(convertDgdToHub(object));
    const client = convertDgdV1Alpha1(object);
    if (!client.ok) throw new Error('the client-side conversion failed');
    expect(hub['spec']).toEqual(client.object['spec']);
  });

  it.each(betas)('v1beta1 -> v1alpha1 -> v1beta1 gives back the same object: $name', ({ object }) => {
    const spoke = ok(convertDgdFromHub(deepFreeze(structuredClone(object))));
    expect(spoke['apiVersion']).toBe('nvidia.com/v1alpha1');
    expect(ok(convertDgdToHub(deepFreeze(spoke)))).toEqual(object);
  });
});

const alphaDgd = (): Obj => ({
  apiVersion: 'nvidia.com/v1alpha1',
  kind: 'DynamoGraphDeployment',
  metadata: { name: 'g', namespace: 'ns', annotations: { team: 'a' } },
  spec: {
    backendFramework: 'vllm',
    pvcs: [{ name: 'cache', create: false }],
    services: {
      decode: {
        componentType: 'worker',
        subComponentType: 'decode',
        dynamoNamespace: 'legacy',
        replicas: 2,
        envFromSecret: 'hf',
        resources: { limits: { gpu: '1' } },
        volumeMounts: [{ name: 'cache', mountPoint: '/cache' }],
        extraPodSpec: { mainContainer: { image: 'vllm:1', args: ['--model', 'q'] } },
      },
    },
  },
});

describe('DGD conversion keeps edits made in the other version', () => {
  it('a replica edit in v1beta1 shows in v1alpha1 while the v1alpha1-only fields are kept', () => {
    const hub = ok(convertDgd(alphaDgd(), 'nvidia.com/v1beta1'));
    const components = (hub['spec'] as { components: Obj[] }).components;
    (components[0] as Obj)['replicas'] = 5;
    const spoke = ok(convertDgd(hub, 'nvidia.com/v1alpha1'));
    const expected = alphaDgd();
    ((expected['spec'] as Obj)['services'] as Record<string, Obj>)['decode'] = { ...(((expected['spec'] as Obj)['services'] as Record<string, Obj>)['decode'] as Obj), replicas: 5 };
    expect(spoke).toEqual(expected);
  });

  it('an image edit in v1beta1 shows in v1alpha1, converted field by field, and the alpha-only dynamoNamespace survives', () => {
    const hub = ok(convertDgd(alphaDgd(), 'nvidia.com/v1beta1'));
    const component = (hub['spec'] as { components: Obj[] }).components[0] as { podTemplate: { spec: { containers: Obj[] } } };
    (component.podTemplate.spec.containers[0] as Obj)['image'] = 'vllm:2';
    const spoke = ok(convertDgd(hub, 'nvidia.com/v1alpha1'));
    const decode = ((spoke['spec'] as Obj)['services'] as Record<string, Obj>)['decode'] as Obj;
    expect(decode['dynamoNamespace']).toBe('legacy');
    expect((decode['extraPodSpec'] as { mainContainer: Obj }).mainContainer['image']).toBe('vllm:2');
    expect((spoke['spec'] as Obj)['pvcs']).toEqual([{ name: 'cache', create: false }]);
    // And back: the hub spec is exactly the edited one; the annotation now carries the converted
    // v1alpha1 service (with its dynamoNamespace), so reading v1alpha1 again gives the same view.
    const back = ok(convertDgd(spoke, 'nvidia.com/v1beta1'));
    expect(back['spec']).toEqual(hub['spec']);
    expect(ok(convertDgd(back, 'nvidia.com/v1alpha1'))).toEqual(spoke);
  });

  it('the reserved annotation is consumed by the conversion back and user annotations are kept', () => {
    const hub = ok(convertDgd(alphaDgd(), 'nvidia.com/v1beta1'));
    expect(Object.keys((hub['metadata'] as { annotations: Obj }).annotations).sort()).toEqual([ANNOTATION_DGD_SPEC, 'team']);
    const spoke = ok(convertDgd(hub, 'nvidia.com/v1alpha1'));
    expect((spoke['metadata'] as Obj)['annotations']).toEqual({ team: 'a' });
  });

  it('a v1beta1 component order that is not sorted survives the v1alpha1 map', () => {
    const hub: Obj = {
      apiVersion: 'nvidia.com/v1beta1',
      kind: 'DynamoGraphDeployment',
      metadata: { name: 'g' },
      spec: {
        components: [
          { name: 'worker', type: 'worker', replicas: 1, podTemplate: { spec: { containers: [{ name: 'main', image: 'w:1' }] } } },
          { name: 'frontend', type: 'frontend', replicas: 1, podTemplate: { spec: { containers: [{ name: 'main', image: 'f:1' }] } } },
        ],
      },
    };
    const spoke = ok(convertDgd(hub, 'nvidia.com/v1alpha1'));
    expect(JSON.parse(((spoke['metadata'] as { annotations: Record<string, string> }).annotations[ANNOTATION_DGD_SPEC]) ?? '{}')).toEqual({ order: ['worker', 'frontend'] });
    expect(ok(convertDgd(spoke, 'nvidia.com/v1beta1'))).toEqual(hub);
  });

  it('status services <-> components round-trips', () => {
    const alpha = { ...alphaDgd(), status: { observedGeneration: 2, services: { decode: { replicas: 2, componentName: 'g-decode' } } } };
    const hub = ok(convertDgd(alpha, 'nvidia.com/v1beta1'));
    expect(hub['status']).toEqual({ observedGeneration: 2, components: { decode: { replicas: 2, componentName: 'g-decode' } } });
    expect(ok(convertDgd(hub, 'nvidia.com/v1alpha1'))).toEqual(alpha);
  });

  it('refuses what it cannot convert, with the field path', () => {
    expect(convertDgd({ apiVersion: 'nvidia.com/v1alpha1', kind: 'DynamoGraphDeployment', metadata: {}, spec: {} }, 'nvidia.com/v1beta1')).toEqual({
      ok: false,
      message: 'spec.services: Required value: a v1alpha1 DynamoGraphDeployment lists its services as a map',
    });
    expect(convertDgd({ apiVersion: 'nvidia.com/v2', kind: 'DynamoGraphDeployment' }, 'nvidia.com/v1beta1')).toEqual({
      ok: false,
      message: 'cannot convert DynamoGraphDeployment from "nvidia.com/v2" to "nvidia.com/v1beta1": served versions are nvidia.com/v1beta1 and nvidia.com/v1alpha1',
    });
  });
});
