import { describe, expect, it } from 'vitest';
import { deepFreeze } from '../../../test/support/builders.js';
import { aRun } from '../../../test/support/v1beta2-builders.js';
import { decideRequestAccepted, decideRequestRuns, hasConversionView, type RequestObserved, type RequestRun } from './request-runs.js';

const spec = aRun().spec;
const request = { name: 'qwen3-trace-replay', namespace: 'inference', uid: 'req-uid', generation: 2, spec };
const run = (generation: number, isComplete: boolean): RequestRun => ({ name: `qwen3-trace-replay-${generation}`, uid: `uid-${generation}`, generation, isComplete });

describe('one Run per metadata.generation (reference "Trace claim lifecycle"; "v1beta2 DGD Overrides")', () => {
  const rows: { name: string; input: RequestObserved; want: Omit<ReturnType<typeof decideRequestRuns>, 'createRun'> & { creates: string | undefined; accepted: string } }[] = [
    {
      name: 'no Run for the generation and none open: create <request>-<generation>',
      input: { request, runs: [run(1, true)] },
      want: { creates: 'qwen3-trace-replay-2', activeRunRef: { name: 'qwen3-trace-replay-2' }, recentRunRefs: [{ name: 'qwen3-trace-replay-1', uid: 'uid-1' }], supersededRuns: [], accepted: 'True RunCreated' },
    },
    {
      name: '"Changing the request\'s spec stops the old Run and its publisher before starting the replacement Run": the old open Run is stopped first, nothing created',
      input: { request, runs: [run(1, false)] },
      want: { creates: undefined, activeRunRef: { name: 'qwen3-trace-replay-1', uid: 'uid-1' }, recentRunRefs: [], supersededRuns: ['qwen3-trace-replay-1'], accepted: 'False StoppingPreviousRun' },
    },
    {
      name: 'the generation\'s Run exists: nothing to create; a failed Run is not retried ("after a Run failed, change the request\'s spec to start a new Run")',
      input: { request, runs: [run(1, true), run(2, true)] },
      want: { creates: undefined, activeRunRef: undefined, recentRunRefs: [{ name: 'qwen3-trace-replay-2', uid: 'uid-2' }, { name: 'qwen3-trace-replay-1', uid: 'uid-1' }], supersededRuns: [], accepted: 'True RunCreated' },
    },
    {
      name: 'the generation\'s Run is open: it is the active Run',
      input: { request, runs: [run(1, true), run(2, false)] },
      want: { creates: undefined, activeRunRef: { name: 'qwen3-trace-replay-2', uid: 'uid-2' }, recentRunRefs: [{ name: 'qwen3-trace-replay-1', uid: 'uid-1' }], supersededRuns: [], accepted: 'True RunCreated' },
    },
    {
      name: 'a Run of that name the request does not control: never adopted, nothing created (DESIGN.md "Writes")',
      input: { request, runs: [run(1, true)], foreignRunName: 'qwen3-trace-replay-2' },
      want: { creates: undefined, activeRunRef: undefined, recentRunRefs: [{ name: 'qwen3-trace-replay-1', uid: 'uid-1' }], supersededRuns: [], accepted: 'False RunConflict' },
    },
  ];
  it.each(rows)('$name', ({ input, want }) => {
    const frozen = deepFreeze(input);
    const got = decideRequestRuns(frozen);
    const accepted = decideRequestAccepted(frozen, got);
    expect({ creates: (got.createRun?.['metadata'] as { name: string } | undefined)?.name, activeRunRef: got.activeRunRef, recentRunRefs: got.recentRunRefs, supersededRuns: got.supersededRuns, accepted: `${accepted.status} ${accepted.reason}` }).toEqual(want);
    expect(accepted.observedGeneration).toBe(2);
  });

  it('the Run\'s spec is an exact copy of the request\'s, with the generation label and a controller reference', () => {
    expect(decideRequestRuns({ request, runs: [] }).createRun).toEqual({
      apiVersion: 'nvidia.com/v1beta2',
      kind: 'DynamoGraphDeploymentRun',
      metadata: {
        name: 'qwen3-trace-replay-2',
        namespace: 'inference',
        labels: { 'nvidia.com/dgdr-generation': '2' },
        ownerReferences: [{ apiVersion: 'nvidia.com/v1beta2', kind: 'DynamoGraphDeploymentRequest', name: 'qwen3-trace-replay', uid: 'req-uid', controller: true, blockOwnerDeletion: true }],
      },
      spec,
    });
  });

  it('Accepted messages name the Runs', () => {
    expect(decideRequestAccepted({ request, runs: [run(1, false)] }, decideRequestRuns({ request, runs: [run(1, false)] }))).toEqual({
      type: 'Accepted',
      status: 'False',
      reason: 'StoppingPreviousRun',
      message: 'waiting for DynamoGraphDeploymentRun qwen3-trace-replay-1 to stop (Superseded) before starting generation 2',
      observedGeneration: 2,
    });
    expect(decideRequestAccepted({ request, runs: [] }, decideRequestRuns({ request, runs: [] })).message).toBe('DynamoGraphDeploymentRun qwen3-trace-replay-2 evaluates generation 2');
  });

  it('deciding again after the Run exists creates nothing more', () => {
    const first = decideRequestRuns({ request, runs: [] });
    expect(first.createRun).toBeDefined();
    expect(decideRequestRuns({ request, runs: [run(2, false)] }).createRun).toBeUndefined();
  });
});

describe('which API a request is native to (reference "Conversion views")', () => {
  it.each([
    { name: 'a native v1beta1 request read at v1beta2 carries spec.v1beta1', spec: { v1beta1: { model: 'Qwen/Qwen3-0.6B' } }, view: 'v1beta1' as const, want: true },
    { name: 'a native v1beta2 request read at v1beta2 has its own fields', spec: { model: { name: 'Qwen/Qwen3-0.6B' } }, view: 'v1beta1' as const, want: false },
    { name: 'a native v1beta2 request read at v1beta1 carries spec.v1beta2', spec: { v1beta2: { model: { name: 'Qwen/Qwen3-0.6B' } } }, view: 'v1beta2' as const, want: true },
    { name: 'no spec', spec: undefined, view: 'v1beta2' as const, want: false },
  ])('$name', ({ spec, view, want }) => {
    expect(hasConversionView(spec, view)).toBe(want);
  });
});
