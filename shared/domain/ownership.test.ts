import { describe, expect, it } from 'vitest';
import { deepFreeze } from '../../test/support/builders.js';
import { lpxRuntimeConfigMapOwner } from './ownership.js';

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
