import { describe, expect, it } from 'vitest';
import { deepFreeze } from '../../test/support/builders.js';
import { lpxRuntimeConfigMapOwner, selectGroveChildren } from './ownership.js';

const LPXGD_OWNER = { apiVersion: 'nvidia.com/v1alpha1', kind: 'LPXGraphDeployment', name: 'my-graph', uid: 'u-1', controller: true, blockOwnerDeletion: true };
const LABELS = { 'lpx.nvidia.com/deployment-uid': 'u-1' };

describe('lpxRuntimeConfigMapOwner: a runtime ConfigMap event reaches the LPXGraphDeployment that controls it (upstream-notes/lpx.md §6.1 "Owned ConfigMaps"; §2.3 "The LPXGD owns ... the runtime ConfigMaps")', () => {
  const rows: { name: string; reason: string; input: Record<string, unknown>; want: ReturnType<typeof lpxRuntimeConfigMapOwner> }[] = [
    {
      name: 'a runtime ConfigMap controlled by an LPXGraphDeployment',
      reason: 'controller owner reference of kind LPXGraphDeployment, group nvidia.com (as runtime-configmaps.ts writes it)',
      input: { metadata: { name: 'my-graph-1a2b-lpu-0123456789abcdef', namespace: 'ns', labels: LABELS, ownerReferences: [LPXGD_OWNER] } },
      want: { namespace: 'ns', name: 'my-graph' },
    },
    { name: 'a labelled ConfigMap without a controller', reason: 'the label only selects what the source delivers; no controller: never adopted, triggers nothing', input: { metadata: { name: 'x', namespace: 'ns', labels: LABELS } }, want: undefined },
    { name: 'a non-controller LPXGraphDeployment owner reference', reason: 'only controller: true counts', input: { metadata: { name: 'x', namespace: 'ns', ownerReferences: [{ ...LPXGD_OWNER, controller: false }] } }, want: undefined },
    { name: 'an LPXGraphDeployment of another group', reason: 'kind and group must both match', input: { metadata: { name: 'x', namespace: 'ns', ownerReferences: [{ ...LPXGD_OWNER, apiVersion: 'example.com/v1' }] } }, want: undefined },
    { name: 'a ConfigMap a DGD controls', reason: 'not an LPX runtime ConfigMap: the DGD routes handle their own children', input: { metadata: { name: 'x', namespace: 'ns', ownerReferences: [{ ...LPXGD_OWNER, kind: 'DynamoGraphDeployment', apiVersion: 'nvidia.com/v1beta1' }] } }, want: undefined },
    { name: 'a controller reference without a name', reason: 'nothing to reconcile', input: { metadata: { name: 'x', namespace: 'ns', ownerReferences: [{ ...LPXGD_OWNER, name: '' }] } }, want: undefined },
  ];
  it.each(rows)('$name ($reason)', ({ input, want }) => {
    expect(lpxRuntimeConfigMapOwner(deepFreeze(input))).toEqual(want);
  });
});

describe('selectGroveChildren: issue 20 "the same rule everywhere a function reads what a Job or a user could also write": only the PodCliqueSet\'s own Grove children are read', () => {
  const PCS_UID = 'pcs-uid';
  const controlledBy = (kind: string, name: string, uid: string) => [{ apiVersion: 'grove.io/v1alpha1', kind, name, uid, controller: true, blockOwnerDeletion: true }];
  const group = (name: string, ownerReferences?: readonly Record<string, unknown>[], uid = `${name}-uid`) => ({ metadata: { name, uid, ...(ownerReferences === undefined ? {} : { ownerReferences }) } });
  const clique = (name: string, ownerReferences?: readonly Record<string, unknown>[]) => ({ metadata: { name, ...(ownerReferences === undefined ? {} : { ownerReferences }) } });
  const OURS_GROUP = group('graph-0-decode', controlledBy('PodCliqueSet', 'graph', PCS_UID));
  const rows: {
    name: string;
    reason: string;
    input: { pcsUid: string | undefined; scalingGroups: ReturnType<typeof group>[]; podCliques: ReturnType<typeof clique>[] };
    want: { scalingGroups: string[]; podCliques: string[] };
  }[] = [
    {
      name: 'Grove\'s children are kept',
      reason: 'the PodCliqueSet controls its standalone cliques and scaling groups; a scaling group the cliques of its replicas (Grove; shared/dev/grove-simulation.ts)',
      input: {
        pcsUid: PCS_UID,
        scalingGroups: [OURS_GROUP],
        podCliques: [clique('graph-0-frontend', controlledBy('PodCliqueSet', 'graph', PCS_UID)), clique('graph-0-decode-0-ldr', controlledBy('PodCliqueScalingGroup', 'graph-0-decode', 'graph-0-decode-uid'))],
      },
      want: { scalingGroups: ['graph-0-decode'], podCliques: ['graph-0-frontend', 'graph-0-decode-0-ldr'] },
    },
    {
      name: 'a PodClique at a rendered name with no controller is not read',
      reason: 'labels and names prove nothing (issue 20 "Own what you read"); DESIGN.md "Writes": never adopt',
      input: { pcsUid: PCS_UID, scalingGroups: [], podCliques: [clique('graph-0-frontend')] },
      want: { scalingGroups: [], podCliques: [] },
    },
    {
      name: 'a PodClique and a scaling group controlled by another object are not read, nor the cliques of that scaling group',
      reason: 'a planted child controlled by something else; the cleanup function reads LPX scaling groups only when the PodCliqueSet controls them',
      input: {
        pcsUid: PCS_UID,
        scalingGroups: [group('graph-0-decode', controlledBy('PodCliqueSet', 'other', 'other-uid'))],
        podCliques: [clique('graph-0-frontend', controlledBy('PodCliqueSet', 'other', 'other-uid')), clique('graph-0-decode-0-ldr', controlledBy('PodCliqueScalingGroup', 'graph-0-decode', 'graph-0-decode-uid'))],
      },
      want: { scalingGroups: [], podCliques: [] },
    },
    {
      name: 'a non-controller owner reference to the PodCliqueSet does not count',
      reason: 'only the owner reference with controller: true (metav1.GetControllerOf)',
      input: { pcsUid: PCS_UID, scalingGroups: [], podCliques: [clique('graph-0-frontend', [{ ...controlledBy('PodCliqueSet', 'graph', PCS_UID)[0], controller: false }])] },
      want: { scalingGroups: [], podCliques: [] },
    },
    {
      name: 'no PodCliqueSet observed: nothing is read',
      reason: 'without the PodCliqueSet\'s uid nothing can be proved its child',
      input: { pcsUid: undefined, scalingGroups: [OURS_GROUP], podCliques: [clique('graph-0-frontend', controlledBy('PodCliqueSet', 'graph', PCS_UID))] },
      want: { scalingGroups: [], podCliques: [] },
    },
  ];
  it.each(rows)('$name ($reason)', ({ input, want }) => {
    const frozen = deepFreeze(input);
    const kept = selectGroveChildren(frozen.pcsUid, frozen.scalingGroups, frozen.podCliques);
    expect({ scalingGroups: kept.scalingGroups.map((g) => g.metadata.name), podCliques: kept.podCliques.map((c) => c.metadata.name) }).toEqual(want);
    expect(selectGroveChildren(frozen.pcsUid, frozen.scalingGroups, frozen.podCliques)).toEqual(kept);
  });
});
