import { describe, expect, it } from 'vitest';
import type { PodClique, PodCliqueScalingGroup } from '../../api/index.js';
import { aComponent, aDgd } from '../../../test/support/builders.js';
import { isCheckpointGated } from './checkpoints.js';
import { desiredChildReplicas, pendingScaleIntents, templateReplicas } from './grove-scaling.js';

const override = (value: Record<string, unknown>) => ({ apiVersion: 'grove.io/v1alpha1', value });

describe('templateReplicas: the seed of a Grove child ("Template replicas only seed a PCLQ or PCSG at creation", grove.md §A.6)', () => {
  it.each([
    { name: 'omitted replicas -> 1', component: aComponent('w', 'worker', { replicas: undefined }), gated: false, want: 1 },
    { name: 'replicas as authored', component: aComponent('w', 'worker', { replicas: 3, minAvailable: 2 }), gated: false, want: 3 },
    // Changed by issue 20 (was 0, as upstream buildCliqueForRole renders it): Grove refuses a
    // scaling group at 0 and defaults a clique at 0 to 1, so a gated component seeds its minimum
    // and the scale subresource holds the child at 0 (desiredChildReplicas below).
    { name: 'WaitForCheckpoint gate, no minimum -> 1 (Grove: "replicas must be > 0")', component: aComponent('w', 'worker', { replicas: 3 }), gated: true, want: 1 },
    { name: 'WaitForCheckpoint gate, deprecated minimum 2 -> 2 (0 < minAvailable <= replicas)', component: aComponent('w', 'worker', { replicas: 3, minAvailable: 2 }), gated: true, want: 2 },
    { name: 'WaitForCheckpoint gate, multinode native scaling-group minimum 3 -> 3', component: aComponent('w', 'worker', { replicas: 4, multinode: { nodeCount: 2 }, providerOverride: override({ minAvailable: 3 }) }), gated: true, want: 3 },
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
    expect(pendingScaleIntents(components, 'g', 'inference', children, () => false)).toEqual([
      { apiVersion: 'grove.io/v1alpha1', kind: 'PodClique', namespace: 'inference', name: 'g-0-prefill', component: 'prefill', replicas: 0 },
      { apiVersion: 'grove.io/v1alpha1', kind: 'PodCliqueScalingGroup', namespace: 'inference', name: 'g-0-decode', component: 'decode', replicas: 0 },
    ]);
  });
});

describe('desiredChildReplicas: "nil replicas are skipped, unless checkpoint-gated (then 0)" (upstream-notes/dgd.md §4.7 step 4)', () => {
  it.each([
    { name: 'not gated: the component replicas', component: aComponent('w', 'worker', { replicas: 3 }), gated: false, want: 3 },
    { name: 'not gated, at 0: 0', component: aComponent('w', 'worker', { replicas: 0 }), gated: false, want: 0 },
    { name: 'not gated, replicas omitted: skipped (left to whoever scales it)', component: aComponent('w', 'worker', { replicas: undefined }), gated: false, want: undefined },
    { name: 'gated: 0', component: aComponent('w', 'worker', { replicas: 3 }), gated: true, want: 0 },
    { name: 'gated, replicas omitted: 0', component: aComponent('w', 'worker', { replicas: undefined }), gated: true, want: 0 },
  ])('$name', ({ component, gated, want }) => {
    expect(desiredChildReplicas(component, gated)).toBe(want);
  });
});

describe('pendingScaleIntents under a WaitForCheckpoint gate ("Replicas are forced to 0 while a checkpoint with startupPolicy: WaitForCheckpoint is not ready. PCSG replicas are gated the same way", upstream-notes/dgd.md §4.2)', () => {
  const pclq = (name: string, replicas: number) => ({ metadata: { name }, spec: { replicas } }) as unknown as PodClique;
  const pcsg = (name: string, replicas: number) => ({ metadata: { name }, spec: { replicas } }) as unknown as PodCliqueScalingGroup;
  const checkpoint = { checkpoint: { enabled: true, startupPolicy: 'WaitForCheckpoint' } };
  const components = [
    aComponent('decode', 'decode', { replicas: 3, minAvailable: 2, multinode: { nodeCount: 2 }, experimental: checkpoint }),
    aComponent('prefill', 'prefill', { replicas: 2, experimental: checkpoint }),
    aComponent('frontend', 'frontend', { replicas: 1 }),
  ];
  const dgdWith = (ready: boolean | undefined) => {
    const dgd = aDgd({ metadata: { name: 'g' }, spec: { components } });
    return ready === undefined ? dgd : { ...dgd, status: { checkpoints: { decode: { ready }, prefill: { ready } } } };
  };
  // As Grove creates them from the template: each gated child at its seed (templateReplicas).
  const seeded = () => ({
    PodClique: new Map([['g-0-prefill', pclq('g-0-prefill', 1)], ['g-0-frontend', pclq('g-0-frontend', 1)]]),
    PodCliqueScalingGroup: new Map([['g-0-decode', pcsg('g-0-decode', 2)]]),
  });
  const intents = (ready: boolean | undefined, children: ReturnType<typeof seeded>) => {
    const dgd = dgdWith(ready);
    return pendingScaleIntents(dgd.spec.components, 'g', 'inference', children, (c) => isCheckpointGated(dgd, c));
  };

  it.each([
    { name: 'no status.checkpoints yet', ready: undefined },
    { name: 'status.checkpoints says ready: false', ready: false },
  ])('holds the seeded scaling group and clique at 0 while waiting: $name', ({ ready }) => {
    expect(intents(ready, seeded())).toEqual([
      { apiVersion: 'grove.io/v1alpha1', kind: 'PodCliqueScalingGroup', namespace: 'inference', name: 'g-0-decode', component: 'decode', replicas: 0 },
      { apiVersion: 'grove.io/v1alpha1', kind: 'PodClique', namespace: 'inference', name: 'g-0-prefill', component: 'prefill', replicas: 0 },
    ]);
  });

  it('writes nothing once the held children are at 0 and the checkpoint is still not ready', () => {
    const children = seeded();
    children.PodClique.set('g-0-prefill', pclq('g-0-prefill', 0));
    children.PodCliqueScalingGroup.set('g-0-decode', pcsg('g-0-decode', 0));
    expect(intents(false, children)).toEqual([]);
  });

  it('releases the held children to the component replicas when status.checkpoints says ready: true', () => {
    const children = seeded();
    children.PodClique.set('g-0-prefill', pclq('g-0-prefill', 0));
    children.PodCliqueScalingGroup.set('g-0-decode', pcsg('g-0-decode', 0));
    expect(intents(true, children)).toEqual([
      { apiVersion: 'grove.io/v1alpha1', kind: 'PodCliqueScalingGroup', namespace: 'inference', name: 'g-0-decode', component: 'decode', replicas: 3 },
      { apiVersion: 'grove.io/v1alpha1', kind: 'PodClique', namespace: 'inference', name: 'g-0-prefill', component: 'prefill', replicas: 2 },
    ]);
  });

  it('holds a gated component whose replicas are omitted at 0 too (upstream: "unless checkpoint-gated (then 0)")', () => {
    const dgd = aDgd({ metadata: { name: 'g' }, spec: { components: [aComponent('prefill', 'prefill', { replicas: undefined, experimental: checkpoint })] } });
    const children = { PodClique: new Map([['g-0-prefill', pclq('g-0-prefill', 1)]]), PodCliqueScalingGroup: new Map<string, PodCliqueScalingGroup>() };
    expect(pendingScaleIntents(dgd.spec.components, 'g', 'inference', children, (c) => isCheckpointGated(dgd, c))).toEqual([
      { apiVersion: 'grove.io/v1alpha1', kind: 'PodClique', namespace: 'inference', name: 'g-0-prefill', component: 'prefill', replicas: 0 },
    ]);
  });
});
