import { describe, expect, it } from 'vitest';
import { aComponent, aDgd, deepFreeze } from '../../../test/support/builders.js';
import fc from 'fast-check';
import { canonicalJson, computeWorkerHash, STRUCTS, withGraphDefaults, workerHashInput, type GoStruct, type GoType } from './worker-hash.js';

const golden = aDgd({
  spec: {
    backendFramework: undefined,
    components: [aComponent('worker', 'worker', { podTemplate: { spec: { containers: [{ name: 'main', image: 'worker:latest', env: [{ name: 'FOO', value: 'bar' }] }] } } })],
  },
});

describe('worker-generation hash (upstream-notes/dgd.md §4.3)', () => {
  it('reproduces the upstream golden value 2bc34b39 (TestComputeDGDWorkersSpecHashDeterministic)', () => {
    expect(computeWorkerHash(deepFreeze(golden))).toBe('2bc34b39');
  });

  it('serializes the golden input exactly as Go encoding/json does, metadata:{} and resources:{} included', () => {
    expect(workerHashInput(golden)).toBe(
      '{"version":"dgd-worker-rollout-v2","workers":{"worker":{"podTemplate":{"metadata":{},"spec":{"containers":[{"name":"main","image":"worker:latest","env":[{"name":"FOO","value":"bar"}],"resources":{}}]}}}}}',
    );
  });

  const base = aDgd({ spec: { components: [aComponent('frontend', 'frontend'), aComponent('prefill', 'prefill'), aComponent('decode', 'decode', { replicas: 2 })] } });
  const decode = (overrides: Parameters<typeof aComponent>[2]) =>
    aDgd({ spec: { components: [aComponent('frontend', 'frontend'), aComponent('prefill', 'prefill'), aComponent('decode', 'decode', { replicas: 2, ...overrides })] } });

  it.each([
    { name: 'replicas change', dgd: decode({ replicas: 8 }) },
    { name: 'deprecated minimum set', dgd: decode({ minAvailable: 1 }) },
    { name: 'native minimum moved into providerOverride', dgd: decode({ providerOverride: { apiVersion: 'grove.io/v1alpha1', value: { spec: { minAvailable: 1 } } } }) },
    { name: 'rollout budget added', dgd: decode({ providerOverride: { apiVersion: 'grove.io/v1alpha1', value: { rollingUpdate: { maxUnavailable: 2 } } } }) },
    { name: 'strategy annotation set', dgd: { ...base, metadata: { ...base.metadata, annotations: { 'nvidia.com/grove-update-strategy': 'Coherent' } } } },
    { name: 'scaling adapter added', dgd: decode({ scalingAdapter: {} }) },
    { name: 'frontend pod template edited', dgd: aDgd({ spec: { components: [aComponent('frontend', 'frontend', { podTemplate: { spec: { containers: [{ name: 'main', image: 'other:2' }] } } }), aComponent('prefill', 'prefill'), aComponent('decode', 'decode', { replicas: 2 })] } }) },
  ])('does not change when only a minimum, a budget, replicas or the strategy changes: $name', ({ dgd }) => {
    expect(computeWorkerHash(dgd)).toBe(computeWorkerHash(base));
  });

  it('changes for every worker when one worker pod template changes ("a pod-template edit to one worker can therefore roll every worker component")', () => {
    const edited = decode({ podTemplate: { spec: { containers: [{ name: 'main', image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.5.0' }] } } });
    expect(computeWorkerHash(edited)).not.toBe(computeWorkerHash(base));
  });

  it.each([
    { name: 'spec.annotations', spec: { annotations: { rollout: 'annotation' } } },
    { name: 'spec.labels', spec: { labels: { rollout: 'label' } } },
    { name: 'spec.env', spec: { env: [{ name: 'ROLLOUT', value: 'env' }] } },
    { name: 'an EPP component (nvidia.com/dynamo-component-class=worker)', spec: { components: [...base.spec.components, aComponent('epp', 'epp')] } },
  ])('changes with graph metadata that reaches the worker pods: $name (TestComputeDGDWorkersSpecHashTracksDGDSpecMetadata)', ({ spec }) => {
    expect(computeWorkerHash(aDgd({ spec: { ...base.spec, ...spec } }))).not.toBe(computeWorkerHash(base));
  });

  it('folds graph values at low priority: a worker label of the same key wins (upstream mergeLowPriorityWorkerHashMetadata)', () => {
    const authored = decode({ podTemplate: { metadata: { labels: { team: 'a' } }, spec: { containers: [{ name: 'main', image: 'i:1' }] } } });
    const withGraph = aDgd({ spec: { ...authored.spec, labels: { team: 'b' } } });
    const folded = authored.spec.components.find((c) => c.name === 'decode');
    expect(computeWorkerHash(withGraph)).not.toBe(computeWorkerHash(authored));
    expect(withGraphDefaults(folded ?? aComponent('x', 'worker'), withGraph).podTemplate?.metadata?.labels).toEqual({ team: 'a' });
  });

  it('orders map keys and unknown struct fields by name, as Go does for maps', () => {
    expect(canonicalJson({ b: 1, a: { d: 'x', c: true } })).toBe('{"a":{"c":true,"d":"x"},"b":1}');
  });
});

/**
 * The serializer as first written (one `Object.keys`, `filter` and `join` per object), kept as
 * the reference: the fast one must give exactly its output, since the hash it feeds is stamped
 * on running workloads and must never change (issue 17 item 4).
 */
function referenceCanonicalJson(value: unknown, type?: GoType): string {
  if (Array.isArray(value)) return `[${value.map((item) => referenceCanonicalJson(item, type)).join(',')}]`;
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  const record = value as Record<string, unknown>;
  const struct: GoStruct | undefined = type === undefined ? undefined : STRUCTS[type];
  const known: readonly string[] = struct?.fields ?? [];
  const unknown = struct?.closed === true ? [] : Object.keys(record).filter((k) => !known.includes(k)).sort();
  const isEmpty = (v: unknown) => v === undefined || v === null || v === false || v === 0 || v === '' || (Array.isArray(v) ? v.length === 0 : typeof v === 'object' && Object.keys(v).length === 0);
  const parts: string[] = [];
  for (const key of [...known, ...unknown]) {
    const nested = struct?.types?.[key];
    const field = record[key];
    if (isEmpty(field)) {
      if (struct?.alwaysObject?.includes(key) === true) parts.push(`${JSON.stringify(key)}:${referenceCanonicalJson({}, nested)}`);
      continue;
    }
    parts.push(`${JSON.stringify(key)}:${referenceCanonicalJson(field, nested)}`);
  }
  return `{${parts.join(',')}}`;
}

describe('canonicalJson: the hash input never changes (issue 17 item 4: "Worker hash values must not change")', () => {
  // Keys from the Go structs' own fields, so typed paths are taken, plus map-like keys that need escaping.
  const fieldNames = [...new Set(Object.values(STRUCTS).flatMap((s) => s.fields))];
  const key = fc.oneof(fc.constantFrom(...fieldNames), fc.string({ maxLength: 6 }), fc.constantFrom('a"b', 'tab\there', '\ud800lone', 'emoji\ud83d\ude00', 'z', 'A'));
  const leaf = fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('', 'x"y', 'back\\slash', 'nl\n', '\ud83d\ude00', '\udfff'), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.constant(undefined));
  const json = fc.letrec((tie) => ({
    value: fc.oneof({ depthSize: 'small' }, leaf, tie('object'), tie('array')),
    object: fc.dictionary(key, tie('value'), { maxKeys: 6 }),
    array: fc.array(tie('value'), { maxLength: 3 }),
  })).value;

  it.each(Object.keys(STRUCTS) as GoType[])('gives the reference serializer\'s exact output for random values typed %s', (type) => {
    fc.assert(fc.property(json, (value) => canonicalJson(value, type) === referenceCanonicalJson(value, type)), { numRuns: 300 });
  });

  it('gives the reference serializer\'s exact output for untyped random values', () => {
    fc.assert(fc.property(json, (value) => canonicalJson(value) === referenceCanonicalJson(value)), { numRuns: 500 });
  });
});
