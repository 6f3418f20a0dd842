/**
 * The Kubernetes discovery ServiceAccount, Role and RoleBinding, and the pods' ServiceAccount.
 * Expected values from upstream `deploy/operator/internal/discovery/resource.go` and
 * `resource_test.go` (`TestGetK8sDiscoveryLabelValue`, `TestGetK8sDiscoveryResourcesUseCappedLabel`,
 * `TestGetK8sDiscoveryRoleCanReadLeases`), and `internal/dynamo/graph.go` `GenerateBasePodSpec`.
 */
import { describe, expect, it } from 'vitest';
import { aComponent, aDgd, deepFreeze } from '../../../test/support/builders.js';
import { k8sDiscoveryLabelValue, k8sDiscoveryServiceAccountName } from './k8s-discovery.js';
import { DEFAULT_RENDER_CONFIG, renderDgd, type RenderedObject } from './render.js';

const OWNER = { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', name: 'my-graph', uid: '0b6c1e5e-1111-2222-3333-444455556666', controller: true, blockOwnerDeletion: true };
const LABELS = { 'app.kubernetes.io/component': 'rbac', 'app.kubernetes.io/managed-by': 'dynamo-operator', 'app.kubernetes.io/name': 'my-graph-k8s-service-discovery' };

function render(dgd: Parameters<typeof renderDgd>[0], config = DEFAULT_RENDER_CONFIG): readonly RenderedObject[] {
  const out = renderDgd(deepFreeze(dgd), { config });
  if (!out.ok) throw new Error(JSON.stringify(out.issues));
  return out.objects;
}

const podSpecs = (objects: readonly RenderedObject[]) =>
  Object.fromEntries(((objects.find((o) => o.kind === 'PodCliqueSet')?.['spec'] as { template: { cliques: { name: string; spec: { podSpec: Record<string, unknown> } }[] } }).template.cliques).map((c) => [c.name, c.spec.podSpec['serviceAccountName']]));

describe('Kubernetes discovery RBAC (upstream internal/discovery/resource.go)', () => {
  it('the ServiceAccount is "<dgd>-k8s-service-discovery" (GetK8sDiscoveryServiceAccountName)', () => {
    expect(k8sDiscoveryServiceAccountName('test-dgd')).toBe('test-dgd-k8s-service-discovery');
  });

  it.each([
    { name: 'short value unchanged', input: 'short-name', want: 'short-name' },
    { name: 'boundary value (63) unchanged', input: 'a'.repeat(63), want: 'a'.repeat(63) },
    // TestGetK8sDiscoveryLabelValue: "sha256(64 * 'b') starts with a0fab137; expected value is 54 'b' chars + '-' + first 8 hex chars".
    { name: 'over limit truncated with hash', input: 'b'.repeat(64), want: `${'b'.repeat(54)}-a0fab137` },
  ])('app.kubernetes.io/name label value: $name (TestGetK8sDiscoveryLabelValue)', ({ input, want }) => {
    expect(k8sDiscoveryLabelValue(input)).toBe(want);
  });

  it('a DGD with Kubernetes discovery (the default backend) renders the ServiceAccount, Role and RoleBinding, controlled by the DGD', () => {
    const objects = render(aDgd()).filter((o) => ['ServiceAccount', 'Role', 'RoleBinding'].includes(o.kind));
    const meta = (name: string) => ({ name, namespace: 'inference', labels: LABELS, ownerReferences: [OWNER] });
    expect(objects).toEqual([
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: meta('my-graph-k8s-service-discovery-role'),
        rules: [
          { apiGroups: [''], resources: ['endpoints', 'pods'], verbs: ['get', 'list', 'watch'] },
          { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['get', 'list', 'watch'] },
          { apiGroups: ['nvidia.com'], resources: ['dynamoworkermetadatas'], verbs: ['create', 'get', 'list', 'watch', 'update', 'patch', 'delete'] },
          // TestGetK8sDiscoveryRoleCanReadLeases: "discovery role does not grant get on coordination.k8s.io leases".
          { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get'] },
        ],
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: meta('my-graph-k8s-service-discovery-binding'),
        subjects: [{ kind: 'ServiceAccount', name: 'my-graph-k8s-service-discovery', namespace: 'inference' }],
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'my-graph-k8s-service-discovery-role' },
      },
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta('my-graph-k8s-service-discovery') },
    ]);
  });

  it('all three carry the SA name capped at 63 characters as app.kubernetes.io/name (TestGetK8sDiscoveryResourcesUseCappedLabel)', () => {
    const name = 'a'.repeat(60);
    const objects = render(aDgd({ metadata: { name } })).filter((o) => ['ServiceAccount', 'Role', 'RoleBinding'].includes(o.kind));
    const values = objects.map((o) => (o.metadata['labels'] as Record<string, string>)['app.kubernetes.io/name']);
    expect(values).toEqual(Array(3).fill(k8sDiscoveryLabelValue(`${name}-k8s-service-discovery`)));
    expect(values[0]).toHaveLength(63);
  });

  it('every pod runs as the discovery ServiceAccount unless it names one; the planner keeps planner-serviceaccount (GenerateBasePodSpec: "if podSpec.ServiceAccountName == \\"\\"")', () => {
    const authored = aComponent('worker', 'worker', { podTemplate: { spec: { serviceAccountName: 'mine', containers: [{ name: 'main', image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0' }] } } });
    const dgd = aDgd({ spec: { components: [aComponent('frontend', 'frontend'), authored, aComponent('planner', 'planner')] } });
    expect(podSpecs(render(dgd))).toEqual({ frontend: 'my-graph-k8s-service-discovery', worker: 'mine', planner: 'planner-serviceaccount' });
  });

  it('with the etcd backend (the DGD annotation, or the operator default) nothing is rendered and no pod names the ServiceAccount (IsK8sDiscoveryEnabled)', () => {
    const annotated = render(aDgd({ metadata: { annotations: { 'nvidia.com/dynamo-discovery-backend': 'etcd' } } }));
    const byDefault = render(aDgd(), { ...DEFAULT_RENDER_CONFIG, discoveryBackend: 'etcd' });
    for (const objects of [annotated, byDefault]) {
      expect(objects.map((o) => o.kind)).toEqual(['PodCliqueSet', 'Service', 'Service']);
      expect(podSpecs(objects)).toEqual({ frontend: undefined, worker: undefined });
    }
  });

  it('a component that opts into Kubernetes discovery under an etcd default gets the ServiceAccount, and it is rendered so its pods can start', () => {
    const worker = aComponent('worker', 'worker', { podTemplate: { metadata: { annotations: { 'nvidia.com/dynamo-discovery-backend': 'kubernetes' } }, spec: { containers: [{ name: 'main', image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0' }] } } });
    const objects = render(aDgd({ spec: { components: [aComponent('frontend', 'frontend'), worker] } }), { ...DEFAULT_RENDER_CONFIG, discoveryBackend: 'etcd' });
    expect(podSpecs(objects)).toEqual({ frontend: undefined, worker: 'my-graph-k8s-service-discovery' });
    expect(objects.map((o) => o.kind)).toEqual(['PodCliqueSet', 'Role', 'RoleBinding', 'Service', 'Service', 'ServiceAccount']);
  });

  it('a DGD name whose ServiceAccount name would exceed 253 characters is refused at metadata.name', () => {
    const name = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(50)}`;
    const out = renderDgd(aDgd({ metadata: { name } }));
    expect(out.ok ? [] : out.issues.filter((i) => i.path === 'metadata.name').map((i) => i.type)).toEqual(['TooLong']);
  });
});
