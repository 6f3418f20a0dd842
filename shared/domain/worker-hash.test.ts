import { describe, expect, it } from 'vitest';
import { aComponent, aDgd, deepFreeze } from '../../test/support/builders.js';
import { canonicalJson, computeWorkerHash, withGraphDefaults, workerHashInput } from './worker-hash.js';

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
