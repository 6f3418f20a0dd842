/**
 * LPX admission rules of issue 11 part 6: the model registry build id rule, the LPX checkpoint
 * stanza, and the bounds of `lpx.scheduling.attemptDeadlineSeconds` and `lpx.localPartitions`.
 * Sources: upstream-notes/lpx.md §1.1, §1.3 "Schema" and "Checkpoint refusal", §4 BuildURL;
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
    {
      name: 'localPartitions with both all and ids: "set either all: true or ids"',
      lpx: { buildId: 'b', localPartitions: { all: true, ids: [0] } },
      registry: undefined,
      want: ['spec.components[1].lpx.localPartitions: Invalid: set either all: true or ids'],
    },
    {
      name: 'localPartitions with neither: "set either all: true or ids"',
      lpx: { buildId: 'b', localPartitions: {} },
      registry: undefined,
      want: ['spec.components[1].lpx.localPartitions: Invalid: set either all: true or ids'],
    },
    {
      name: 'localPartitions ids need at least one item within 0..4294967295',
      lpx: { buildId: 'b', localPartitions: { ids: [] } },
      registry: undefined,
      want: ['spec.components[1].lpx.localPartitions.ids: Invalid: spec.components[1].lpx.localPartitions.ids in body should have at least 1 items'],
    },
    {
      name: 'a partition id above 4294967295 is refused',
      lpx: { buildId: 'b', localPartitions: { ids: [4294967296] } },
      registry: undefined,
      want: ['spec.components[1].lpx.localPartitions.ids[0]: Invalid: must be an integer from 0 to 4294967295'],
    },
  ])('$name', ({ lpx, registry, want }) => {
    expect(issuesOf(lpxDgd(lpx), { lpxEnabled: true, ...(registry === undefined ? {} : { modelRegistryUrl: registry }) })).toEqual(want);
  });

  it('an unchanged LPX stanza is not re-checked against a newly configured registry', () => {
    const stored = lpxDgd({ buildId: '/models/build' });
    const edited = aDgd({ components: [aComponent('frontend', 'frontend', { replicas: 2 }), anLpxComponent('engine', { lpx: { buildId: '/models/build' } })], spec: restart });
    expect(issuesOf(edited, { lpxEnabled: true, modelRegistryUrl: 'file:///registry' }, stored)).toEqual([]);
  });
});
