/**
 * The Grove worker-hash suffix rule, as upstream decides it: `shouldRenderGroveWorkerHashSuffix`
 * (deploy/operator/internal/controller/dgd_grove_workload_renderer.go), its table test
 * `TestGroveWorkerHashSuffixMigration` and the envtest `TestGroveWorkerHashSuffixForExistingDGD`
 * (a legacy PodCliqueSet stays unsuffixed through the first pass and a frontend-only change, the
 * DGD records the worker hash, and the next worker change starts the suffix migration).
 */
import { describe, expect, it } from 'vitest';
import { aComponent, aDgd, deepFreeze } from '../../../test/support/builders.js';
import { decideDgd, type DgdObserved } from './reconcile-dgd.js';
import { DEFAULT_RENDER_CONFIG, renderDgd, type RenderedObject } from './render.js';
import { computeWorkerHash } from './worker-hash.js';
import { isWorkerGenerationChanged, podCliqueSetUsesWorkerHashSuffix, shouldRenderWorkerHashSuffix } from './worker-hash-suffix.js';

const NOW = new Date('2026-12-02T05:00:00Z');
const HASH_LABEL = 'nvidia.com/dynamo-worker-hash';
const SUFFIX_ENV = 'DYN_NAMESPACE_WORKER_SUFFIX';

const graph = (annotations?: Record<string, string>, workerEnv = '4096') =>
  aDgd({
    metadata: { generation: 2, ...(annotations === undefined ? {} : { annotations }) },
    spec: {
      components: [
        aComponent('frontend', 'frontend'),
        aComponent('prefill', 'prefill', { podTemplate: { spec: { containers: [{ name: 'main', image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0', env: [{ name: 'MODEL_MAX_LEN', value: workerEnv }] }] } } }),
        aComponent('decode', 'decode'),
      ],
    },
  });

type Clique = { name: string; labels: Record<string, string>; spec: { podSpec: { containers: { name: string; env?: { name: string; value?: string }[] }[] } } };

/** The PodCliqueSet as an upstream operator from before rolling updates wrote it: the rendered one without the worker hash label and env on any clique, with upstream's spec-hash annotations. */
function legacyPcs(dgd: ReturnType<typeof graph>): Record<string, unknown> {
  const rendered = renderDgd(dgd);
  if (!rendered.ok) throw new Error('fixture does not render');
  const pcs = structuredClone(rendered.objects.find((o) => o.kind === 'PodCliqueSet')) as RenderedObject & { spec: { template: { cliques: Clique[] } } };
  for (const clique of pcs.spec.template.cliques) {
    delete clique.labels[HASH_LABEL];
    for (const container of clique.spec.podSpec.containers) if (container.env !== undefined) container.env = container.env.filter((e) => e.name !== SUFFIX_ENV);
  }
  return { ...pcs, metadata: { ...pcs.metadata, generation: 1, annotations: { 'nvidia.com/last-applied-hash': 'opaque', 'nvidia.com/last-applied-generation': '1' } }, status: { observedGeneration: 1 } };
}

function observed(parent: unknown, pcs: Record<string, unknown> | undefined): DgdObserved {
  const cliques = ['frontend', 'prefill', 'decode'].map((name) => ({
    apiVersion: 'grove.io/v1alpha1',
    kind: 'PodClique',
    metadata: { name: `my-graph-0-${name}`, generation: 1 },
    spec: { roleName: name, replicas: 1, podSpec: {} },
    status: { observedGeneration: 1, replicas: 1, updatedReplicas: 1, readyReplicas: 1 },
  }));
  return deepFreeze({
    parent: parent as Record<string, unknown>,
    children: {
      PodCliqueSet: new Map(pcs === undefined ? [] : [['my-graph', pcs]]),
      Service: new Map(),
      PodClique: new Map(cliques.map((c) => [c.metadata.name, c])),
      PodCliqueScalingGroup: new Map(),
    },
    podCliqueSetWritten: false,
  } as unknown as DgdObserved);
}

const appliedCliques = (desired: ReturnType<typeof decideDgd>): Clique[] =>
  (desired.apply.find((o) => o.kind === 'PodCliqueSet') as unknown as { spec: { template: { cliques: Clique[] } } }).spec.template.cliques;
const workerCliques = (cliques: readonly Clique[]) => cliques.filter((c) => c.name !== 'frontend');

describe('shouldRenderWorkerHashSuffix (upstream shouldRenderGroveWorkerHashSuffix, TestGroveWorkerHashSuffixMigration)', () => {
  const dgd = graph();
  const stamped = (hash: string) => ({ spec: { template: { cliques: [{ labels: { 'nvidia.com/dynamo-component': 'prefill', [HASH_LABEL]: hash } }, { labels: { 'nvidia.com/dynamo-component': 'decode', [HASH_LABEL]: hash } }] } } });
  const unstamped = { spec: { template: { cliques: [{ labels: { 'nvidia.com/dynamo-component': 'prefill' } }, { labels: { 'nvidia.com/dynamo-component': 'decode' } }] } } };
  const rows = [
    { name: 'new PCS renders a suffix without a worker generation change', existing: undefined, changed: false, want: true },
    { name: 'legacy PCS with no generation change remains unsuffixed', existing: unstamped, changed: false, want: false },
    { name: 'legacy PCS renders a suffix after a worker generation change', existing: unstamped, changed: true, want: true },
    { name: 'suffixed PCS continues rendering the suffix', existing: stamped('active'), changed: false, want: true },
    { name: 'a PCS with one worker clique unstamped counts as legacy', existing: { spec: { template: { cliques: [{ labels: { 'nvidia.com/dynamo-component': 'prefill', [HASH_LABEL]: 'active' } }, { labels: { 'nvidia.com/dynamo-component': 'decode' } }] } } }, changed: false, want: false },
  ];
  it.each(rows)('$name', ({ existing, changed, want }) => {
    expect(shouldRenderWorkerHashSuffix(dgd, existing, changed)).toBe(want);
  });

  it('a DGD without worker-class components never renders a suffix (upstream dgdHasWorkerComponents)', () => {
    expect(shouldRenderWorkerHashSuffix(aDgd({ spec: { components: [aComponent('frontend', 'frontend')] } }), undefined, true)).toBe(false);
  });

  it('podCliqueSetUsesWorkerHashSuffix finds each worker clique by its nvidia.com/dynamo-component label', () => {
    expect(podCliqueSetUsesWorkerHashSuffix(dgd, stamped('abcd1234'))).toBe(true);
    expect(podCliqueSetUsesWorkerHashSuffix(dgd, unstamped)).toBe(false);
    expect(podCliqueSetUsesWorkerHashSuffix(dgd, { spec: { template: { cliques: [] } } })).toBe(false);
  });
});

describe('isWorkerGenerationChanged (upstream planUnsupportedWorkerHashTransition)', () => {
  const hash = computeWorkerHash(graph());
  const rows: { name: string; annotations: Record<string, string> | undefined; want: boolean }[] = [
    { name: 'no recorded worker hash: initialized, not changed', annotations: undefined, want: false },
    { name: 'v2 recorded and equal to the desired hash: not changed', annotations: { 'nvidia.com/current-worker-hash-v2': hash }, want: false },
    { name: 'v2 recorded and different: changed', annotations: { 'nvidia.com/current-worker-hash-v2': 'deadbeef' }, want: true },
    { name: 'only the legacy sentinel v1: changed (its workers must be replaced)', annotations: { 'nvidia.com/current-worker-hash': 'legacy' }, want: true },
    { name: 'only an opaque v1: v2 is recorded beside it without rolling, not changed', annotations: { 'nvidia.com/current-worker-hash': 'abc12345' }, want: false },
  ];
  it.each(rows)('$name', ({ annotations, want }) => {
    expect(isWorkerGenerationChanged(graph(annotations), hash)).toBe(want);
  });
});

describe('decideDgd over a PodCliqueSet an older upstream operator wrote (upstream TestGroveWorkerHashSuffixForExistingDGD)', () => {
  it('"legacy PCS with no generation change remains unsuffixed": the first pass applies the worker cliques exactly as stored (no nvidia.com/dynamo-worker-hash label, no DYN_NAMESPACE_WORKER_SUFFIX), records the worker hash on the DGD, and reports the workers\' bare Dynamo namespace', () => {
    const dgd = graph();
    const pcs = legacyPcs(dgd);
    const desired = decideDgd(observed(dgd, pcs), DEFAULT_RENDER_CONFIG, NOW);
    const stored = (pcs as unknown as { spec: { template: { cliques: Clique[] } } }).spec.template.cliques;
    expect(workerCliques(appliedCliques(desired))).toEqual(workerCliques(stored));
    expect(desired.parentAnnotations).toEqual({ 'nvidia.com/current-worker-hash-v2': computeWorkerHash(dgd) });
    expect(desired.status.components?.['prefill']?.['runtimeNamespace']).toBe('inference-my-graph');
    expect(desired.status.components?.['decode']?.['runtimeNamespace']).toBe('inference-my-graph');
  });

  it('a frontend-only change keeps the legacy worker cliques unsuffixed (the recorded worker hash still matches)', () => {
    const first = graph();
    const recorded = { 'nvidia.com/current-worker-hash-v2': computeWorkerHash(first) };
    const dgd = aDgd({ metadata: { generation: 3, annotations: recorded }, spec: { components: [aComponent('frontend', 'frontend', { podTemplate: { spec: { containers: [{ name: 'main', image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0', env: [{ name: 'FRONTEND_CONFIG_REVISION', value: '2' }] }] } } }), ...graph().spec.components.slice(1)] } });
    const pcs = legacyPcs(first);
    const desired = decideDgd(observed(dgd, pcs), DEFAULT_RENDER_CONFIG, NOW);
    expect(workerCliques(appliedCliques(desired))).toEqual(workerCliques((pcs as unknown as { spec: { template: { cliques: Clique[] } } }).spec.template.cliques));
    expect(desired.parentAnnotations).toBeUndefined();
  });

  it('"legacy PCS renders a suffix after a worker generation change": a worker change after the hash was recorded puts the new hash on every worker clique (label and env), so the workers roll as upstream rolls them', () => {
    const first = graph();
    const changed = graph({ 'nvidia.com/current-worker-hash-v2': computeWorkerHash(first) }, '8192');
    const wantHash = computeWorkerHash(changed);
    expect(wantHash).not.toBe(computeWorkerHash(first));
    const desired = decideDgd(observed(changed, legacyPcs(first)), DEFAULT_RENDER_CONFIG, NOW);
    for (const clique of workerCliques(appliedCliques(desired))) {
      expect(clique.labels[HASH_LABEL]).toBe(wantHash);
      const main = clique.spec.podSpec.containers.find((c) => c.name === 'main');
      expect(main?.env?.find((e) => e.name === SUFFIX_ENV)?.value).toBe(wantHash);
    }
    expect(appliedCliques(desired).find((c) => c.name === 'frontend')?.labels[HASH_LABEL]).toBeUndefined();
  });

  it('a DGD with no PodCliqueSet yet renders the suffix on its first pass ("new PCS renders a suffix")', () => {
    const dgd = graph();
    const desired = decideDgd(observed(dgd, undefined), DEFAULT_RENDER_CONFIG, NOW);
    for (const clique of workerCliques(appliedCliques(desired))) expect(clique.labels[HASH_LABEL]).toBe(computeWorkerHash(dgd));
  });
});
