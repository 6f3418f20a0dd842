/**
 * `status.checkpoints` and `waiting_for_checkpoint`, as upstream writes them when the checkpoint
 * is absent (dgd_checkpoints_reconciler.go: `ComponentCheckpointStatus{CheckpointName, Ready}`;
 * dgd_grove_program.go `applyCheckpointStartupReadiness`: state pending, reason
 * `waiting_for_checkpoint`, message "Waiting for checkpoints: <component> (<name>), ..." sorted).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseDgd } from '../../api/index.js';
import { aComponent, aDgd, deepFreeze } from '../../../test/support/builders.js';
import { sharedDir } from '../../../test/support/paths.js';
import { checkpointStatuses, waitingForCheckpointsMessage } from './checkpoints.js';
import { decideDgd, type DgdObserved } from './reconcile-dgd.js';
import { DEFAULT_RENDER_CONFIG } from './render.js';

const NOW = new Date('2026-12-02T05:00:00Z');
const waitFor = (extra: Record<string, unknown> = {}) => ({ experimental: { checkpoint: { enabled: true, startupPolicy: 'WaitForCheckpoint', ...extra } } });

function observed(parent: unknown): DgdObserved {
  return deepFreeze({ parent: parent as Record<string, unknown>, children: { PodCliqueSet: new Map(), Service: new Map(), PodClique: new Map(), PodCliqueScalingGroup: new Map() } } as unknown as DgdObserved);
}

describe('checkpointStatuses / waitingForCheckpointsMessage (upstream, checkpoint absent)', () => {
  const rows = [
    {
      name: 'a WaitForCheckpoint worker without a checkpointRef: ready false, named by its component',
      components: [aComponent('frontend', 'frontend'), aComponent('worker', 'worker', waitFor())],
      status: undefined,
      want: { checkpoints: { worker: { ready: false } }, message: 'Waiting for checkpoints: worker' },
    },
    {
      name: 'a checkpointRef is the checkpointName and appears in the message; components sorted',
      components: [aComponent('prefill', 'prefill', waitFor({ checkpointRef: 'ckpt-prefill' })), aComponent('decode', 'decode', waitFor())],
      status: undefined,
      want: { checkpoints: { prefill: { checkpointName: 'ckpt-prefill', ready: false }, decode: { ready: false } }, message: 'Waiting for checkpoints: decode, prefill (ckpt-prefill)' },
    },
    {
      name: 'an Immediate (default) startup policy gets a status entry but waits for nothing',
      components: [aComponent('worker', 'worker', { experimental: { checkpoint: { enabled: true } } })],
      status: undefined,
      want: { checkpoints: { worker: { ready: false } }, message: undefined },
    },
    {
      name: 'a ready: true already stored (another checkpoint controller) is kept and releases the wait',
      components: [aComponent('worker', 'worker', waitFor())],
      status: { checkpoints: { worker: { checkpointName: 'x', ready: true } } },
      want: { checkpoints: { worker: { ready: true } }, message: undefined },
    },
    {
      name: 'no component with an enabled checkpoint: no status.checkpoints',
      components: [aComponent('worker', 'worker', { experimental: { checkpoint: { enabled: false, startupPolicy: 'WaitForCheckpoint' } } })],
      status: undefined,
      want: { checkpoints: undefined, message: undefined },
    },
  ];
  it.each(rows)('$name', ({ components, status, want }) => {
    const dgd = { ...aDgd({ spec: { components } }), ...(status === undefined ? {} : { status }) };
    expect({ checkpoints: checkpointStatuses(dgd), message: waitingForCheckpointsMessage(dgd) }).toEqual(want);
  });
});

describe('decideDgd with a WaitForCheckpoint component (upstream applyCheckpointStartupReadiness)', () => {
  // Changed by issue 20 (was: renders at 0 replicas, upstream's render, which Grove defaults to 1
  // for a clique and refuses for a scaling group): the worker's clique seeds its minimum (1) and
  // the scale subresource holds it at 0 (the next test).
  it('the reference corpus\' agg_snapshot_tp8 DGD: its worker seeds its minimum (1), status.checkpoints says ready false, and Ready=False waiting_for_checkpoint names the worker instead of sitting at 0 silently', () => {
    const manifest = parse(readFileSync(resolve(sharedDir, 'corpus', 'dgd', 'vllm-v1beta1-agg-snapshot-tp8.yaml'), 'utf8')) as Record<string, unknown>;
    const parsed = parseDgd(manifest);
    if (!parsed.ok) throw new Error('corpus DGD does not parse');
    const worker = parsed.dgd.spec.components.find((c) => (c.experimental?.checkpoint as { startupPolicy?: unknown } | undefined)?.startupPolicy === 'WaitForCheckpoint');
    if (worker === undefined) throw new Error('corpus DGD has no WaitForCheckpoint component');
    const parent = { ...manifest, metadata: { ...(manifest['metadata'] as object), namespace: 'inference', uid: 'u-1', generation: 1 } };
    const desired = decideDgd(observed(parent), DEFAULT_RENDER_CONFIG, NOW);
    const pcs = desired.apply.find((o) => o.kind === 'PodCliqueSet') as unknown as { spec: { template: { cliques: { name: string; spec: { replicas: number } }[] } } };
    expect(pcs.spec.template.cliques.find((c) => c.name === worker.name.toLowerCase())?.spec.replicas).toBe(1);
    expect(desired.scale).toEqual([]); // the PodCliqueSet is not created yet: nothing to scale
    expect(desired.status.checkpoints).toEqual({ [worker.name]: { ready: false } });
    expect(desired.status.state).toBe('pending');
    expect(desired.status.conditions.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'waiting_for_checkpoint', message: `Waiting for checkpoints: ${worker.name}` });
  });

  describe('the gated child is held at 0 through the scale subresource and released when status.checkpoints says ready ("nil replicas are skipped, unless checkpoint-gated (then 0)", upstream-notes/dgd.md §4.7 step 4)', () => {
    const components = [aComponent('frontend', 'frontend'), aComponent('decode', 'decode', { replicas: 3, minAvailable: 2, multinode: { nodeCount: 2 }, ...waitFor() }), aComponent('prefill', 'prefill', { replicas: 2, ...waitFor() })];
    const dgdObject = (checkpoints?: Record<string, unknown>) => ({ ...aDgd({ metadata: { name: 'g', uid: 'u-1', generation: 1 }, spec: { components } }), ...(checkpoints === undefined ? {} : { status: { checkpoints } }) });
    /** The world after Grove created the PodCliqueSet's children from its template seeds (Grove's controller does not run here). */
    const withChildren = (parent: Record<string, unknown>, replicas: { decode: number; prefill: number; frontend: number }): DgdObserved => {
      const first = decideDgd(observed(parent), DEFAULT_RENDER_CONFIG, NOW);
      const pcs = first.apply.find((o) => o.kind === 'PodCliqueSet') as unknown as Record<string, unknown> & { metadata: Record<string, unknown> };
      const child = (name: string, n: number) => ({ apiVersion: 'grove.io/v1alpha1', metadata: { name, namespace: 'inference', generation: 1 }, spec: { replicas: n } });
      return deepFreeze({
        parent,
        children: {
          PodCliqueSet: new Map([['g', { ...pcs, metadata: { ...pcs.metadata, generation: 1, uid: 'pcs-uid' } }]]),
          Service: new Map(),
          PodClique: new Map([['g-0-prefill', { kind: 'PodClique', ...child('g-0-prefill', replicas.prefill) }], ['g-0-frontend', { kind: 'PodClique', ...child('g-0-frontend', replicas.frontend) }]]),
          PodCliqueScalingGroup: new Map([['g-0-decode', { kind: 'PodCliqueScalingGroup', ...child('g-0-decode', replicas.decode) }]]),
        },
      } as unknown as DgdObserved);
    };

    it('seeds the gated scaling group and clique with their minimums (2 and 1), which Grove accepts', () => {
      const desired = decideDgd(observed(dgdObject()), DEFAULT_RENDER_CONFIG, NOW);
      const pcs = desired.apply.find((o) => o.kind === 'PodCliqueSet') as unknown as { spec: { template: { cliques: { name: string; spec: { replicas: number } }[]; podCliqueScalingGroups: { name: string; replicas: number; minAvailable: number }[] } } };
      expect(pcs.spec.template.podCliqueScalingGroups.find((g) => g.name === 'decode')).toMatchObject({ replicas: 2, minAvailable: 2 });
      expect(pcs.spec.template.cliques.find((c) => c.name === 'prefill')?.spec.replicas).toBe(1);
    });

    it('while waiting: scales the seeded children to 0 and says why', () => {
      const desired = decideDgd(withChildren(dgdObject(), { decode: 2, prefill: 1, frontend: 1 }), DEFAULT_RENDER_CONFIG, NOW);
      expect(desired.scale).toEqual([
        { apiVersion: 'grove.io/v1alpha1', kind: 'PodCliqueScalingGroup', namespace: 'inference', name: 'g-0-decode', component: 'decode', replicas: 0 },
        { apiVersion: 'grove.io/v1alpha1', kind: 'PodClique', namespace: 'inference', name: 'g-0-prefill', component: 'prefill', replicas: 0 },
      ]);
      expect(desired.status.conditions.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'waiting_for_checkpoint', message: 'Waiting for checkpoints: decode, prefill' });
    });

    it('while waiting, once held at 0: scales nothing and leaves the PodCliqueSet template as Grove seeded it', () => {
      const world = withChildren(dgdObject({ decode: { ready: false }, prefill: { ready: false } }), { decode: 0, prefill: 0, frontend: 1 });
      const desired = decideDgd(world, DEFAULT_RENDER_CONFIG, NOW);
      expect(desired.scale).toEqual([]);
      expect((desired.apply.find((o) => o.kind === 'PodCliqueSet') as unknown as { spec: unknown }).spec).toEqual((world.children.PodCliqueSet.get('g') as unknown as { spec: unknown }).spec);
    });

    it('when status.checkpoints says ready: true: scales the held children to the component replicas (3 and 2), without rewriting the PodCliqueSet template', () => {
      const world = withChildren(dgdObject({ decode: { ready: true }, prefill: { ready: true } }), { decode: 0, prefill: 0, frontend: 1 });
      const desired = decideDgd(world, DEFAULT_RENDER_CONFIG, NOW);
      expect(desired.scale).toEqual([
        { apiVersion: 'grove.io/v1alpha1', kind: 'PodCliqueScalingGroup', namespace: 'inference', name: 'g-0-decode', component: 'decode', replicas: 3 },
        { apiVersion: 'grove.io/v1alpha1', kind: 'PodClique', namespace: 'inference', name: 'g-0-prefill', component: 'prefill', replicas: 2 },
      ]);
      expect((desired.apply.find((o) => o.kind === 'PodCliqueSet') as unknown as { spec: unknown }).spec).toEqual((world.children.PodCliqueSet.get('g') as unknown as { spec: unknown }).spec);
      expect(desired.status.conditions.find((c) => c.type === 'Ready')?.reason).not.toBe('waiting_for_checkpoint');
    });
  });

  it('a DGD without checkpoints writes no status.checkpoints and keeps its own Ready reason', () => {
    const desired = decideDgd(observed(aDgd({ metadata: { generation: 1 } })), DEFAULT_RENDER_CONFIG, NOW);
    expect(desired.status.checkpoints).toBeUndefined();
    expect(desired.status.conditions.find((c) => c.type === 'Ready')?.reason).toBe('some_resources_are_not_ready');
  });
});
