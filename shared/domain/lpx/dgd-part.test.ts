import { describe, expect, it } from 'vitest';
import { decideDgd } from '../dgd/reconcile-dgd.js';
import { DEFAULT_RENDER_CONFIG } from '../dgd/render.js';
import { decideLpxHandoff } from './handoff.js';
import { parseDgd } from '../../api/index.js';

const NOW = new Date('2026-12-01T10:00:00Z');
const role = (name: string) => ({ name, podTemplate: { spec: { containers: [{ name: 'main', image: `lpx-${name}:1` }] } } });
const dgdObject = {
  apiVersion: 'nvidia.com/v1beta1',
  kind: 'DynamoGraphDeployment',
  metadata: { name: 'llama', namespace: 'ns', uid: 'dgd-uid', generation: 2 },
  spec: { restart: { strategy: { type: 'Parallel' } }, components: [{ name: 'engine', type: 'lpx', replicas: 1, lpx: { buildId: '/m' }, roles: [role('agent'), role('conductor')] }] },
};
const parsed = parseDgd(dgdObject);
if (!parsed.ok) throw new Error('fixture does not parse');
const handoff = decideLpxHandoff(parsed.dgd, undefined);
if (!handoff.ok) throw new Error('handoff');
const empty = { PodCliqueSet: new Map(), Service: new Map(), PodClique: new Map(), PodCliqueScalingGroup: new Map() };
const readyChild = {
  apiVersion: 'nvidia.com/v1alpha1',
  kind: 'LPXGraphDeployment',
  metadata: { name: 'llama', namespace: 'ns', generation: 1, ownerReferences: [{ uid: 'dgd-uid', controller: true }] },
  spec: { inputRevision: handoff.inputRevision },
  status: { observedGeneration: 1, conditions: [{ type: 'Ready', status: 'True', reason: 'Ready', message: 'LPX engine is ready', lastTransitionTime: NOW.toISOString(), observedGeneration: 1 }], components: { engine: { componentKind: 'PodCliqueScalingGroup', replicas: 1, availableReplicas: 1 } } },
};

describe('decideDgd with LPX components (issue 11 part 4; lpx.md §6.1)', () => {
  it('"Existing LPX DGDs report a disabled status without further workload reconciliation": nothing is applied', () => {
    const desired = decideDgd({ parent: dgdObject, children: empty }, { ...DEFAULT_RENDER_CONFIG, lpxEnabled: false }, NOW);
    expect(desired.apply).toEqual([]);
    expect(desired.status.conditions[0]).toMatchObject({ status: 'False', reason: 'LPXDisabled' });
  });

  it('enabled without a child: the LPXGraphDeployment is applied and the DGD waits for it', () => {
    const desired = decideDgd({ parent: dgdObject, children: empty }, { ...DEFAULT_RENDER_CONFIG, lpxEnabled: true }, NOW);
    expect(desired.apply.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual(['LPXGraphDeployment/llama']);
    expect(desired.status.conditions[0]).toMatchObject({ status: 'False', reason: 'LPXChildPending', message: 'Waiting for the current LPX engine revision and readiness' });
    expect(desired.status.components).toEqual({ engine: { componentKind: 'PodCliqueScalingGroup' } });
  });

  it('a current, observed, Ready child makes an all-LPX DGD Ready with the child\'s component status', () => {
    const desired = decideDgd({ parent: dgdObject, children: { ...empty, LPXGraphDeployment: readyChild } }, { ...DEFAULT_RENDER_CONFIG, lpxEnabled: true }, NOW);
    expect(desired.status.conditions[0]).toMatchObject({ status: 'True', reason: 'all_resources_are_ready' });
    expect(desired.status.state).toBe('successful');
    expect(desired.status.components).toEqual({ engine: { componentKind: 'PodCliqueScalingGroup', replicas: 1, availableReplicas: 1 } });
  });

  it('"An LPX child\'s ScalingDeferred propagates to the DGD" (upstream-notes/dgd.md §4.7 step 6): the DGD reports ScalingDeferred=True with the child\'s reason and message, not ScalingAllowed', () => {
    const deferring = {
      ...readyChild,
      status: {
        ...readyChild.status,
        conditions: [
          { type: 'Ready', status: 'False', reason: 'scaling_deferred', message: 'Replica changes are deferred until the Grove coherent update completes', lastTransitionTime: NOW.toISOString(), observedGeneration: 1 },
          { type: 'ScalingDeferred', status: 'True', reason: 'CoherentUpdateInProgress', message: 'Replica changes are deferred until the Grove coherent update completes', lastTransitionTime: NOW.toISOString(), observedGeneration: 1 },
        ],
      },
    };
    const desired = decideDgd({ parent: dgdObject, children: { ...empty, LPXGraphDeployment: deferring } }, { ...DEFAULT_RENDER_CONFIG, lpxEnabled: true }, NOW);
    expect(desired.status.conditions.find((c) => c.type === 'ScalingDeferred')).toEqual({
      type: 'ScalingDeferred',
      status: 'True',
      reason: 'CoherentUpdateInProgress',
      message: 'Replica changes are deferred until the Grove coherent update completes',
      lastTransitionTime: '2026-12-01T10:00:00Z',
      observedGeneration: 2,
    });
    // and once the child no longer defers, the DGD's own verdict (False ScalingAllowed) is back
    const after = decideDgd({ parent: dgdObject, children: { ...empty, LPXGraphDeployment: readyChild } }, { ...DEFAULT_RENDER_CONFIG, lpxEnabled: true }, NOW);
    expect(after.status.conditions.find((c) => c.type === 'ScalingDeferred')).toMatchObject({ status: 'False', reason: 'ScalingAllowed', message: 'No Grove replica changes are deferred' });
  });

  it('a foreign LPXGraphDeployment at the DGD\'s name is not applied over', () => {
    const foreign = { ...readyChild, metadata: { ...readyChild.metadata, ownerReferences: [{ uid: 'someone-else', controller: true }] } };
    const desired = decideDgd({ parent: dgdObject, children: { ...empty, LPXGraphDeployment: foreign } }, { ...DEFAULT_RENDER_CONFIG, lpxEnabled: true }, NOW);
    expect(desired.apply).toEqual([]);
    expect(desired.status.conditions[0]).toMatchObject({ status: 'False', reason: 'Failed', message: 'LPXGraphDeployment "llama" belongs to a different source; adoption is not supported' });
    expect(desired.status.state).toBe('failed');
  });
});
