/**
 * Strict input: unknown fields reported as the API server's strict field validation words
 * them (`unknown field "<path>"`); test/integration/pod-dry-run.test.ts checks the same paths
 * against the real API server.
 */
import { describe, expect, it } from 'vitest';
import { renderYaml } from './render.js';
import { formatUnknownField, unknownDgdFields, unknownDgdrFields } from './strict-fields.js';

const beta = (spec: Record<string, unknown>, metadata: Record<string, unknown> = { name: 'g' }) => ({ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', metadata, spec });
const main = (extra: Record<string, unknown> = {}) => ({ podTemplate: { spec: { containers: [{ name: 'main', image: 'i:1', ...extra }] } } });

describe('unknownDgdFields', () => {
  it.each([
    { name: 'a valid v1beta1 DGD has none', object: beta({ backendFramework: 'vllm', components: [{ name: 'w', type: 'worker', replicas: 1, ...main() }] }), want: [] },
    { name: 'misspelled spec field (backendFramwork)', object: beta({ backendFramwork: 'vllm', components: [] }), want: ['spec.backendFramwork'] },
    { name: 'misspelled component field at its list position (replcas)', object: beta({ components: [{ name: 'a', ...main() }, { name: 'w', replcas: 2, ...main() }] }), want: ['spec.components[1].replcas'] },
    { name: 'unknown pod template field, checked against the Kubernetes PodSpec', object: beta({ components: [{ name: 'w', podTemplate: { spec: { nodeSelecter: {}, containers: [{ name: 'main', image: 'i', imagePullPolcy: 'Always' }] } } }] }), want: ['spec.components[0].podTemplate.spec.nodeSelecter', 'spec.components[0].podTemplate.spec.containers[0].imagePullPolcy'] },
    { name: 'unknown graph env field (valueFom)', object: beta({ env: [{ name: 'A', valueFom: {} }], components: [] }), want: ['spec.env[0].valueFom'] },
    { name: 'unknown metadata field (labls)', object: beta({ components: [] }, { name: 'g', labls: {} }), want: ['metadata.labls'] },
    { name: 'providerOverride.value stays open, as the CRD keeps it', object: beta({ components: [{ name: 'w', providerOverride: { apiVersion: 'grove.io/v1alpha1', value: { anything: 1 } }, ...main() }] }), want: [] },
    {
      name: 'v1alpha1: spec, service, extraPodSpec and mainContainer fields, services keyed by name',
      object: { apiVersion: 'nvidia.com/v1alpha1', kind: 'DynamoGraphDeployment', metadata: { name: 'a' }, spec: { servces: {}, services: { W: { componentType: 'worker', replica: 1, extraPodSpec: { nodeSelecter: {}, mainContainer: { image: 'x', argz: [] } } } } } },
      want: ['spec.servces', 'spec.services[W].replica', 'spec.services[W].extraPodSpec.nodeSelecter', 'spec.services[W].extraPodSpec.mainContainer.argz'],
    },
    { name: 'other kinds are not checked', object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, dataa: {} }, want: [] },
    { name: 'never throws on odd shapes (spec a string, components not a list)', object: { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', metadata: 'x', spec: { components: 'nope' } }, want: [] },
  ])('$name', ({ object, want }) => {
    expect(unknownDgdFields(object)).toEqual(want);
  });

  it('words each field as the API server does', () => {
    expect(formatUnknownField('spec.components[0].replcas')).toBe('unknown field "spec.components[0].replcas"');
  });
});

describe('dynamo-fn render: strict by default, --lenient only warns', () => {
  const text = 'apiVersion: nvidia.com/v1beta1\nkind: DynamoGraphDeployment\nmetadata: {name: g, namespace: inference}\nspec:\n  components:\n    - {name: w, type: worker, replcas: 2, podTemplate: {spec: {containers: [{name: main, image: "i:1"}]}}}\n';
  const options = { namespace: 'default', lpxEnabled: false, terminationDelay: '15m' };

  it('fails a DGD with an unknown field, naming the file, object and path, and renders nothing for it', () => {
    const out = renderYaml(text, 'g.yaml', options);
    expect([out.errors, out.objects]).toEqual([['g.yaml#1: DynamoGraphDeployment "g": unknown field "spec.components[0].replcas"'], []]);
  });

  it('with --lenient renders it and warns', () => {
    const out = renderYaml(text, 'g.yaml', { ...options, lenient: true });
    expect(out.errors).toEqual([]);
    expect(out.notes).toContain('g.yaml#1: DynamoGraphDeployment "g": warning: unknown field "spec.components[0].replcas"');
    expect(out.objects.map((o) => o.kind)).toEqual(['PodCliqueSet', 'Role', 'RoleBinding', 'Service', 'ServiceAccount']);
  });
});

describe('dynamo-fn render options', () => {
  it('passes --scheduler and --mpi-ssh-secret settings through renderYaml to the pod specs', () => {
    const text = 'apiVersion: nvidia.com/v1beta1\nkind: DynamoGraphDeployment\nmetadata: {name: g, namespace: inference}\nspec:\n  components:\n    - {name: w, type: worker, podTemplate: {spec: {containers: [{name: main, image: "i:1"}]}}}\n';
    const out = renderYaml(text, 'g.yaml', { namespace: 'default', lpxEnabled: false, terminationDelay: '15m', config: { scheduler: 'kai' } });
    const pcs = out.objects.find((o) => o.kind === 'PodCliqueSet') as unknown as { spec: { template: { cliques: { labels: Record<string, string>; spec: { podSpec: Record<string, unknown> } }[] } } };
    expect([pcs.spec.template.cliques[0]?.spec.podSpec['schedulerName'], pcs.spec.template.cliques[0]?.labels['kai.scheduler/queue']]).toEqual(['kai-scheduler', 'dynamo']);
  });
});

describe('unknownDgdrFields (dynamo-fn profile --local)', () => {
  const request = (spec: Record<string, unknown>, metadata: Record<string, unknown> = { name: 'r' }) => ({ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeploymentRequest', metadata, spec });
  it.each([
    { name: 'a valid v1beta1 request has none', object: request({ model: 'Qwen/Qwen3-0.6B', sla: { ttft: 2000, itl: 30 }, workload: { isl: 4000, osl: 1000 } }), want: [] },
    { name: 'misspelled spec field (searchStratgy)', object: request({ model: 'm', searchStratgy: 'rapid' }), want: ['spec.searchStratgy'] },
    { name: 'misspelled nested field (sla.ttf)', object: request({ model: 'm', sla: { ttf: 2000 } }), want: ['spec.sla.ttf'] },
    { name: 'unknown metadata field (labls)', object: request({ model: 'm' }, { name: 'r', labls: {} }), want: ['metadata.labls'] },
    { name: 'overrides.dgd stays open, as the CRD keeps it', object: request({ model: 'm', overrides: { dgd: { anything: 1 } } }), want: [] },
    { name: 'a v1alpha1 request is not checked here', object: { apiVersion: 'nvidia.com/v1alpha1', kind: 'DynamoGraphDeploymentRequest', metadata: { name: 'r' }, spec: { whatever: 1 } }, want: [] },
  ])('$name', ({ object, want }) => {
    expect(unknownDgdrFields(object)).toEqual(want);
  });
});
