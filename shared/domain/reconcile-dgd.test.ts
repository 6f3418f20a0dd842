import { describe, expect, it } from 'vitest';
import type { PodClique, PodCliqueScalingGroup } from '../api/index.js';
import { aComponent, aDgd, deepFreeze } from '../../test/support/builders.js';
import { decideApplyFailure, decideDgd, type DgdObserved } from './reconcile-dgd.js';
import { DEFAULT_RENDER_CONFIG } from './render.js';

const NOW = new Date('2026-11-29T12:00:00Z');
const LATER = new Date('2026-11-29T12:05:00Z');

function observed(parent: unknown, cliques: PodClique[] = [], groups: PodCliqueScalingGroup[] = []): DgdObserved {
  return deepFreeze({
    parent: parent as Record<string, unknown>,
    children: {
      PodClique: new Map(cliques.map((c) => [c.metadata.name ?? '', c])),
      PodCliqueScalingGroup: new Map(groups.map((g) => [g.metadata.name ?? '', g])),
    },
  });
}

function aReadyClique(name: string, replicas: number): PodClique {
  return {
    apiVersion: 'grove.io/v1alpha1',
    kind: 'PodClique',
    metadata: { name, generation: 2 },
    spec: { roleName: name, replicas, podSpec: {} },
    status: { observedGeneration: 2, replicas, updatedReplicas: replicas, readyReplicas: replicas },
  };
}

const dgd = { ...aDgd(), metadata: { ...aDgd().metadata, generation: 3 } };

describe('decideDgd (upstream-notes/dgd.md §4.7)', () => {
  it('applies the rendered PodCliqueSet and Services and reports Ready=False "<component>: resource not found" before Grove creates the children', () => {
    const desired = decideDgd(observed(dgd), DEFAULT_RENDER_CONFIG, NOW);
    expect(desired.apply.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual(['PodCliqueSet/my-graph', 'Service/my-graph-frontend', 'Service/my-graph-worker']);
    expect(desired.status).toMatchObject({
      observedGeneration: 3,
      state: 'pending',
      conditions: [
        {
          type: 'Ready',
          status: 'False',
          reason: 'some_resources_are_not_ready',
          message: 'frontend: resource not found; worker: resource not found',
          lastTransitionTime: '2026-11-29T12:00:00Z', // whole seconds, as metav1.Time stores it
          observedGeneration: 3,
        },
      ],
    });
    expect(desired.events).toEqual([{ type: 'Normal', reason: 'some_resources_are_not_ready', note: 'frontend: resource not found; worker: resource not found' }]);
    expect(desired.permanentFailure).toBeUndefined();
  });

  it('reports Ready=True, state successful, when every PodClique has replicas = updated = ready = desired', () => {
    const desired = decideDgd(observed(dgd, [aReadyClique('my-graph-0-frontend', 1), aReadyClique('my-graph-0-worker', 1)]), DEFAULT_RENDER_CONFIG, NOW);
    expect(desired.status.state).toBe('successful');
    expect(desired.status.conditions[0]).toMatchObject({ status: 'True', reason: 'all_resources_are_ready' });
    expect(desired.status.components?.['worker']).toEqual({ componentKind: 'PodClique', componentNames: ['my-graph-0-worker'], replicas: 1, updatedReplicas: 1, readyReplicas: 1 });
  });

  it('judges a scaling-group component by its available replicas', () => {
    const multinode = { ...dgd, spec: { ...dgd.spec, components: [aComponent('decode', 'decode', { replicas: 2, multinode: { nodeCount: 2 } })] } };
    const group: PodCliqueScalingGroup = {
      apiVersion: 'grove.io/v1alpha1',
      kind: 'PodCliqueScalingGroup',
      metadata: { name: 'my-graph-0-decode', generation: 1 },
      spec: { replicas: 2, cliqueNames: ['decode-ldr', 'decode-wkr'] },
      status: { observedGeneration: 1, replicas: 2, updatedReplicas: 2, availableReplicas: 1 },
    };
    const desired = decideDgd(observed(multinode, [], [group]), DEFAULT_RENDER_CONFIG, NOW);
    expect(desired.status.conditions[0]?.message).toBe('decode: pods_not_ready');
  });

  it('writes nothing new when deciding again after its own status was stored (same lastTransitionTime, no event)', () => {
    const first = decideDgd(observed(dgd), DEFAULT_RENDER_CONFIG, NOW);
    const stored = { ...dgd, status: first.status };
    const second = decideDgd(observed(stored), DEFAULT_RENDER_CONFIG, LATER);
    expect(second.status).toEqual(first.status);
    expect(second.events).toEqual([]);
    expect(second.apply).toEqual(first.apply);
  });

  it('reports an invalid spec as Ready=False InvalidSpec with every field error, applies nothing and marks the failure permanent', () => {
    const bad = { ...dgd, spec: { ...dgd.spec, components: [{ name: 'worker', type: 'worker', replicas: -1 }] } };
    const desired = decideDgd(observed(bad), DEFAULT_RENDER_CONFIG, NOW);
    expect(desired.apply).toEqual([]);
    expect(desired.status.state).toBe('failed');
    expect(desired.status.conditions[0]).toMatchObject({ status: 'False', reason: 'InvalidSpec' });
    expect(desired.status.conditions[0]?.message).toBe('spec.components[0].replicas: Invalid value: -1: must be greater than or equal to 0');
    expect(desired.permanentFailure).toEqual({ reason: 'InvalidSpec', message: desired.status.conditions[0]?.message });
  });

  it('reports a disabled status without workload reconciliation when LPX components exist and lpx.enabled=false (dgd-reference)', () => {
    const lpx = { ...dgd, spec: { ...dgd.spec, components: [...dgd.spec.components, aComponent('lpu', 'lpx', { replicas: undefined, lpx: { buildId: 'b' } })] } };
    const desired = decideDgd(observed(lpx), DEFAULT_RENDER_CONFIG, NOW);
    expect(desired.apply).toEqual([]);
    expect(desired.status.conditions[0]).toMatchObject({ status: 'False', reason: 'LPXDisabled' });
  });

  // The reason is upstream's reasonFailedToReconcileResources (deploy/operator/internal/controller/dynamographdeployment_controller.go).
  it('reports an apply rejection as failed_to_reconcile_the_resources, permanent', () => {
    const desired = decideApplyFailure(observed(dgd), 'PodCliqueSet.grove.io "my-graph" is invalid', NOW);
    expect(desired.status.conditions[0]).toMatchObject({ status: 'False', reason: 'failed_to_reconcile_the_resources', message: 'cannot apply rendered resources: PodCliqueSet.grove.io "my-graph" is invalid' });
    expect(desired.permanentFailure?.reason).toBe('failed_to_reconcile_the_resources');
  });
});
