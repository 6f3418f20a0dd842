/**
 * The pure admission decisions on their own: frozen inputs, determinism, idempotent
 * defaulting (deciding again writes nothing), the stored-object fallback, and the real-world
 * corpus read in place from ../shared/corpus/dgd.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import jsonpatch from 'fast-json-patch';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { defaultDgd, validateDgd } from '../../shared/domain/index.js';
import { sharedDir } from '../support/paths.js';
import { aComponent, aDgd, anAlphaDgd, anAlphaService, anOverride, type Obj } from './admission-chain.js';

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

const SAMPLES: { name: string; object: Obj }[] = [
  { name: 'the default fixture', object: aDgd() },
  {
    name: 'overrides at every scope',
    object: aDgd({
      components: [
        aComponent('frontend', 'frontend'),
        aComponent('decode', 'decode', { multinode: {}, providerOverride: anOverride({ minAvailable: 1 }), roles: [{ name: 'leader', providerOverride: anOverride({ topologyConstraint: { packDomain: 'host' } }) }] }),
      ],
      spec: { providerOverride: anOverride({ spec: { template: { topologyConstraint: { packDomain: 'zone' } } } }) },
    }),
  },
  { name: 'a v1alpha1 object', object: anAlphaDgd({ Frontend: anAlphaService('frontend'), VllmWorker: anAlphaService('worker', { providerOverride: anOverride({ spec: { minAvailable: 1 } }) }) }) },
];

describe('defaultDgd', () => {
  it.each(SAMPLES)('never modifies its (frozen) input: $name', ({ object }) => {
    const frozen = deepFreeze(structuredClone(object));
    expect(() => defaultDgd(frozen)).not.toThrow();
    expect(frozen).toEqual(object);
  });

  it.each(SAMPLES)('is idempotent, so defaulting again patches nothing: $name', ({ object }) => {
    const once = defaultDgd(object);
    expect(jsonpatch.compare(once, defaultDgd(once))).toEqual([]);
  });

  it('shares the subtrees it does not change with its input', () => {
    const object = aDgd({ components: [aComponent('frontend', 'frontend', { replicas: 1 }), aComponent('worker', 'worker')] });
    const defaulted = defaultDgd(object) as { spec: { components: Obj[] }; metadata: unknown };
    const source = object as { spec: { components: Obj[] }; metadata: unknown };
    expect(defaulted.metadata).toBe(source.metadata);
    expect(defaulted.spec.components[0]).toBe(source.spec.components[0]);
    expect(defaulted.spec.components[1]).not.toBe(source.spec.components[1]);
    expect(defaulted.spec.components[1]?.['podTemplate']).toBe(source.spec.components[1]?.['podTemplate']);
  });

  it.each([
    { name: 'a string', object: 'dgd' },
    { name: 'null', object: null },
    { name: 'a DGD without spec', object: { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', metadata: {} } },
    { name: 'components that are not a list', object: { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', spec: { components: { a: 1 } } } },
  ])('leaves shapes it does not understand alone: $name', ({ object }) => {
    expect(defaultDgd(object)).toEqual(object);
  });
});

describe('validateDgd', () => {
  it.each(SAMPLES)('is deterministic on frozen inputs: $name', ({ object }) => {
    const defaulted = deepFreeze(defaultDgd(structuredClone(object)));
    const first = validateDgd(defaulted, undefined, { lpxEnabled: false });
    expect(validateDgd(defaulted, defaulted, { lpxEnabled: false })).toEqual({ issues: [], warnings: [] });
    expect(validateDgd(defaulted, undefined, { lpxEnabled: false })).toEqual(first);
  });

  it('reports the schema issue of a pod template the rules cannot read (the whole object is parsed then)', () => {
    const object = defaultDgd(aDgd({ components: [aComponent('frontend', 'frontend', { replicas: 1, podTemplate: { spec: { containers: 'main' } } })] }));
    expect(validateDgd(object, undefined, { lpxEnabled: false }).issues).toEqual([
      { path: 'spec.components[0].podTemplate.spec.containers', type: 'Invalid', value: 'main', detail: 'must be of type array' },
    ]);
  });

  it('decides from the parsed stored object when the unparsed one trips a rule', () => {
    const object = defaultDgd(aDgd({ components: [aComponent('frontend', 'frontend', { replicas: 1 })] }));
    const storedWithBadRoles = { ...object, spec: { components: [{ ...aComponent('frontend', 'frontend', { replicas: 1 }), roles: 'leader' }] } };
    // The stored object no longer parses: no comparison is made, the new object is still judged.
    expect(validateDgd(object, storedWithBadRoles, { lpxEnabled: false })).toEqual({ issues: [], warnings: [] });
  });
});

const CORPUS_DIR = resolve(sharedDir, 'corpus', 'dgd');
const corpus = readdirSync(CORPUS_DIR)
  .filter((file) => file.endsWith('.yaml'))
  .flatMap((file) =>
    parseAllDocuments(readFileSync(resolve(CORPUS_DIR, file), 'utf8'))
      .map((doc, index) => ({ name: `${file}#${index}`, object: doc.toJS() as Obj }))
      .filter(({ object }) => object?.['kind'] === 'DynamoGraphDeployment'),
  );

describe('the real-world corpus (../shared/corpus/dgd)', () => {
  it('has DGDs to check', () => {
    expect(corpus.length).toBeGreaterThan(30);
  });

  it.each(corpus)('$name is admitted, except where it opts out of Grove, upstream denies it, or its main image is a placeholder without a semver tag (upstream: runtimeVersionOverride "is required when the specified main container image has no parseable semantic-version tag")', ({ name, object }) => {
    const result = validateDgd(defaultDgd(object), undefined, { lpxEnabled: false });
    const optsOutOfGrove = (object['metadata'] as { annotations?: Record<string, string> }).annotations?.['nvidia.com/enable-grove'] === 'false';
    const expected = [...(optsOutOfGrove ? ['metadata.annotations[nvidia.com/enable-grove]'] : []), ...placeholderImagePaths(object), ...(UPSTREAM_DENIES[name] ?? [])];
    expect(result.issues.map((i) => i.path).sort()).toEqual(expected.sort());
  });
});

/**
 * Corpus manifests upstream's newest admission denies for a reason of their own:
 * `vllm-multinode-failover.yaml` configures intra-pod failover without
 * `nvidia.com/dynamo-kube-discovery-mode: container` (upstream `validateObjectMeta`: `must be
 * "container" when intra-pod failover is configured`).
 */
const UPSTREAM_DENIES: Readonly<Record<string, readonly string[]>> = {
  'vllm-multinode-failover.yaml#0': ['metadata.annotations[nvidia.com/dynamo-kube-discovery-mode]'],
};

/**
 * The `runtimeVersionOverride` paths upstream's DGD admission requires for a corpus manifest:
 * every non-LPX component (v1beta1) or service (v1alpha1) without `runtimeVersionOverride` whose
 * main container image tag is not `[v]MAJOR.MINOR.PATCH[...]` (the corpus's `my-tag`,
 * `${VERSION}`, `latest` placeholders). An oracle independent of the code under test.
 */
function placeholderImagePaths(object: Obj): string[] {
  const hasSemverTag = (image: string): boolean => /:[vV]?\d+\.\d+\.\d+([-+][^/:@]*)?(@.*)?$/.test(image.trim());
  const spec = object['spec'] as Obj;
  if (Array.isArray(spec['components'])) {
    return (spec['components'] as Obj[]).flatMap((c, i) => {
      const containers = ((c['podTemplate'] as Obj | undefined)?.['spec'] as Obj | undefined)?.['containers'] as Obj[] | undefined;
      const image = containers?.find((x) => x['name'] === 'main')?.['image'];
      const isMissing = c['type'] === 'lpx' || typeof image !== 'string' || image === '' || c['runtimeVersionOverride'] !== undefined || hasSemverTag(image);
      return isMissing ? [] : [`spec.components[${i}].runtimeVersionOverride`];
    });
  }
  const services = (spec['services'] ?? {}) as Record<string, Obj>;
  return Object.entries(services).flatMap(([name, service]) => {
    const image = ((service['extraPodSpec'] as Obj | undefined)?.['mainContainer'] as Obj | undefined)?.['image'];
    const isMissing = typeof image !== 'string' || image === '' || service['runtimeVersionOverride'] !== undefined || hasSemverTag(image);
    return isMissing ? [] : [`spec.services[${name}].runtimeVersionOverride`];
  });
}
