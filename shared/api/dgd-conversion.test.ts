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
import { ComponentSchema, DgdSpecSchema } from './dgd.js';
import {
  HUB_ONLY_COMPONENT_FIELDS,
  MAPPED_COMPONENT_FIELDS,
  VERBATIM_COMPONENT_FIELDS,
  VERBATIM_SPEC_FIELDS,
  convertDgd,
  convertDgdFromHub,
  convertDgdToHub,
  type DgdConversion,
} from './dgd-conversion.js';
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

  it('the hub spec of a v1alpha1 manifest follows upstream\'s field map: `services` (a map) -> `components` (a list keyed by name, in name order), `componentType` -> `type`, `envs` -> `env`, `extraPodSpec.mainContainer` -> the pod template\'s `main` container (upstream-notes/dgd.md §2.1-§2.3)', () => {
    const alpha = {
      apiVersion: 'nvidia.com/v1alpha1',
      kind: 'DynamoGraphDeployment',
      metadata: { name: 'g', namespace: 'ns' },
      spec: {
        backendFramework: 'vllm',
        envs: [{ name: 'A', value: '1' }],
        services: {
          VllmWorker: { componentType: 'worker', replicas: 1, extraPodSpec: { mainContainer: { image: 'w:1.6.1', args: ['--x'] } } },
          Frontend: { componentType: 'frontend', replicas: 2, extraPodSpec: { mainContainer: { image: 'fe:1.6.1' } } },
        },
      },
    };
    expect(ok(convertDgdToHub(deepFreeze(alpha)))['spec']).toEqual({
      backendFramework: 'vllm',
      env: [{ name: 'A', value: '1' }],
      components: [
        { name: 'Frontend', type: 'frontend', replicas: 2, podTemplate: { spec: { containers: [{ name: 'main', image: 'fe:1.6.1' }] } } },
        { name: 'VllmWorker', type: 'worker', replicas: 1, podTemplate: { spec: { containers: [{ name: 'main', image: 'w:1.6.1', args: ['--x'] }] } } },
      ],
    });
  });

  it.each(alphas)('the conversion webhook and the client-side conversion (render, admission) agree on the hub spec of a v1alpha1 manifest: $name', ({ object }) => {
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

describe('DGD conversion field coverage (as upstream TestV1Beta1ConversionFieldSetIsAcknowledged)', () => {
  it('every v1beta1 component field is verbatim, mapped field by field, or carried only in the saved payload', () => {
    const acknowledged = new Set<string>(['name', ...VERBATIM_COMPONENT_FIELDS, ...MAPPED_COMPONENT_FIELDS, ...HUB_ONLY_COMPONENT_FIELDS]);
    expect(Object.keys(ComponentSchema.shape).filter((field) => !acknowledged.has(field))).toEqual([]);
  });

  it('every v1beta1 spec field is verbatim, the component list, or env (v1alpha1 envs)', () => {
    const acknowledged = new Set<string>(['components', 'env', ...VERBATIM_SPEC_FIELDS]);
    expect(Object.keys(DgdSpecSchema.shape).filter((field) => !acknowledged.has(field))).toEqual([]);
  });
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

  it('reserved nvidia.com/dgd-* annotations a user set are consumed; an unreadable payload is ignored (upstream: "parsed best-effort and consumed")', () => {
    const alpha = alphaDgd();
    (alpha['metadata'] as Obj)['annotations'] = { team: 'a', 'nvidia.com/dgd-spec': '{not json', 'nvidia.com/dgd-status': 'x' };
    const hub = ok(convertDgd(alpha, 'nvidia.com/v1beta1'));
    const annotations = (hub['metadata'] as { annotations: Record<string, string> }).annotations;
    expect(Object.keys(annotations).sort()).toEqual([ANNOTATION_DGD_SPEC, 'team']);
    expect(hub['spec']).toEqual(ok(convertDgd(alphaDgd(), 'nvidia.com/v1beta1'))['spec']);
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

/** A small seeded PRNG (mulberry32), so a failing case can be replayed from its seed. */
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

const pick = <T>(random: () => number, items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;

describe('DGD conversion round trip under random edits (as upstream api/roundtrip_fuzz_test.go)', () => {
  const ITERATIONS = 300;

  it(`v1alpha1 -> v1beta1 -> v1alpha1 is the identity for ${ITERATIONS} randomly edited corpus manifests`, () => {
    const random = prng(8);
    const edits: ((service: Obj, spec: Obj) => void)[] = [
      (service) => void (service['replicas'] = Math.floor(random() * 9)),
      (service) => void (service['dynamoNamespace'] = `ns-${Math.floor(random() * 100)}`),
      (service) => void (service['x-unknown'] = { nested: [1, 'two'] }),
      (service) => void delete service['extraPodSpec'],
      (service) => void (service['scalingAdapter'] = { enabled: random() < 0.5 }),
      (service) => void (service['sharedMemory'] = random() < 0.5 ? { disabled: true } : { size: '16Gi' }),
      (service) => void (service['envs'] = [{ name: 'A', value: String(random()) }]),
      (_service, spec) => void (spec['pvcs'] = [{ name: 'p', create: true, size: '1Gi' }]),
      (_service, spec) => void (spec['envs'] = [{ name: 'G', value: 'x' }]),
      (service) => void (service['componentType'] = pick(random, ['frontend', 'worker', 'planner', 'default', 'main'])),
    ];
    for (let i = 0; i < ITERATIONS; i += 1) {
      const alpha = structuredClone(pick(random, alphas).object);
      const spec = alpha['spec'] as Obj;
      const services = spec['services'] as Record<string, Obj>;
      for (let e = 0; e < 3; e += 1) pick(random, edits)(services[pick(random, Object.keys(services))] as Obj, spec);
      const hub = ok(convertDgdToHub(alpha));
      expect(ok(convertDgdFromHub(hub)), `iteration ${i}`).toEqual(alpha);
    }
  });

  it(`v1beta1 -> v1alpha1 -> v1beta1 is the identity for ${ITERATIONS} randomly edited corpus manifests`, () => {
    const random = prng(9);
    const edits: ((component: Obj, spec: Obj) => void)[] = [
      (component) => void (component['replicas'] = Math.floor(random() * 9)),
      (component) => void (component['runtimeVersionOverride'] = '1.6.1'),
      (component) => void (component['compilationCache'] = { pvcName: 'cache', mountPath: '/c' }),
      (component) => void (component['experimental'] = { grove: { forceScalingGroup: true } }),
      (component) => void delete component['podTemplate'],
      (component) => void (component['podTemplate'] = { spec: { containers: [{ name: 'side', image: 's:1' }, { name: 'main', image: 'm:1' }] } }),
      (component) => void (component['type'] = pick(random, ['frontend', 'worker', 'prefill', 'decode', 'planner', 'epp'])),
      (component) => void (component['sharedMemorySize'] = pick(random, ['0', '8Gi'])),
      (_component, spec) => void (spec['components'] = [...(spec['components'] as Obj[])].reverse()),
      (_component, spec) => void (spec['env'] = [{ name: 'G', value: 'x' }]),
    ];
    for (let i = 0; i < ITERATIONS; i += 1) {
      const beta = structuredClone(pick(random, betas).object);
      const spec = beta['spec'] as Obj;
      for (let e = 0; e < 3; e += 1) pick(random, edits)(pick(random, spec['components'] as Obj[]), spec);
      const spoke = ok(convertDgdFromHub(beta));
      expect(ok(convertDgdToHub(spoke)), `iteration ${i}`).toEqual(beta);
    }
  });

  it(`an edit of a field both versions share, made in v1beta1, reads back in v1alpha1 and converts back unchanged (${ITERATIONS} cases)`, () => {
    const random = prng(10);
    for (let i = 0; i < ITERATIONS; i += 1) {
      const hub = ok(convertDgdToHub(structuredClone(pick(random, alphas).object)));
      const components = (hub['spec'] as { components: Obj[] }).components;
      const component = pick(random, components);
      const replicas = Math.floor(random() * 50);
      component['replicas'] = replicas;
      const spoke = ok(convertDgdFromHub(hub));
      expect(((spoke['spec'] as { services: Record<string, Obj> }).services[component['name'] as string] as Obj)['replicas'], `iteration ${i}`).toBe(replicas);
      expect(ok(convertDgdToHub(spoke))['spec'], `iteration ${i}`).toEqual(hub['spec']);
    }
  });
});
