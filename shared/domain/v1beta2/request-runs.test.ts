import { describe, expect, it } from 'vitest';
import { deepFreeze } from '../../../test/support/builders.js';
import { aRun } from '../../../test/support/v1beta2-builders.js';
import { decideRequestRuns, type RequestObserved, type RequestRun } from './request-runs.js';

const spec = aRun().spec;
const request = { name: 'qwen3-trace-replay', namespace: 'inference', uid: 'req-uid', generation: 2, spec };
const run = (generation: number, isComplete: boolean): RequestRun => ({ name: `qwen3-trace-replay-${generation}`, uid: `uid-${generation}`, generation, isComplete });

describe('one Run per metadata.generation (reference "Trace claim lifecycle"; "v1beta2 DGD Overrides")', () => {
  const rows: { name: string; input: RequestObserved; want: Omit<ReturnType<typeof decideRequestRuns>, 'createRun'> & { creates: string | undefined } }[] = [
    {
      name: 'no Run for the generation and none open: create <request>-<generation>',
      input: { request, runs: [run(1, true)] },
      want: { creates: 'qwen3-trace-replay-2', activeRunRef: { name: 'qwen3-trace-replay-2' }, recentRunRefs: [{ name: 'qwen3-trace-replay-1', uid: 'uid-1' }] },
    },
    {
      name: 'the spec changed while the old Run is open: wait for it to stop (Superseded) before starting the new one',
      input: { request, runs: [run(1, false)] },
      want: { creates: undefined, activeRunRef: { name: 'qwen3-trace-replay-1', uid: 'uid-1' }, recentRunRefs: [] },
    },
    {
      name: 'the generation\'s Run exists: nothing to create; a failed Run is not retried',
      input: { request, runs: [run(1, true), run(2, true)] },
      want: { creates: undefined, activeRunRef: undefined, recentRunRefs: [{ name: 'qwen3-trace-replay-2', uid: 'uid-2' }, { name: 'qwen3-trace-replay-1', uid: 'uid-1' }] },
    },
  ];
  it.each(rows)('$name', ({ input, want }) => {
    const got = decideRequestRuns(deepFreeze(input));
    expect({ creates: (got.createRun?.['metadata'] as { name: string } | undefined)?.name, activeRunRef: got.activeRunRef, recentRunRefs: got.recentRunRefs }).toEqual(want);
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
});
