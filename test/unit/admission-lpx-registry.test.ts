/**
 * LPX admission rules of issue 11 part 6: the model registry build id rule, the LPX checkpoint
 * stanza, the bounds of `lpx.scheduling.attemptDeadlineSeconds`, and `lpx.experimental.localPartitions`
 * (D+: upstream's newest `LPXLocalPartitions`, its Enum, MinItems, items bounds, listType=set and
 * CEL rule; design D's `lpx.localPartitions` with its own bounds and a deprecation warning).
 * Sources: upstream-notes/lpx.md §0 "D+", §1.1, §1.3 "Schema" and "Checkpoint refusal", §4 BuildURL;
 * lpx-integration-review round 1 (absolute buildId with a configured registry; the LPX checkpoint stanza).
 */
import { describe, expect, it } from 'vitest';
import { defaultDgd, validateDgd } from '../../shared/domain/index.js';
import { aComponent, aDgd, anLpxComponent, type Obj } from './admission-chain.js';

const restart = { restart: { strategy: { type: 'Parallel' } } };
function lpxDgd(lpx: Obj, extra: Obj = {}): Obj {
  return aDgd({ components: [aComponent('frontend', 'frontend'), anLpxComponent('engine', { lpx, ...extra })], spec: restart });
}
function issuesOf(object: Obj, config: { lpxEnabled: boolean; modelRegistryUrl?: string }, old?: Obj): string[] {
  return validateDgd(defaultDgd(object), old === undefined ? undefined : defaultDgd(old), config).issues.map((i) => `${i.path}: ${i.type}: ${i.detail}`);
}

function warningsOf(object: Obj, config: { lpxEnabled: boolean }, old?: Obj): readonly string[] {
  return validateDgd(defaultDgd(object), old === undefined ? undefined : defaultDgd(old), config).warnings;
}

describe('LPX admission (issue 11 part 6)', () => {
  it.each([
    {
      name: 'an absolute buildId is refused when a registry is configured ("build ID %q must be relative when model registry URL is configured")',
      lpx: { buildId: 'gs://other-bucket/build' },
      registry: 'gs://bucket/registry',
      want: ['spec.components[1].lpx.buildId: Invalid: build ID "gs://other-bucket/build" must be relative when model registry URL is configured'],
    },
    {
      name: 'a buildId escaping the registry is refused ("must remain within the configured model registry")',
      lpx: { buildId: '../model/build' },
      registry: 'file:///registry',
      want: ['spec.components[1].lpx.buildId: Invalid: build ID "../model/build" must remain within the configured model registry'],
    },
    { name: 'a relative buildId inside the registry is admitted', lpx: { buildId: 'model/build' }, registry: 'gs://bucket/registry', want: [] },
    { name: 'an absolute buildId without a registry is admitted (upstream TestRegistryBuildURL "direct gcs url")', lpx: { buildId: 'gs://bucket/model/build' }, registry: undefined, want: [] },
    {
      name: 'the LPX checkpoint stanza is refused',
      lpx: { buildId: 'b', checkpoint: { identity: { model: 'x' } } },
      registry: undefined,
      want: ['spec.components[1].lpx.checkpoint: Forbidden: checkpoint functionality is supported only for worker, prefill, and decode components'],
    },
    {
      name: 'attemptDeadlineSeconds 0 "should be greater than or equal to 1"',
      lpx: { buildId: 'b', scheduling: { attemptDeadlineSeconds: 0 } },
      registry: undefined,
      want: ['spec.components[1].lpx.scheduling.attemptDeadlineSeconds: Invalid: spec.components[1].lpx.scheduling.attemptDeadlineSeconds in body should be greater than or equal to 1'],
    },
    {
      name: 'attemptDeadlineSeconds 9223372037 "less than or equal to 9223372036"',
      lpx: { buildId: 'b', scheduling: { attemptDeadlineSeconds: 9223372037 } },
      registry: undefined,
      want: ['spec.components[1].lpx.scheduling.attemptDeadlineSeconds: Invalid: spec.components[1].lpx.scheduling.attemptDeadlineSeconds in body should be less than or equal to 9223372036'],
    },
    { name: 'attemptDeadlineSeconds 9223372036 is the largest admitted', lpx: { buildId: 'b', scheduling: { attemptDeadlineSeconds: 9223372036 } }, registry: undefined, want: [] },
    // D+ (lpx.md §1.1: "D+ docs move it to lpx.experimental.localPartitions{mode: All|IDs, ids}"); upstream's CEL on LPXLocalPartitions.
    { name: 'experimental.localPartitions mode All without ids is admitted', lpx: { buildId: 'b', experimental: { localPartitions: { mode: 'All' } } }, registry: undefined, want: [] },
    { name: 'experimental.localPartitions mode IDs with ids is admitted', lpx: { buildId: 'b', experimental: { localPartitions: { mode: 'IDs', ids: [0, 4294967295] } } }, registry: undefined, want: [] },
    {
      name: 'experimental.localPartitions mode IDs without ids: "ids is required when mode is IDs and forbidden otherwise"',
      lpx: { buildId: 'b', experimental: { localPartitions: { mode: 'IDs' } } },
      registry: undefined,
      want: ['spec.components[1].lpx.experimental.localPartitions: Invalid: ids is required when mode is IDs and forbidden otherwise'],
    },
    {
      name: 'experimental.localPartitions mode All with ids: "ids is required when mode is IDs and forbidden otherwise"',
      lpx: { buildId: 'b', experimental: { localPartitions: { mode: 'All', ids: [7] } } },
      registry: undefined,
      want: ['spec.components[1].lpx.experimental.localPartitions: Invalid: ids is required when mode is IDs and forbidden otherwise'],
    },
    {
      name: 'experimental.localPartitions ids are a set (listType=set)',
      lpx: { buildId: 'b', experimental: { localPartitions: { mode: 'IDs', ids: [7, 7] } } },
      registry: undefined,
      want: ['spec.components[1].lpx.experimental.localPartitions.ids[1]: Duplicate: '],
    },
    {
      name: 'experimental.localPartitions mode is All or IDs (Enum=All;IDs)',
      lpx: { buildId: 'b', experimental: { localPartitions: { mode: 'Some' } } },
      registry: undefined,
      want: ['spec.components[1].lpx.experimental.localPartitions.mode: NotSupported: supported values: "All", "IDs"'],
    },
    {
      name: 'experimental.localPartitions ids need at least one item (MinItems=1)',
      lpx: { buildId: 'b', experimental: { localPartitions: { mode: 'IDs', ids: [] } } },
      registry: undefined,
      want: ['spec.components[1].lpx.experimental.localPartitions.ids: Invalid: must have at least 1 items'],
    },
    {
      name: 'experimental.localPartitions ids at most 4294967295 (items:Maximum=4294967295)',
      lpx: { buildId: 'b', experimental: { localPartitions: { mode: 'IDs', ids: [4294967296] } } },
      registry: undefined,
      want: ['spec.components[1].lpx.experimental.localPartitions.ids[0]: Invalid: must be less than or equal to 4294967295'],
    },
    {
      name: 'the LPX checkpoint stanza in its D+ place, experimental.checkpoint, is refused',
      lpx: { buildId: 'b', experimental: { checkpoint: { provider: 'HuggingFace', model: 'openai/gpt-oss-20b', revision: '0'.repeat(40) } } },
      registry: undefined,
      want: ['spec.components[1].lpx.experimental.checkpoint: Forbidden: checkpoint functionality is supported only for worker, prefill, and decode components'],
    },
    {
      name: 'design D lpx.localPartitions: "set either all: true or ids" (both refused)',
      lpx: { buildId: 'b', localPartitions: { all: true, ids: [1] } },
      registry: undefined,
      want: ['spec.components[1].lpx.localPartitions: Invalid: set either all: true or ids'],
    },
    {
      name: 'design D lpx.localPartitions: "set either all: true or ids" (neither refused)',
      lpx: { buildId: 'b', localPartitions: {} },
      registry: undefined,
      want: ['spec.components[1].lpx.localPartitions: Invalid: set either all: true or ids'],
    },
    {
      name: 'design D lpx.localPartitions.ids: non-empty, unique, each 0..4294967295',
      lpx: { buildId: 'b', localPartitions: { ids: [3, 3, 4294967296] } },
      registry: undefined,
      want: ['spec.components[1].lpx.localPartitions.ids[1]: Duplicate: ', 'spec.components[1].lpx.localPartitions.ids[2]: Invalid: must be an integer from 0 to 4294967295'],
    },
    {
      name: 'design D lpx.localPartitions together with D+ lpx.experimental.localPartitions is refused',
      lpx: { buildId: 'b', localPartitions: { all: true }, experimental: { localPartitions: { mode: 'All' } } },
      registry: undefined,
      want: ['spec.components[1].lpx.localPartitions: Invalid: set either lpx.localPartitions or lpx.experimental.localPartitions, not both'],
    },
  ])('$name', ({ lpx, registry, want }) => {
    expect(issuesOf(lpxDgd(lpx), { lpxEnabled: true, ...(registry === undefined ? {} : { modelRegistryUrl: registry }) })).toEqual(want);
  });

  it('design D lpx.localPartitions is admitted with a deprecation warning naming lpx.experimental.localPartitions, only when new or changed', () => {
    const deprecation = 'spec.components[1].lpx.localPartitions ("engine"): deprecated; use lpx.experimental.localPartitions{mode: All|IDs, ids} instead (all: true is mode: All; ids is mode: IDs with the same ids)';
    const created = lpxDgd({ buildId: 'b', localPartitions: { ids: [11] } });
    expect(issuesOf(created, { lpxEnabled: true })).toEqual([]);
    expect(warningsOf(created, { lpxEnabled: true })).toContain(deprecation);
    const edited = aDgd({ components: [aComponent('frontend', 'frontend', { replicas: 2 }), anLpxComponent('engine', { lpx: { buildId: 'b', localPartitions: { ids: [11] } } })], spec: restart });
    expect(issuesOf(edited, { lpxEnabled: true }, created)).toEqual([]);
    expect(warningsOf(edited, { lpxEnabled: true }, created)).not.toContain(deprecation);
    expect(warningsOf(lpxDgd({ buildId: 'b', localPartitions: { ids: [7] } }), { lpxEnabled: true }, created)).toContain(deprecation);
    expect(issuesOf(lpxDgd({ buildId: 'b', experimental: { localPartitions: { mode: 'IDs', ids: [11] } } }), { lpxEnabled: true }, created)).toEqual([]);
  });

  it('an unchanged LPX stanza is not re-checked against a newly configured registry', () => {
    const stored = lpxDgd({ buildId: '/models/build' });
    const edited = aDgd({ components: [aComponent('frontend', 'frontend', { replicas: 2 }), anLpxComponent('engine', { lpx: { buildId: '/models/build' } })], spec: restart });
    expect(issuesOf(edited, { lpxEnabled: true, modelRegistryUrl: 'file:///registry' }, stored)).toEqual([]);
  });
});
