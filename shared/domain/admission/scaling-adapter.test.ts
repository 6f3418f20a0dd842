/**
 * Who may change adapter-managed replicas, as upstream's webhook decides
 * (internal/webhook/common.go CanModifyDGDReplicas; internal/webhook/validation v1beta1
 * validateReplicasChanges: "spec.components[<name>].replicas cannot be modified directly when
 * scaling adapter is enabled; scale or update the related DynamoGraphDeploymentScalingAdapter instead").
 */
import { describe, expect, it } from 'vitest';
import { aComponent, aDgd, deepFreeze } from '../../../test/support/builders.js';
import { canModifyAdapterManagedReplicas } from './scaling-adapter.js';
import { validateDgd } from './validate.js';

const RECONCILE = 'system:serviceaccount:dynamo-system:dynamo-reconcile';
const config = { lpxEnabled: false, replicasModifiers: [RECONCILE] };
const DENIAL = {
  path: 'spec.components[1].replicas',
  type: 'Forbidden',
  detail: 'cannot be modified directly when scaling adapter is enabled; scale or update the related DynamoGraphDeploymentScalingAdapter instead',
};

const graph = (replicas: number | undefined, scalingAdapter = true) =>
  aDgd({ spec: { components: [aComponent('frontend', 'frontend'), aComponent('decode', 'decode', { replicas, ...(scalingAdapter ? { scalingAdapter: {} } : {}) })] } });

describe('canModifyAdapterManagedReplicas (upstream CanModifyDGDReplicas)', () => {
  it.each([
    { name: 'a configured operator principal, exactly', username: RECONCILE, want: true },
    { name: 'the Planner service account in any namespace', username: 'system:serviceaccount:team-a:planner-serviceaccount', want: true },
    { name: 'another service account', username: 'system:serviceaccount:dynamo-system:someone', want: false },
    { name: 'a user, even one named like the principal', username: 'dynamo-reconcile', want: false },
    { name: 'no user info (fail closed)', username: undefined, want: false },
  ])('$name -> $want', ({ username, want }) => {
    expect(canModifyAdapterManagedReplicas(username, [RECONCILE])).toBe(want);
  });
});

describe('validateScalingAdapterReplicas (through validateDgd)', () => {
  it.each([
    { name: 'a user changing the replicas of a scalingAdapter component is denied at the field path', old: graph(2), next: graph(3), username: 'alice', want: [DENIAL] },
    { name: 'an omitted replicas counts as 1, so 1 -> omitted is no change', old: graph(1), next: graph(undefined), username: 'alice', want: [] },
    { name: 'the reconcile function may write the adapter replicas', old: graph(2), next: graph(3), username: RECONCILE, want: [] },
    { name: 'the Planner may scale', old: graph(2), next: graph(5), username: 'system:serviceaccount:inference:planner-serviceaccount', want: [] },
    { name: 'components without scalingAdapter scale freely', old: graph(2, false), next: graph(3, false), username: 'alice', want: [] },
    { name: 'no user info fails closed', old: graph(2), next: graph(3), username: undefined, want: [DENIAL] },
  ])('$name', ({ old, next, username, want }) => {
    expect(validateDgd(deepFreeze(next), deepFreeze(old), config, { username }).issues).toEqual(want);
  });

  it('does not apply on create', () => {
    expect(validateDgd(graph(3), undefined, config, { username: 'alice' }).issues).toEqual([]);
  });

  it('reports a v1alpha1 request at the service path', () => {
    const alpha = (replicas: number) => ({
      apiVersion: 'nvidia.com/v1alpha1',
      kind: 'DynamoGraphDeployment',
      metadata: { name: 'g', namespace: 'ns' },
      spec: { services: { decode: { componentType: 'worker', subComponentType: 'decode', replicas, scalingAdapter: { enabled: true }, extraPodSpec: { mainContainer: { image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0' } } } } },
    });
    expect(validateDgd(alpha(3), alpha(2), config, { username: 'alice' }).issues).toEqual([{ ...DENIAL, path: 'spec.services[decode].replicas' }]);
  });
});

describe('the validating webhook reads request.userInfo', () => {
  it('denies a user replica edit of a scalingAdapter component and allows the configured principal', async () => {
    const { answerAdmissionReview } = await import('../../../functions/admission/review.js');
    const review = (username: string) =>
      JSON.stringify({
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        request: { uid: 'u', kind: { group: 'nvidia.com', version: 'v1beta1', kind: 'DynamoGraphDeployment' }, operation: 'UPDATE', userInfo: { username }, object: graph(3), oldObject: graph(2) },
      });
    const route = { kind: 'validate', version: 'v1beta1' } as const;
    const denied = answerAdmissionReview(route, review('alice'), config);
    const allowed = answerAdmissionReview(route, review(RECONCILE), config);
    if (denied.status !== 200 || allowed.status !== 200) throw new Error('not answered');
    expect(denied.review.response.allowed).toBe(false);
    expect(denied.review.response.status?.message).toBe(
      'DynamoGraphDeployment.nvidia.com "my-graph" is invalid: spec.components[1].replicas: Forbidden: cannot be modified directly when scaling adapter is enabled; scale or update the related DynamoGraphDeploymentScalingAdapter instead',
    );
    expect(allowed.review.response.allowed).toBe(true);
  });
});
