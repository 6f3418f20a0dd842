import { describe, expect, it } from 'vitest';
import type { PodClique, PodCliqueScalingGroup } from '../../api/index.js';
import { aComponent } from '../../../test/support/builders.js';
import { pendingScaleIntents, templateReplicas } from './grove-scaling.js';

const override = (value: Record<string, unknown>) => ({ apiVersion: 'grove.io/v1alpha1', value });

describe('templateReplicas: the seed of a Grove child ("Template replicas only seed a PCLQ or PCSG at creation", grove.md §A.6)', () => {
  it.each([
    { name: 'omitted replicas -> 1', component: aComponent('w', 'worker', { replicas: undefined }), gated: false, want: 1 },
    { name: 'replicas as authored', component: aComponent('w', 'worker', { replicas: 3, minAvailable: 2 }), gated: false, want: 3 },
    { name: 'WaitForCheckpoint gate -> 0 (upstream buildCliqueForRole)', component: aComponent('w', 'worker', { replicas: 3 }), gated: true, want: 0 },
    { name: 'at 0, no minimum -> 1 (Grove defaults a clique at 0 to 1)', component: aComponent('w', 'worker', { replicas: 0 }), gated: false, want: 1 },
    { name: 'at 0, deprecated minimum 2 -> 2 (0 < minAvailable <= replicas)', component: aComponent('w', 'worker', { replicas: 0, minAvailable: 2 }), gated: false, want: 2 },
    { name: 'at 0, native scaling-group minimum 3 -> 3', component: aComponent('w', 'worker', { replicas: 0, multinode: { nodeCount: 2 }, providerOverride: override({ minAvailable: 3 }) }), gated: false, want: 3 },
  ])('$name', ({ component, gated, want }) => {
    expect(templateReplicas(component, gated)).toBe(want);
  });
});

describe('pendingScaleIntents: a component at 0 is taken to 0 through the scale subresource (grove.md §A.6 "Later scaling happens on the child\'s own scale subresource")', () => {
  const pclq = (name: string, replicas: number) => ({ metadata: { name }, spec: { replicas } }) as unknown as PodClique;
  const pcsg = (name: string, replicas: number) => ({ metadata: { name }, spec: { replicas } }) as unknown as PodCliqueScalingGroup;

  it('scales the seeded PodClique and PodCliqueScalingGroup of components at 0 replicas to 0', () => {
    const components = [aComponent('prefill', 'prefill', { replicas: 0, minAvailable: 2 }), aComponent('decode', 'decode', { replicas: 0, minAvailable: 2, multinode: { nodeCount: 2 } })];
    const children = { PodClique: new Map([['g-0-prefill', pclq('g-0-prefill', 2)]]), PodCliqueScalingGroup: new Map([['g-0-decode', pcsg('g-0-decode', 2)]]) };
    expect(pendingScaleIntents(components, 'g', 'inference', children)).toEqual([
      { apiVersion: 'grove.io/v1alpha1', kind: 'PodClique', namespace: 'inference', name: 'g-0-prefill', component: 'prefill', replicas: 0 },
      { apiVersion: 'grove.io/v1alpha1', kind: 'PodCliqueScalingGroup', namespace: 'inference', name: 'g-0-decode', component: 'decode', replicas: 0 },
    ]);
  });
});
