/**
 * The typed topology rules: the graph constraint a component constraint needs, a component's pack
 * domain against the graph's in the named ClusterTopologyBinding's levels, and a kvTransferPolicy's
 * domain. Expected texts are upstream's (`dynamographdeployment.go` validateDynamoGraphDeploymentSpec,
 * validateSpecTopologyConstraint, validateKvTransferPolicy; `shared_v1beta1.go`
 * validateTopologyConstraint), as Kubernetes prints a field.Error.
 */
import { describe, expect, it } from 'vitest';
import { formatIssue } from '../../api/index.js';
import { clusterTopologyNamesToRead, validateDgd, type ClusterTopologies, type ClusterTopologyObservation } from './index.js';

type Obj = Record<string, unknown>;

const worker = (extra: Obj = {}): Obj => ({ name: 'worker', type: 'worker', replicas: 1, podTemplate: { spec: { containers: [{ name: 'main', image: 'runtime:1.6.1' }] } }, ...extra });
const prefill = (extra: Obj = {}): Obj => ({ name: 'prefill', type: 'prefill', replicas: 1, podTemplate: { spec: { containers: [{ name: 'main', image: 'runtime:1.6.1' }] } }, ...extra });

function aDgd(spec: Obj, generation = 1): Obj {
  return { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', metadata: { name: 'g', namespace: 'ns', generation }, spec: { backendFramework: 'vllm', components: [worker()], ...spec } };
}

/** Grove's levels, widest first (a ClusterTopologyBinding's `spec.levels[*].domain`). */
const GB200: ClusterTopologyObservation = { found: true, domains: ['zone', 'block', 'rack', 'host', 'numa'] };
const topologies = (entries: Record<string, ClusterTopologyObservation>): ClusterTopologies => new Map(Object.entries(entries));
const config = { lpxEnabled: false };

function issuesOf(object: Obj, observed?: ClusterTopologies): string[] {
  return validateDgd(object, undefined, config, observed === undefined ? {} : { clusterTopologies: observed }).issues.map(formatIssue);
}

describe('typed topology (upstream validateDynamoGraphDeploymentSpec, topology block)', () => {
  it.each<{ name: string; spec: Obj; observed?: ClusterTopologies; want: string[] }>([
    {
      name: 'a component constraint without the graph\'s: "is required when any component topology constraint is set"',
      spec: { components: [worker({ topologyConstraint: { packDomain: 'rack' } })] },
      want: ['spec.topologyConstraint: Required value: is required when any component topology constraint is set'],
    },
    {
      name: 'a graph constraint with no packDomain and no component constraint: "is required when no component topologyConstraint is set"',
      spec: { topologyConstraint: { clusterTopologyName: 'gb200' } },
      want: ['spec.topologyConstraint.packDomain: Required value: is required when no component topologyConstraint is set'],
    },
    {
      name: 'a component domain narrower than the graph\'s is admitted ("must be equal to or narrower")',
      spec: { topologyConstraint: { clusterTopologyName: 'gb200', packDomain: 'block' }, components: [worker({ topologyConstraint: { packDomain: 'rack' } }), prefill({ topologyConstraint: { packDomain: 'block' } })] },
      observed: topologies({ gb200: GB200 }),
      want: [],
    },
    {
      name: 'a component domain wider than the graph\'s: "must be equal to or narrower than the deployment-level domain"',
      spec: { topologyConstraint: { clusterTopologyName: 'gb200', packDomain: 'rack' }, components: [worker({ topologyConstraint: { packDomain: 'zone' } })] },
      observed: topologies({ gb200: GB200 }),
      want: ['spec.components[0].topologyConstraint.packDomain: Invalid value: "zone": must be equal to or narrower than the deployment-level domain "rack"'],
    },
    {
      name: 'domains the binding does not have, listed sorted as upstream\'s readGroveClusterTopology sorts them',
      spec: { topologyConstraint: { clusterTopologyName: 'gb200', packDomain: 'datacenter' }, components: [worker({ topologyConstraint: { packDomain: 'pod' } })] },
      observed: topologies({ gb200: GB200 }),
      want: [
        'spec.topologyConstraint.packDomain: Invalid value: "datacenter": does not exist in ClusterTopologyBinding "gb200"; available domains: [block host numa rack zone]',
        'spec.components[0].topologyConstraint.packDomain: Invalid value: "pod": does not exist in ClusterTopology "gb200"; available domains: [block host numa rack zone]',
      ],
    },
    {
      name: 'a binding that does not exist: "references a ClusterTopologyBinding resource that was not found"',
      spec: { topologyConstraint: { clusterTopologyName: 'missing', packDomain: 'rack' } },
      observed: topologies({ missing: { found: false } }),
      want: ['spec.topologyConstraint.clusterTopologyName: Invalid value: "missing": references a ClusterTopologyBinding resource that was not found'],
    },
    {
      name: 'a binding that could not be read: "failed to read ClusterTopologyBinding: <error>"',
      spec: { topologyConstraint: { clusterTopologyName: 'gb200', packDomain: 'rack' } },
      observed: topologies({ gb200: { error: 'clustertopologybindings.grove.io "gb200" is forbidden' } }),
      want: ['spec.topologyConstraint.clusterTopologyName: Invalid value: "gb200": failed to read ClusterTopologyBinding: clustertopologybindings.grove.io "gb200" is forbidden'],
    },
    {
      name: 'no binding read (no reader configured): the live checks are skipped, the static ones still hold',
      spec: { topologyConstraint: { clusterTopologyName: 'gb200', packDomain: 'rack' }, components: [worker({ topologyConstraint: { packDomain: 'zone' } })] },
      want: [],
    },
  ])('$name', ({ spec, observed, want }) => {
    expect(issuesOf(aDgd(spec), observed)).toEqual(want);
  });

  it('reads the bindings only on a create (generation <= 1), as upstream does: a later generation is not checked against them', () => {
    const spec = { topologyConstraint: { clusterTopologyName: 'gb200', packDomain: 'rack' }, components: [worker({ topologyConstraint: { packDomain: 'zone' } })] };
    expect(clusterTopologyNamesToRead(aDgd(spec, 1))).toEqual(['gb200']);
    expect(clusterTopologyNamesToRead(aDgd(spec, 2))).toEqual([]);
    expect(clusterTopologyNamesToRead(aDgd({ ...spec, experimental: { kvTransferPolicy: { clusterTopologyName: 'nvl72', domain: 'rack' } } }, 1))).toEqual(['gb200', 'nvl72']);
    // v1alpha1: components are spec.services.
    expect(clusterTopologyNamesToRead({ metadata: {}, spec: { topologyConstraint: { clusterTopologyName: 'gb200' }, services: { Worker: { topologyConstraint: { packDomain: 'rack' } } } } })).toEqual(['gb200']);
    expect(clusterTopologyNamesToRead(aDgd({}, 1))).toEqual([]);
    expect(issuesOf(aDgd(spec, 2), topologies({ gb200: GB200 }))).toEqual([]);
  });

  it('runs on create only: upstream\'s update path skips the stateless traversal (the constraints are immutable there)', () => {
    const stored = aDgd({ components: [worker({ topologyConstraint: { packDomain: 'rack' } })] });
    expect(validateDgd(stored, stored, config).issues).toEqual([]);
  });
});

describe('kvTransferPolicy against its ClusterTopologyBinding (upstream validateKvTransferPolicy)', () => {
  const policy = (fields: Obj): Obj => ({ experimental: { kvTransferPolicy: { domain: 'rack', ...fields } } });

  it.each<{ name: string; spec: Obj; observed?: ClusterTopologies; want: string[] }>([
    { name: 'a domain the binding has', spec: policy({ clusterTopologyName: 'gb200' }), observed: topologies({ gb200: GB200 }), want: [] },
    {
      name: 'a domain the binding does not have',
      spec: policy({ clusterTopologyName: 'gb200', domain: 'spine' }),
      observed: topologies({ gb200: GB200 }),
      want: ['spec.experimental.kvTransferPolicy.domain: Invalid value: "spine": does not exist in ClusterTopologyBinding "gb200"; available domains: [block host numa rack zone]'],
    },
    {
      name: 'a binding that does not exist',
      spec: policy({ clusterTopologyName: 'gone' }),
      observed: topologies({ gone: { found: false } }),
      want: ['spec.experimental.kvTransferPolicy.clusterTopologyName: Invalid value: "gone": references a ClusterTopologyBinding resource that was not found'],
    },
    {
      name: 'a name that is not a DNS-1123 subdomain (k8svalidation.IsDNS1123Subdomain), never read',
      spec: policy({ clusterTopologyName: 'GB200' }),
      want: [
        "spec.experimental.kvTransferPolicy.clusterTopologyName: Invalid value: \"GB200\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
      ],
    },
    { name: 'a labelKey policy reads no binding', spec: policy({ labelKey: 'topology.kubernetes.io/rack' }), want: [] },
  ])('$name', ({ spec, observed, want }) => {
    expect(issuesOf(aDgd(spec), observed)).toEqual(want);
  });
});
