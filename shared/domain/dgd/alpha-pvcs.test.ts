/**
 * v1alpha1 `spec.pvcs[]` with `create: true`: the claims the operator creates. Expected values
 * from upstream `internal/controller` `constructPVC` (name, accessModes, requests.storage,
 * storageClassName), `reconcilePVC` (the DGD as controller) and the v1alpha1 `PVC` CEL rule.
 */
import { describe, expect, it } from 'vitest';
import { ANNOTATION_DGD_SPEC, convertDgd, parseDgd } from '../../api/index.js';
import { deepFreeze } from '../../../test/support/builders.js';
import { renderDgd } from './render.js';

const alpha = (pvcs: unknown[]) => ({
  apiVersion: 'nvidia.com/v1alpha1',
  kind: 'DynamoGraphDeployment',
  metadata: { name: 'llama', namespace: 'inference', uid: 'dgd-uid' },
  spec: {
    pvcs,
    services: {
      Frontend: { componentType: 'frontend', extraPodSpec: { mainContainer: { image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0' } } },
      Worker: { componentType: 'worker', volumeMounts: [{ name: 'model-cache', mountPoint: '/models' }], extraPodSpec: { mainContainer: { image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0' } } },
    },
  },
});

/** What the API server stores: the conversion webhook's v1beta1 object, parsed. */
function stored(pvcs: unknown[]) {
  const hub = convertDgd(alpha(pvcs), 'nvidia.com/v1beta1');
  if (!hub.ok) throw new Error(hub.message);
  const parsed = parseDgd(hub.object);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return deepFreeze(parsed.dgd);
}

describe('v1alpha1 spec.pvcs[].create (upstream reconcilePVC, constructPVC)', () => {
  it('the conversion keeps spec.pvcs in the nvidia.com/dgd-spec payload, which the render reads', () => {
    expect(JSON.parse(stored([{ name: 'model-cache' }]).metadata.annotations?.[ANNOTATION_DGD_SPEC] ?? '{}')).toMatchObject({ spec: { pvcs: [{ name: 'model-cache' }] } });
  });

  it('create: true renders the claim: accessModes [volumeAccessMode], requests.storage size, storageClassName, the DGD as controller', () => {
    const out = renderDgd(stored([{ name: 'model-cache', create: true, storageClass: 'standard', size: '100Gi', volumeAccessMode: 'ReadWriteMany' }]));
    expect(out.ok ? out.objects.filter((o) => o.kind === 'PersistentVolumeClaim') : out.issues).toEqual([
      {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: 'model-cache', namespace: 'inference', ownerReferences: [{ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', name: 'llama', uid: 'dgd-uid', controller: true, blockOwnerDeletion: true }] },
        spec: { accessModes: ['ReadWriteMany'], resources: { requests: { storage: '100Gi' } }, storageClassName: 'standard' },
      },
    ]);
  });

  it('an entry without create names a claim the user provides: nothing is rendered for it, the pod still mounts it', () => {
    const out = renderDgd(stored([{ name: 'model-cache' }, { name: 'other', create: false }]));
    expect(out.ok ? out.objects.map((o) => o.kind) : out.issues).not.toContain('PersistentVolumeClaim');
  });

  it.each([
    { name: 'no size', pvc: { name: 'c', create: true, storageClass: 'standard', volumeAccessMode: 'ReadWriteOnce' } },
    { name: 'no storageClass', pvc: { name: 'c', create: true, size: '1Gi', volumeAccessMode: 'ReadWriteOnce' } },
    { name: 'no volumeAccessMode', pvc: { name: 'c', create: true, size: '1Gi', storageClass: 'standard' } },
  ])('CEL "When create is true, size, storageClass, and volumeAccessMode are required": $name is refused at spec.pvcs[1]', ({ pvc }) => {
    const out = renderDgd(stored([{ name: 'model-cache' }, pvc]));
    expect(out.ok ? [] : out.issues).toEqual([{ path: 'spec.pvcs[1]', type: 'Invalid', detail: 'When create is true, size, storageClass, and volumeAccessMode are required' }]);
  });

  it('an entry without a name is refused at spec.pvcs[0].name ("Name is the name of the PVC", +kubebuilder:validation:Required)', () => {
    const out = renderDgd(stored([{ create: true, size: '1Gi', storageClass: 's', volumeAccessMode: 'ReadWriteOnce' }]));
    expect(out.ok ? [] : out.issues.map((i) => [i.path, i.type])).toEqual([['spec.pvcs[0].name', 'Required']]);
  });
});
