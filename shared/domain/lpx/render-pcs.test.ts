import { describe, expect, it } from 'vitest';
import type { Dgd } from '../../api/index.js';
import { decideLpxHandoff } from './handoff.js';
import { lpxInputRevision } from './input-revision.js';
import { lpxPodCliqueSetName, pipelineRequestName } from './names.js';
import { desiredPipelineRequests } from './pipeline-requests.js';
import { renderLpxPodCliqueSet } from './render-pcs.js';
import { resolveLpxWorkloads } from './workloads.js';

const ID = { namespace: 'inference', name: 'llama', uid: '11111111-1111-4111-8111-111111111111' };
const role = (name: string, replicas?: number) => ({ name, ...(replicas === undefined ? {} : { replicas }), podTemplate: { spec: { containers: [{ name: 'main', image: `lpx-${name}:1` }] } } });

function aDgd(overrides: { annotations?: Record<string, string>; components?: unknown[] } = {}): Dgd {
  return {
    apiVersion: 'nvidia.com/v1beta1',
    kind: 'DynamoGraphDeployment',
    metadata: { name: 'llama', namespace: 'inference', uid: 'dgd-uid', annotations: overrides.annotations ?? {} },
    spec: {
      components: (overrides.components ?? [
        { name: 'frontend', type: 'frontend' },
        { name: 'engine', type: 'lpx', replicas: 2, lpx: { buildId: 'b' }, roles: [role('agent', 4), role('conductor')] },
      ]) as Dgd['spec']['components'],
    },
  };
}
const pair = [
  { name: 'draft', type: 'lpx', replicas: 2, lpx: { buildId: 'd', scheduling: { attemptDeadlineSeconds: 30 } }, roles: [role('agent')] },
  { name: 'target', type: 'lpx', replicas: 1, minAvailable: 1, lpx: { buildId: 't' }, roles: [role('agent'), role('conductor')], providerOverride: { apiVersion: 'grove.io/v1alpha1', value: { minAvailable: 1, rollingUpdate: { maxUnavailable: 1 } } } },
];

function render(dgd: Dgd) {
  return renderLpxPodCliqueSet(dgd, ID, resolveLpxWorkloads(dgd), new Map(), { terminationDelay: '15m' }) as unknown as {
    metadata: { name: string; ownerReferences: unknown[] };
    spec: { replicas: number; updateStrategy?: { type: string }; template: { cliques: { name: string; annotations: Record<string, string>; labels: Record<string, string>; spec: { replicas: number; minAvailable: number; startsAfter?: string[]; podSpec: { schedulerName: string } } }[]; podCliqueScalingGroups: Record<string, unknown>[] } };
  };
}

describe('renderLpxPodCliqueSet (lpx.md §1.1, §2.3, §6.2; upstream fixture node-local-v2-hybrid.yaml)', () => {
  it('renders one replica, agent and conductor cliques under scaling group "lpx", the conductor starting after the agents, all on the lpx-scheduler', () => {
    const pcs = render(aDgd());
    expect(pcs.metadata.name).toBe(lpxPodCliqueSetName(ID));
    expect(pcs.metadata.ownerReferences).toEqual([{ apiVersion: 'nvidia.com/v1alpha1', kind: 'LPXGraphDeployment', name: 'llama', uid: ID.uid, controller: true, blockOwnerDeletion: true }]);
    expect(pcs.spec.replicas).toBe(1);
    expect(pcs.spec.template.cliques.map((c) => [c.name, c.spec.replicas, c.spec.minAvailable, c.annotations['scheduling.lpu.nvidia.com/role'], c.spec.startsAfter, c.spec.podSpec.schedulerName])).toEqual([
      ['agt', 4, 4, 'agent', undefined, 'lpx-scheduler'],
      ['cond', 1, 1, 'conductor', ['agt'], 'lpx-scheduler'],
    ]);
    expect(pcs.spec.template.cliques[1]?.labels['lpx.nvidia.com/serving']).toBe('true');
    // The seed is minAvailable (default 1), never the explicit replicas (lpx.md §6.2).
    expect(pcs.spec.template.podCliqueScalingGroups).toMatchObject([{ name: 'lpx', cliqueNames: ['agt', 'cond'], replicas: 1, minAvailable: 1 }]);
  });

  it('"This applies to aggregated, disaggregated, and LPX deployments": the strategy annotation sets updateStrategy; none without it', () => {
    expect(render(aDgd({ annotations: { 'nvidia.com/grove-update-strategy': 'Coherent' } })).spec.updateStrategy).toEqual({ type: 'Coherent' });
    expect(render(aDgd()).spec.updateStrategy).toBeUndefined();
  });

  it('a shared pair: agents agt0..agt{n-1} for draft0..draft{n-1}, then target; availability and budget from the target, the draft has none of its own', () => {
    const pcs = render(aDgd({ components: pair }));
    expect(pcs.spec.template.cliques.map((c) => [c.name, c.annotations['scheduling.lpu.nvidia.com/model']])).toEqual([
      ['agt0', 'draft0'],
      ['agt1', 'draft1'],
      ['agt2', 'target'],
      ['cond', undefined],
    ]);
    expect(pcs.spec.template.podCliqueScalingGroups).toMatchObject([{ name: 'lpx', minAvailable: 1, rollingUpdate: { maxUnavailable: 1 } }]);
  });
});

describe('pipeline requests (lpx.md §3.2)', () => {
  it('one request per workload, model and replica ordinal, controlled by the PodCliqueSet; names exclude the revision', () => {
    const dgd = aDgd({ components: pair });
    const requests = desiredPipelineRequests(ID, 'llama', resolveLpxWorkloads(dgd), new Map([['lpx', 2]]), { name: 'llama-ab12', uid: 'pcs-uid' });
    expect(requests.map((r) => [r.replicaIndex, r.model])).toEqual([
      [0, 'draft0'], [0, 'draft1'], [0, 'target'],
      [1, 'draft0'], [1, 'draft1'], [1, 'target'],
    ]);
    expect(requests[0]?.name).toBe(pipelineRequestName(ID, { workload: 'lpx', workloadCount: 1, model: 'draft0', replicaIndex: 0 }));
    expect(requests[0]?.name).toMatch(/^lpx-llama-[0-9a-f]{32}$/);
    expect(requests[3]?.object.metadata['ownerReferences']).toEqual([{ apiVersion: 'grove.io/v1alpha1', kind: 'PodCliqueSet', name: 'llama-ab12', uid: 'pcs-uid', controller: true, blockOwnerDeletion: true }]);
    expect(requests[3]?.object['spec']).toMatchObject({ materializationTarget: { podCliqueSetReplicaIndex: 0, podCliqueScalingGroupRef: { name: 'llama-ab12-0-lpx', replicaIndex: 1 } }, nodeLocal: { model: 'draft0', agentPodCliqueRef: { name: 'llama-ab12-0-lpx-1-agt0' } } });
  });
});

describe('input revision (dgd-reference "Grove rollout budget overrides"; lpx.md §2.1)', () => {
  const withBudget = (maxUnavailable: number) =>
    aDgd({ components: [{ name: 'frontend', type: 'frontend' }, { name: 'engine', type: 'lpx', replicas: 2, lpx: { buildId: 'b' }, roles: [role('agent'), role('conductor')], providerOverride: { apiVersion: 'grove.io/v1alpha1', value: { rollingUpdate: { maxUnavailable } } } }] });

  it('"For LPX, budget edits advance the input revision ... The PCS identity and existing pipeline requests remain unchanged"', () => {
    const before = withBudget(1);
    const after = withBudget(2);
    expect(lpxInputRevision(after, '')).not.toBe(lpxInputRevision(before, ''));
    expect(render(after).metadata.name).toBe(render(before).metadata.name);
    const names = (dgd: Dgd) => desiredPipelineRequests(ID, 'llama', resolveLpxWorkloads(dgd), new Map([['lpx', 2]]), { name: 'p', uid: 'u' }).map((r) => [r.name, r.object['spec']]);
    expect(names(after)).toEqual(names(before));
    expect(render(after).spec.template.podCliqueScalingGroups[0]).toMatchObject({ rollingUpdate: { maxUnavailable: 2 } });
  });

  it('an ordinary component edit outside the workers\' hash leaves it unchanged; the strategy annotation changes it', () => {
    const base = aDgd();
    const frontendEdit = aDgd({ components: [{ name: 'frontend', type: 'frontend', replicas: 3 }, ...(base.spec.components.slice(1) as unknown[])] });
    expect(lpxInputRevision(frontendEdit, '')).toBe(lpxInputRevision(base, ''));
    expect(lpxInputRevision(aDgd({ annotations: { 'nvidia.com/grove-update-strategy': 'Coherent' } }), '')).not.toBe(lpxInputRevision(base, ''));
  });

  it('the LPXGraphDeployment is named after the DGD, controlled by it, and never adopted from another owner', () => {
    const handoff = decideLpxHandoff(aDgd(), undefined);
    expect(handoff).toMatchObject({ ok: true, object: { metadata: { name: 'llama', namespace: 'inference', ownerReferences: [{ kind: 'DynamoGraphDeployment', uid: 'dgd-uid', controller: true, blockOwnerDeletion: true }] } } });
    expect(decideLpxHandoff(aDgd(), { ownerReferences: [{ uid: 'someone-else', controller: true }], annotations: {} })).toEqual({
      ok: false,
      message: 'LPXGraphDeployment "llama" belongs to a different source; adoption is not supported',
    });
  });
});
