import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { Dgd, EnvVar } from '../../api/index.js';
import { aComponent, aDgd, deepFreeze } from '../../../test/support/builders.js';
import { renderDgd, type RenderedObject } from './render.js';
import { computeWorkerHash } from './worker-hash.js';

interface Clique {
  name: string;
  labels: Record<string, string>;
  rollingUpdate?: { maxUnavailable: number };
  topologyConstraint?: unknown;
  spec: { roleName: string; replicas: number; minAvailable: number; startsAfter?: string[]; podSpec: { containers: { name: string; env: EnvVar[]; ports?: unknown[] }[] } };
}
interface Pcs {
  metadata: { name: string; namespace: string; labels: Record<string, string>; ownerReferences?: unknown[] };
  spec: { replicas: number; updateStrategy?: { type: string }; template: { cliques: Clique[]; podCliqueScalingGroups?: Record<string, unknown>[]; topologyConstraint?: unknown; cliqueStartupType: string } };
}

function render(dgd: Dgd, lpxEnabled = false) {
  const result = renderDgd(deepFreeze(dgd), { config: { lpxEnabled, terminationDelay: '15m' } });
  if (!result.ok) throw new Error(`render failed: ${JSON.stringify(result.issues)}`);
  return result;
}
function pcsOf(dgd: Dgd): Pcs {
  const pcs = render(dgd).objects.find((o) => o.kind === 'PodCliqueSet');
  if (pcs === undefined) throw new Error('no PodCliqueSet');
  return pcs as unknown as Pcs;
}
function cliqueOf(dgd: Dgd, name: string): Clique {
  const clique = pcsOf(dgd).spec.template.cliques.find((c) => c.name === name);
  if (clique === undefined) throw new Error(`no clique ${name}`);
  return clique;
}
function envOf(clique: Clique): Record<string, EnvVar> {
  return Object.fromEntries((clique.spec.podSpec.containers.find((c) => c.name === 'main')?.env ?? []).map((e) => [e.name, e]));
}
const override = (value: Record<string, unknown>) => ({ apiVersion: 'grove.io/v1alpha1', value });

describe('renderDgd: PodCliqueSet shape (upstream-notes/dgd.md §4.1-§4.2)', () => {
  it('names the PodCliqueSet after the DGD, in the DGD namespace, owned by the DGD, one PCS replica', () => {
    const pcs = pcsOf(aDgd());
    expect(pcs.metadata).toMatchObject({ name: 'my-graph', namespace: 'inference', labels: { 'nvidia.com/dynamo-graph-deployment-name': 'my-graph' } });
    expect(pcs.metadata.ownerReferences).toEqual([
      { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', name: 'my-graph', uid: '0b6c1e5e-1111-2222-3333-444455556666', controller: true, blockOwnerDeletion: true },
    ]);
    expect(pcs.spec.replicas).toBe(1);
  });

  it('renders one clique per single-node component, lower-cased so a component named VllmWorker still gives a valid clique name', () => {
    const dgd = aDgd({ spec: { components: [aComponent('Frontend', 'frontend'), aComponent('VllmWorker', 'worker', { replicas: 3 })] } });
    const cliques = pcsOf(dgd).spec.template.cliques;
    expect(cliques.map((c) => [c.name, c.spec.roleName, c.spec.replicas])).toEqual([
      ['frontend', 'frontend', 1],
      ['vllmworker', 'vllmworker', 3],
    ]);
    expect(pcsOf(dgd).spec.template.podCliqueScalingGroups).toBeUndefined();
  });

  it('renders a multinode component as <name>-ldr (1) and <name>-wkr (nodeCount-1) in a scaling group named after it, each clique minAvailable = its own replicas', () => {
    const dgd = aDgd({ spec: { components: [aComponent('frontend', 'frontend'), aComponent('Decode', 'decode', { replicas: 2, multinode: { nodeCount: 4 } })] } });
    const pcs = pcsOf(dgd);
    expect(pcs.spec.template.cliques.slice(1).map((c) => [c.name, c.spec.replicas, c.spec.minAvailable])).toEqual([
      ['decode-ldr', 1, 1],
      ['decode-wkr', 3, 3],
    ]);
    expect(pcs.spec.template.podCliqueScalingGroups).toEqual([{ name: 'decode', cliqueNames: ['decode-ldr', 'decode-wkr'], replicas: 2, minAvailable: 1 }]);
  });

  it('starts a TRT-LLM multinode leader after its workers (Explicit startup)', () => {
    const dgd = aDgd({ spec: { backendFramework: 'trtllm', components: [aComponent('worker', 'worker', { multinode: { nodeCount: 2 } })] } });
    const pcs = pcsOf(dgd);
    expect(pcs.spec.template.cliqueStartupType).toBe('CliqueStartupTypeExplicit');
    expect(pcs.spec.template.cliques.find((c) => c.name === 'worker-ldr')?.spec.startsAfter).toEqual(['worker-wkr']);
  });

  it('gives experimental.grove.forceScalingGroup a scaling group with one clique of one replica', () => {
    const dgd = aDgd({ spec: { components: [aComponent('prefill', 'prefill', { replicas: 4, experimental: { grove: { forceScalingGroup: true } } })] } });
    const pcs = pcsOf(dgd);
    expect(pcs.spec.template.cliques.map((c) => [c.name, c.spec.replicas, c.spec.minAvailable])).toEqual([['prefill', 1, 1]]);
    expect(pcs.spec.template.podCliqueScalingGroups).toEqual([{ name: 'prefill', cliqueNames: ['prefill'], replicas: 4, minAvailable: 1 }]);
  });

  it('keeps LPX components out of the ordinary PodCliqueSet and renders no Service for them', () => {
    const dgd = aDgd({ spec: { components: [aComponent('frontend', 'frontend'), aComponent('lpu', 'lpx', { replicas: undefined, lpx: { buildId: 'b1' } })] } });
    const result = render(dgd, true);
    const pcs = result.objects.find((o) => o.kind === 'PodCliqueSet') as unknown as Pcs;
    expect(pcs.spec.template.cliques.map((c) => c.name)).toEqual(['frontend']);
    expect(result.objects.filter((o) => o.kind === 'Service').map((o) => o.metadata.name)).toEqual(['my-graph-frontend']);
  });
});

describe('renderDgd: availability ("Configure native minimum availability", dgd-reference)', () => {
  it.each([
    { name: 'omitted minimum resolves to 1 during rendering', component: aComponent('prefill', 'prefill', { replicas: 4 }), want: 1 },
    { name: 'deprecated component minAvailable', component: aComponent('prefill', 'prefill', { replicas: 4, minAvailable: 2 }), want: 2 },
    { name: 'standalone native value.spec.minAvailable', component: aComponent('prefill', 'prefill', { replicas: 4, providerOverride: override({ spec: { minAvailable: 3 } }) }), want: 3 },
  ])('effective minimum lands on the standalone clique: $name', ({ component, want }) => {
    expect(cliqueOf(aDgd({ spec: { components: [component] } }), 'prefill').spec.minAvailable).toBe(want);
  });

  it.each([
    { name: 'omitted', overrides: {}, want: 1 },
    { name: 'deprecated', overrides: { minAvailable: 2 }, want: 2 },
    { name: 'scaling-group native value.minAvailable', overrides: { providerOverride: override({ minAvailable: 2 }) }, want: 2 },
  ])('effective minimum lands on the scaling group of a multinode component: $name', ({ overrides, want }) => {
    const dgd = aDgd({ spec: { components: [aComponent('decode', 'decode', { replicas: 3, multinode: { nodeCount: 2 }, ...overrides })] } });
    expect(pcsOf(dgd).spec.template.podCliqueScalingGroups?.[0]?.['minAvailable']).toBe(want);
  });

  // Changed by issue 20 (was [0, 1]): upstream renders replicas 0 here and Grove's defaulting
  // makes it 1 ("spec.replicas defaults from 0 to 1", grove.md §A.5), so the template seeds 1;
  // the scale subresource takes the PodClique to 0 (grove-scaling.ts templateReplicas).
  it('lets a component scale to zero without clearing its minimum ("ordinary Grove components may scale to zero"; a Grove clique cannot rest at zero, grove#676: the template seeds 1)', () => {
    const clique = cliqueOf(aDgd({ spec: { components: [aComponent('prefill', 'prefill', { replicas: 0, providerOverride: override({ spec: { minAvailable: 1 } }) })] } }), 'prefill');
    expect([clique.spec.replicas, clique.spec.minAvailable]).toEqual([1, 1]);
  });

  it.each([
    { name: 'standalone clique, native minimum 2', component: aComponent('prefill', 'prefill', { replicas: 0, providerOverride: override({ spec: { minAvailable: 2 } }) }), at: 'clique' },
    { name: 'multinode scaling group, deprecated minimum 2', component: aComponent('decode', 'decode', { replicas: 0, minAvailable: 2, multinode: { nodeCount: 2 } }), at: 'group' },
    { name: 'forced scaling group, no minimum', component: aComponent('decode', 'decode', { replicas: 0, experimental: { grove: { forceScalingGroup: true } } }), at: 'group' },
  ])('seeds a component at 0 replicas with its minimum, so Grove admits it ("replicas must be > 0, and 0 < minAvailable ≤ replicas", grove.md §A.6): $name', ({ component, at }) => {
    const pcs = pcsOf(aDgd({ spec: { components: [component] } }));
    const want = component.minAvailable ?? (component.providerOverride === undefined ? 1 : 2);
    if (at === 'clique') expect([pcs.spec.template.cliques[0]?.spec.replicas, pcs.spec.template.cliques[0]?.spec.minAvailable]).toEqual([want, want]);
    else expect([pcs.spec.template.podCliqueScalingGroups?.[0]?.['replicas'], pcs.spec.template.podCliqueScalingGroups?.[0]?.['minAvailable']]).toEqual([want, want]);
  });
});

describe('renderDgd: rollout budget and topology ("Grove rollout budget overrides", dgd-reference)', () => {
  it('puts rollingUpdate.maxUnavailable on the generated standalone clique', () => {
    const dgd = aDgd({ spec: { components: [aComponent('decode', 'decode', { replicas: 8, providerOverride: override({ spec: { minAvailable: 1 }, rollingUpdate: { maxUnavailable: 1 } }) })] } });
    expect(cliqueOf(dgd, 'decode').rollingUpdate).toEqual({ maxUnavailable: 1 });
  });

  it('"Adding, changing, or removing only the budget preserves worker hashes and pod templates"', () => {
    const withBudget = (value: Record<string, unknown> | undefined) =>
      pcsOf(aDgd({ spec: { components: [aComponent('frontend', 'frontend'), aComponent('decode', 'decode', { replicas: 8, ...(value === undefined ? {} : { providerOverride: override(value) }) })] } }));
    const templates = (pcs: Pcs) => pcs.spec.template.cliques.map((c) => [c.name, c.labels, c.spec.podSpec]);
    const none = templates(withBudget(undefined));
    expect(templates(withBudget({ rollingUpdate: { maxUnavailable: 1 } }))).toEqual(none);
    expect(templates(withBudget({ rollingUpdate: { maxUnavailable: 3 } }))).toEqual(none);
  });

  it('routes the budget of a multinode component to the scaling group, never to its member cliques', () => {
    const dgd = aDgd({ spec: { components: [aComponent('decode', 'decode', { multinode: { nodeCount: 2 }, providerOverride: override({ rollingUpdate: { maxUnavailable: 2 } }) })] } });
    const pcs = pcsOf(dgd);
    expect(pcs.spec.template.podCliqueScalingGroups?.[0]?.['rollingUpdate']).toEqual({ maxUnavailable: 2 });
    expect(pcs.spec.template.cliques.map((c) => c.rollingUpdate)).toEqual([undefined, undefined]);
  });

  it('puts a component topology override on its owning clique and the graph-root override only on spec.template.topologyConstraint', () => {
    const componentTopology = { topologyName: 'gb200', pack: { required: 'rack' } };
    const rootTopology = { topologyName: 'gb200', pack: { required: 'zone' } };
    const dgd = aDgd({
      spec: {
        providerOverride: override({ spec: { template: { topologyConstraint: rootTopology } } }),
        components: [aComponent('frontend', 'frontend'), aComponent('worker', 'worker', { providerOverride: override({ topologyConstraint: componentTopology }) })],
      },
    });
    const pcs = pcsOf(dgd);
    expect(pcs.spec.template.topologyConstraint).toEqual(rootTopology);
    expect(pcs.spec.template.cliques.map((c) => c.topologyConstraint)).toEqual([undefined, componentTopology]);
  });
});

describe('renderDgd: update strategy ("Grove update strategy", dgd-reference)', () => {
  const annotated = (annotations: Record<string, string> | undefined) => aDgd({ metadata: { annotations } });
  it.each(['Coherent', 'RollingRecreate', 'OnDelete'])('metadata.annotations["nvidia.com/grove-update-strategy"]=%s selects spec.updateStrategy.type', (value) => {
    expect(pcsOf(annotated({ 'nvidia.com/grove-update-strategy': value })).spec.updateStrategy).toEqual({ type: value });
  });

  it('leaves updateStrategy unset without the annotation ("Grove uses RollingRecreate unless this annotation explicitly selects another strategy")', () => {
    expect(pcsOf(annotated(undefined)).spec.updateStrategy).toBeUndefined();
  });

  it('ignores a spec.annotations entry ("spec.annotations propagates annotations to child resources instead")', () => {
    const dgd = aDgd({ spec: { annotations: { 'nvidia.com/grove-update-strategy': 'Coherent' } } });
    expect(pcsOf(dgd).spec.updateStrategy).toBeUndefined();
  });

  it('does not select Coherent for either minimum form ("Neither the deprecated component minAvailable nor a native minimum in providerOverride enables Coherent")', () => {
    const legacy = aDgd({ spec: { components: [aComponent('worker', 'worker', { minAvailable: 1 })] } });
    const native = aDgd({ spec: { components: [aComponent('worker', 'worker', { providerOverride: override({ spec: { minAvailable: 1 } }) })] } });
    expect([pcsOf(legacy).spec.updateStrategy, pcsOf(native).spec.updateStrategy]).toEqual([undefined, undefined]);
  });

  it('rejects an annotation value that is not exactly one of the three (case-sensitive)', () => {
    const result = renderDgd(annotated({ 'nvidia.com/grove-update-strategy': 'coherent' }));
    expect(result).toEqual({
      ok: false,
      issues: [{ path: 'metadata.annotations[nvidia.com/grove-update-strategy]', type: 'NotSupported', value: 'coherent', detail: 'supported values: "Coherent", "RollingRecreate", "OnDelete"' }],
    });
  });
});

describe('renderDgd: pod templates (upstream-notes/dgd.md §4.4-§4.5)', () => {
  const dgd = aDgd({
    metadata: { name: 'qwen.small' },
    spec: {
      env: [{ name: 'HF_HOME', value: '/graph' }, { name: 'LOG_LEVEL', value: 'info' }],
      labels: { team: 'inference' },
      components: [
        aComponent('Frontend', 'frontend'),
        aComponent('decode', 'decode', { podTemplate: { metadata: { labels: { 'nvidia.com/dynamo-component': 'spoofed', tier: 'gpu' } }, spec: { containers: [{ name: 'main', image: 'img:1', env: [{ name: 'LOG_LEVEL', value: 'debug' }] }] } } }),
      ],
    },
  });

  it('injects DYN_NAMESPACE=<namespace>-<dgd name with dots as hyphens>, the component type, the parent DGD and downward-API pod identity', () => {
    const env = envOf(cliqueOf(dgd, 'frontend'));
    expect(env['DYN_NAMESPACE']).toEqual({ name: 'DYN_NAMESPACE', value: 'inference-qwen-small' });
    expect(env['DYN_COMPONENT']).toEqual({ name: 'DYN_COMPONENT', value: 'frontend' });
    expect(env['DYN_PARENT_DGD_K8S_NAME']).toEqual({ name: 'DYN_PARENT_DGD_K8S_NAME', value: 'qwen.small' });
    expect(env['DYN_PARENT_DGD_K8S_NAMESPACE']).toEqual({ name: 'DYN_PARENT_DGD_K8S_NAMESPACE', value: 'inference' });
    expect(['POD_NAME', 'POD_NAMESPACE', 'POD_UID'].map((n) => env[n]?.valueFrom)).toEqual([
      { fieldRef: { fieldPath: 'metadata.name' } },
      { fieldRef: { fieldPath: 'metadata.namespace' } },
      { fieldRef: { fieldPath: 'metadata.uid' } },
    ]);
  });

  it('gives the frontend its HTTP port 8000 and workers their system 9090 and nixl 19090 ports (upstream component_frontend.go, component_worker.go)', () => {
    const frontend = cliqueOf(dgd, 'frontend');
    const decode = cliqueOf(dgd, 'decode');
    expect(envOf(frontend)['DYN_HTTP_PORT']?.value).toBe('8000');
    expect(frontend.spec.podSpec.containers[0]?.ports).toEqual([{ name: 'http', containerPort: 8000, protocol: 'TCP' }]);
    expect(envOf(decode)['DYN_SYSTEM_PORT']?.value).toBe('9090');
    expect(decode.spec.podSpec.containers[0]?.ports).toEqual([
      { name: 'system', containerPort: 9090, protocol: 'TCP' },
      { name: 'nixl', containerPort: 19090, protocol: 'TCP' },
    ]);
  });

  it('applies graph env at low priority: the component pod template wins over spec.env, spec.env over nothing', () => {
    const env = envOf(cliqueOf(dgd, 'decode'));
    expect([env['LOG_LEVEL']?.value, env['HF_HOME']?.value]).toEqual(['debug', '/graph']);
  });

  it('carries the shared worker hash as label nvidia.com/dynamo-worker-hash and env DYN_NAMESPACE_WORKER_SUFFIX on workers only', () => {
    const hash = computeWorkerHash(dgd);
    const decode = cliqueOf(dgd, 'decode');
    expect(decode.labels['nvidia.com/dynamo-worker-hash']).toBe(hash);
    expect(envOf(decode)['DYN_NAMESPACE_WORKER_SUFFIX']?.value).toBe(hash);
    const frontend = cliqueOf(dgd, 'frontend');
    expect(frontend.labels['nvidia.com/dynamo-worker-hash']).toBeUndefined();
    expect(envOf(frontend)['DYN_NAMESPACE_WORKER_SUFFIX']).toBeUndefined();
  });

  it('sets the system labels after user labels, so they cannot be overridden, with the Kubernetes discovery labels (upstream generateLabels)', () => {
    expect(cliqueOf(dgd, 'decode').labels).toEqual({
      'nvidia.com/dynamo-component': 'decode',
      'nvidia.com/dynamo-component-type': 'decode',
      'nvidia.com/dynamo-discovery-backend': 'kubernetes',
      'nvidia.com/dynamo-discovery-enabled': 'true',
      'nvidia.com/dynamo-graph-deployment-name': 'qwen.small',
      'nvidia.com/dynamo-namespace': 'inference-qwen-small',
      'nvidia.com/dynamo-worker-hash': computeWorkerHash(dgd),
      'nvidia.com/metrics-enabled': 'true',
      'nvidia.com/selector': 'qwen.small-decode',
      team: 'inference',
      tier: 'gpu',
    });
  });
});

describe('renderDgd: component Services (upstream-notes/dgd.md §4.6)', () => {
  it('renders <dgd>-<component> Services selecting the component pods, http 8000 for the frontend and system 9090 otherwise', () => {
    const services = render(aDgd({ spec: { components: [aComponent('Frontend', 'frontend'), aComponent('worker', 'worker')] } })).objects.filter((o) => o.kind === 'Service');
    expect(services.map((s) => [s.metadata.name, s['spec']])).toEqual([
      [
        'my-graph-frontend',
        {
          selector: { 'nvidia.com/dynamo-component': 'Frontend', 'nvidia.com/dynamo-component-type': 'frontend', 'nvidia.com/dynamo-namespace': 'inference-my-graph' },
          ports: [{ name: 'http', port: 8000, targetPort: 'http', protocol: 'TCP' }],
        },
      ],
      [
        'my-graph-worker',
        {
          selector: { 'nvidia.com/dynamo-component': 'worker', 'nvidia.com/dynamo-component-type': 'worker', 'nvidia.com/dynamo-namespace': 'inference-my-graph' },
          ports: [{ name: 'system', port: 9090, targetPort: 9090, protocol: 'TCP' }],
        },
      ],
    ]);
  });
});

describe('renderDgd: determinism and failures', () => {
  it('gives byte-identical output for the same input', () => {
    const a = render(aDgd()).objects.map((o: RenderedObject) => stringify(o)).join('---\n');
    const b = render(aDgd()).objects.map((o: RenderedObject) => stringify(o)).join('---\n');
    expect(a).toBe(b);
  });

  it('refuses a DGD whose PCS + component names cannot fit Grove\'s 45-character budget even when shortened', () => {
    const longName = 'a'.repeat(40);
    const result = renderDgd(aDgd({ spec: { components: [aComponent(longName, 'worker', { multinode: { nodeCount: 2 } })] } }));
    expect(result).toEqual({
      ok: false,
      issues: [{ path: 'spec.components[0].name', type: 'Invalid', value: longName, detail: 'combined Grove resource name length 92 exceeds the 45-character limit; shorten the deployment or component name' }],
    });
  });

  it('refuses a DGD name that is not a DNS-1123 subdomain (a template with ${...} placeholders)', () => {
    const result = renderDgd(aDgd({ metadata: { name: '${K8S_NAMESPACE}-graph' } }));
    expect(result.ok ? [] : result.issues.map((i) => [i.path, i.type])).toEqual([['metadata.name', 'Invalid']]);
  });

  it('refuses a namespace that is not a DNS-1123 label', () => {
    const result = renderDgd(aDgd({ metadata: { namespace: 'Bad_NS' } }));
    expect(result.ok ? [] : result.issues.map((i) => [i.path, i.type, i.value])).toEqual([['metadata.namespace', 'Invalid', 'Bad_NS']]);
  });

  it('refuses a component without a main container image', () => {
    const result = renderDgd(aDgd({ spec: { components: [aComponent('worker', 'worker', { podTemplate: { spec: { containers: [{ name: 'sidecar', image: 'x' }] } } })] } }));
    expect(result).toEqual({ ok: false, issues: [{ path: 'spec.components[0].podTemplate.spec.containers', type: 'Required', detail: 'must contain a container named "main" with a non-empty image' }] });
  });
});

describe('renderDgd: a pure decision renders fresh objects (STYLE.md "Pure decisions": outputs are built fresh)', () => {
  /** Every object and array reachable from `value`. */
  function objectsIn(value: unknown, into = new Set<object>()): Set<object> {
    if (typeof value !== 'object' || value === null || into.has(value)) return into;
    into.add(value);
    for (const item of Object.values(value)) objectsIn(item, into);
    return into;
  }
  const probe = { httpGet: { path: '/healthz', port: 9090 }, periodSeconds: 7 };
  const rich = aDgd({
    spec: {
      env: [{ name: 'GRAPH_ENV', value: 'g' }, { name: 'SECRET_REF', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }],
      labels: { team: 'a' },
      annotations: { note: 'b' },
      components: [
        aComponent('frontend', 'frontend'),
        aComponent('worker', 'worker', {
          frontendSidecar: 'sidecar',
          podTemplate: {
            metadata: { labels: { extra: 'x' }, annotations: { why: 'y' } },
            spec: {
              nodeSelector: { pool: 'gpu' },
              tolerations: [{ key: 'gpu', operator: 'Exists' }],
              securityContext: { runAsUser: 1000 },
              volumes: [{ name: 'cache', emptyDir: {} }],
              containers: [
                { name: 'main', image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.6.1', args: ['--model', 'm'], env: [{ name: 'USER_ENV', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }], resources: { limits: { 'nvidia.com/gpu': '1' } }, livenessProbe: probe, volumeMounts: [{ name: 'cache', mountPath: '/cache' }] },
                { name: 'sidecar', image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.6.1', env: [{ name: 'SIDE', value: 's' }] },
              ],
            },
          },
        }),
        aComponent('decode', 'decode', { multinode: { nodeCount: 2 }, podTemplate: { spec: { containers: [{ name: 'main', image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.6.1', readinessProbe: probe }] } } }),
      ],
    },
  });

  it('shares no object or list with the input DGD, so changing one can never change the other', () => {
    const input = objectsIn(rich);
    const shared = [...objectsIn(render(rich).objects)].filter((object) => input.has(object));
    expect(shared).toEqual([]);
  });

  it('renders the same objects again after its previous output is changed in place', () => {
    const first = render(rich).objects;
    const before = JSON.stringify(first);
    for (const object of objectsIn(first)) if (!Array.isArray(object)) (object as Record<string, unknown>)['changed'] = true;
    expect(JSON.stringify(render(rich).objects)).toBe(before);
  });
});
