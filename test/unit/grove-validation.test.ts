/**
 * Every PodCliqueSet we render passes Grove's own admission (issue 20 item 3). Grove's webhooks
 * do not run here, so test/support/grove-validation.ts transcribes them (defaulting first, then
 * validation; sources in its header), and fast-check generates admissible DGDs (defaulted and
 * validated by our admission, rendered through parseDgd) with 0 replicas, multinode, forced
 * scaling groups, inter-pod GMS, both minimum forms, rollout budgets, every strategy
 * annotation, including Coherent, and `WaitForCheckpoint` checkpoints (waiting or ready).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseDgd } from '../../shared/api/index.js';
import { defaultDgd, validateDgd } from '../../shared/domain/admission/index.js';
import { keepSeededReplicas, readPodCliqueSet } from '../../shared/domain/dgd/grove-scaling.js';
import { renderDgd, type RenderedObject } from '../../shared/domain/index.js';
import { groveCreateIssues, groveDefault, groveUpdateIssues } from '../support/grove-validation.js';

type Json = Record<string, unknown>;

const NAMES = ['frontend', 'planner', 'worker', 'prefill', 'decode', 'agg'] as const;
const TYPES = ['frontend', 'planner', 'worker', 'prefill', 'decode', undefined] as const;

interface ComponentCase {
  readonly name: string;
  readonly type: (typeof TYPES)[number];
  readonly replicas: number | undefined;
  readonly shape: 'single' | 'multinode' | 'forced' | 'interPodGms';
  readonly nodeCount: number;
  readonly minimum: number | undefined;
  readonly budget: number | undefined;
  readonly gpus: number;
}

/** `experimental.checkpoint` {enabled, startupPolicy: WaitForCheckpoint}: absent, waiting (no ready status) or ready (status.checkpoints says so). */
type CheckpointCase = 'none' | 'waiting' | 'ready';
/**
 * One per component position, generated after everything else (the last key of the DGD case),
 * so the cases without a checkpoint are the ones the seeds gave before it was added.
 */
const checkpointCases = fc.array(fc.constantFrom<CheckpointCase>('none', 'none', 'waiting', 'ready'), { minLength: 4, maxLength: 4 });

const componentCase = (name: string): fc.Arbitrary<ComponentCase> =>
  fc.record({
    name: fc.constant(name),
    type: fc.constantFrom(...TYPES),
    replicas: fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined }),
    shape: fc.constantFrom('single', 'single', 'multinode', 'forced', 'interPodGms'),
    nodeCount: fc.integer({ min: 2, max: 4 }),
    minimum: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
    budget: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
    gpus: fc.integer({ min: 0, max: 2 }),
  });

const dgdCase = fc.record({
  name: fc.constantFrom('g', 'my-graph', 'a-fairly-long-graph-name'),
  backendFramework: fc.constantFrom('vllm', 'sglang', 'trtllm'),
  strategy: fc.constantFrom(undefined, 'RollingRecreate', 'OnDelete', 'Coherent'),
  // One minimum form per DGD: admission refuses mixing them ("cannot mix provider-native minAvailable with deprecated").
  minimumForm: fc.constantFrom('deprecated' as const, 'native' as const),
  components: fc.uniqueArray(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 4 }).chain((names) => fc.tuple(...names.map(componentCase))),
  checkpoints: checkpointCases,
});
type DgdCase = Omit<typeof dgdCase extends fc.Arbitrary<infer T> ? T : never, 'name'> & { readonly name: string };

/**
 * A hostile widening: graph names with dots, at and past the lengths Grove's 45-character pod-name
 * budget allows, generated DNS subdomains; component names upstream samples use (`VllmDecodeWorker`,
 * `Frontend`) and a long one. Admission must refuse what Grove would (names too long), and every
 * render it admits must pass.
 */
const WIDE_NAMES = [...NAMES, 'Frontend', 'VllmDecodeWorker', 'a-very-long-component-name-x'] as const;
const wideDgdCase = fc.record({
  name: fc.oneof(
    fc.constantFrom('my.graph', 'llama-3.1-8b', 'a-graph-name-that-is-exactly-forty-chars', 'a'.repeat(45)),
    fc.stringMatching(/^[a-z]([a-z0-9.-]{0,50}[a-z0-9])?$/).filter((n) => !/\.\.|\.-|-\./.test(n)),
  ),
  backendFramework: fc.constantFrom('vllm', 'sglang', 'trtllm'),
  strategy: fc.constantFrom(undefined, 'RollingRecreate', 'OnDelete', 'Coherent'),
  minimumForm: fc.constantFrom('deprecated' as const, 'native' as const),
  components: fc.uniqueArray(fc.constantFrom(...WIDE_NAMES), { minLength: 1, maxLength: 4, comparator: (a, b) => a.toLowerCase() === b.toLowerCase() }).chain((names) => fc.tuple(...names.map(componentCase))),
  checkpoints: checkpointCases,
});

/** The checkpoint of the component at `index`: "checkpoint functionality is supported only for worker, prefill, and decode components" (admission). */
function checkpointOf(d: DgdCase, index: number): CheckpointCase {
  const c = d.components[index];
  return c !== undefined && ['worker', 'prefill', 'decode'].includes(c.type ?? '') ? (d.checkpoints[index] ?? 'none') : 'none';
}

/** The shape admission allows: "multinode is supported only for worker, prefill, or decode" components (else a forced scaling group). */
function shapeOf(c: ComponentCase): ComponentCase['shape'] {
  return c.shape === 'multinode' && !['worker', 'prefill', 'decode'].includes(c.type ?? '') ? 'forced' : c.shape;
}

function componentObject(c: ComponentCase, d: DgdCase, checkpoint: CheckpointCase): Json {
  const shape = shapeOf(c);
  const resources = c.gpus > 0 ? { limits: { 'nvidia.com/gpu': String(c.gpus) } } : undefined;
  const component: Json = {
    name: c.name,
    ...(c.type === undefined ? {} : { type: c.type }),
    ...(c.replicas === undefined ? {} : { replicas: c.replicas }),
    podTemplate: { spec: { containers: [{ name: 'main', image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0', ...(resources === undefined ? {} : { resources }) }] } },
  };
  if (shape === 'multinode') component['multinode'] = { nodeCount: c.nodeCount };
  if (shape === 'forced') component['experimental'] = { grove: { forceScalingGroup: true } };
  if (shape === 'interPodGms') component['experimental'] = { gpuMemoryService: { mode: 'InterPod' } };
  if (checkpoint !== 'none') component['experimental'] = { ...((component['experimental'] as Json | undefined) ?? {}), checkpoint: { enabled: true, startupPolicy: 'WaitForCheckpoint' } };
  const value: Json = {};
  if (c.minimum !== undefined && d.minimumForm === 'deprecated') component['minAvailable'] = c.minimum;
  if (c.minimum !== undefined && d.minimumForm === 'native') {
    if (shape !== 'single') value['minAvailable'] = c.minimum;
    else value['spec'] = { minAvailable: c.minimum };
  }
  // "rollingUpdate must not be set when the update strategy is OnDelete" (admission).
  if (c.budget !== undefined && d.strategy !== 'OnDelete') value['rollingUpdate'] = { maxUnavailable: c.budget };
  if (Object.keys(value).length > 0) component['providerOverride'] = { apiVersion: 'grove.io/v1alpha1', value };
  return component;
}

function dgdObject(d: DgdCase, replicasOf: (c: ComponentCase) => number | undefined = (c) => c.replicas): Json {
  // As a checkpoint controller would write it (none runs here): ready for the 'ready' cases.
  const ready = d.components.filter((_, i) => checkpointOf(d, i) === 'ready');
  const checkpoints = ready.length === 0 ? undefined : Object.fromEntries(ready.map((c) => [c.name, { ready: true }]));
  return {
    apiVersion: 'nvidia.com/v1beta1',
    kind: 'DynamoGraphDeployment',
    metadata: { name: d.name, namespace: 'inference', uid: '0b6c1e5e-1111-2222-3333-444455556666', ...(d.strategy === undefined ? {} : { annotations: { 'nvidia.com/grove-update-strategy': d.strategy } }) },
    spec: { backendFramework: d.backendFramework, components: d.components.map((c, i) => componentObject({ ...c, replicas: replicasOf(c) }, d, checkpointOf(d, i))) },
    ...(checkpoints === undefined ? {} : { status: { checkpoints } }),
  };
}

/** A gated component: a WaitForCheckpoint checkpoint that status.checkpoints does not say is ready. */
const isGated = (d: DgdCase, index: number): boolean => checkpointOf(d, index) === 'waiting';

/** The PodCliqueSet admission and render give for a DGD object, or why there is none. */
function admittedPcs(object: Json, stored?: Json): { pcs: RenderedObject } | { refused: string } {
  const defaulted = defaultDgd(structuredClone(object));
  const admission = validateDgd(defaulted, stored === undefined ? undefined : defaultDgd(structuredClone(stored)), { lpxEnabled: false });
  if (admission.issues.length > 0) return { refused: 'admission' };
  const parsed = parseDgd(defaulted);
  if (!parsed.ok) throw new Error(`admitted DGD does not parse: ${JSON.stringify(parsed.issues)}`);
  const rendered = renderDgd(parsed.dgd);
  if (!rendered.ok) throw new Error(`admitted DGD does not render: ${JSON.stringify(rendered.issues)}`);
  const pcs = rendered.objects.find((o) => o.kind === 'PodCliqueSet');
  if (pcs === undefined) throw new Error('no PodCliqueSet rendered');
  return { pcs };
}

const SEED = 20_2003;

describe('every rendered PodCliqueSet passes Grove validation (grove.md §A.5-§A.6; Grove pcs/validation/podcliqueset.go)', () => {
  it('on create: 2000 generated DGDs (about half admissible; the rest admission refuses), including 0 replicas, multinode, scaling groups, inter-pod GMS, Coherent and WaitForCheckpoint gates', () => {
    let admitted = 0;
    let atZero = 0;
    let gatedSingle = 0;
    let gatedGroup = 0;
    fc.assert(
      fc.property(dgdCase, (d) => {
        const result = admittedPcs(dgdObject(d));
        if ('refused' in result) return;
        admitted += 1;
        if (d.components.some((c) => c.replicas === 0)) atZero += 1;
        if (d.components.some((c, i) => isGated(d, i) && shapeOf(c) === 'single')) gatedSingle += 1;
        if (d.components.some((c, i) => isGated(d, i) && shapeOf(c) !== 'single')) gatedGroup += 1;
        expect(groveCreateIssues(result.pcs)).toEqual([]);
      }),
      { seed: SEED, numRuns: 2000 },
    );
    // The generator must produce many DGDs admission accepts (seeded: 1037 of 2000), with
    // scale-to-zero and checkpoint-gated single-node and scaling-group components among them
    // (seeded: 402, 113 and 153).
    expect(admitted).toBeGreaterThan(900);
    expect(atZero).toBeGreaterThan(400);
    expect(gatedSingle).toBeGreaterThan(100);
    expect(gatedGroup).toBeGreaterThan(100);
  }, 60_000); // about 11 s alone on the loaded 2-core machine; the margin is for a neighbour's apiserver start

  it('hostile names: 2000 generated DGDs with dotted, long and generated graph names and upstream-style component names pass Grove validation (the ResourceClaim names Grove generates included) whenever admission admits them', () => {
    let admitted = 0;
    fc.assert(
      fc.property(wideDgdCase, (d) => {
        const result = admittedPcs(dgdObject(d));
        if ('refused' in result) return;
        admitted += 1;
        expect(groveCreateIssues(result.pcs)).toEqual([]);
      }),
      { seed: SEED + 2, numRuns: 2000 },
    );
    expect(admitted).toBeGreaterThan(500);
  }, 60_000);

  it('on update: a replica change (to and from 0), and a waiting checkpoint becoming ready, re-rendered over the stored PodCliqueSet passes validation and the immutability rules ("Template replicas only seed a PCLQ or PCSG at creation")', () => {
    let checked = 0;
    fc.assert(
      fc.property(dgdCase, fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 4, maxLength: 4 }), fc.boolean(), (d, next, release) => {
        const before = dgdObject(d);
        const first = admittedPcs(before);
        if ('refused' in first) return;
        // release: status.checkpoints now says ready for every waiting checkpoint (the gate opens).
        const later = release ? { ...d, checkpoints: d.checkpoints.map((c) => (c === 'waiting' ? ('ready' as const) : c)) } : d;
        const after = dgdObject(later, (c) => next[d.components.indexOf(c)]);
        const second = admittedPcs(after, before);
        if ('refused' in second) return;
        checked += 1;
        const stored = groveDefault(first.pcs);
        const observed = readPodCliqueSet({ ...stored, metadata: { ...(stored['metadata'] as Json), generation: 1 } });
        expect(observed).toBeDefined();
        const applied = keepSeededReplicas(second.pcs, observed);
        expect(groveCreateIssues(applied)).toEqual([]);
        expect(groveUpdateIssues(applied, stored)).toEqual([]);
      }),
      { seed: SEED + 1, numRuns: 600 },
    );
    expect(checked).toBeGreaterThan(200);
  }, 60_000);
});

describe('a WaitForCheckpoint gate renders what Grove accepts (issue 20: the gated child seeds its minimum; the scale subresource holds it at 0, grove-scaling.test.ts)', () => {
  // Upstream renders the gated scaling group at 0 (shouldGateGroveScalingGroupReplicas), which
  // Grove refuses ("replicas must be > 0"); here it seeds its minimum and the scale subresource
  // holds the child at 0 (upstream: "nil replicas are skipped, unless checkpoint-gated (then 0)",
  // upstream-notes/dgd.md §4.7).
  const gatedPcs = (component: Json): RenderedObject => {
    const object = {
      apiVersion: 'nvidia.com/v1beta1',
      kind: 'DynamoGraphDeployment',
      metadata: { name: 'g', namespace: 'inference' },
      spec: { components: [{ podTemplate: { spec: { containers: [{ name: 'main', image: 'i' }] } }, experimental: { checkpoint: { enabled: true, startupPolicy: 'WaitForCheckpoint' } }, ...component }] },
    };
    const parsed = parseDgd(object);
    if (!parsed.ok) throw new Error('does not parse');
    const rendered = renderDgd(parsed.dgd);
    const pcs = rendered.ok ? rendered.objects.find((o) => o.kind === 'PodCliqueSet') : undefined;
    expect(pcs).toBeDefined();
    return pcs as RenderedObject;
  };

  it('a gated multinode component passes Grove validation', () => {
    expect(groveCreateIssues(gatedPcs({ name: 'decode', type: 'decode', replicas: 2, multinode: { nodeCount: 2 } }))).toEqual([]);
  });

  it('a gated multinode component with minAvailable 2 passes Grove validation ("0 < minAvailable ≤ replicas")', () => {
    expect(groveCreateIssues(gatedPcs({ name: 'decode', type: 'decode', replicas: 3, minAvailable: 2, multinode: { nodeCount: 2 } }))).toEqual([]);
  });

  it('a gated single-node component with minAvailable 2 passes Grove validation (Grove would default a clique at 0 to 1, below its minimum)', () => {
    expect(groveCreateIssues(gatedPcs({ name: 'worker', type: 'worker', replicas: 3, minAvailable: 2 }))).toEqual([]);
  });
});

describe('the checker refuses what Grove refuses (so a pass means something)', () => {
  const base = (): Json => ({
    apiVersion: 'grove.io/v1alpha1',
    kind: 'PodCliqueSet',
    metadata: { name: 'g', namespace: 'inference' },
    spec: {
      replicas: 1,
      template: {
        terminationDelay: '15m',
        cliques: [
          { name: 'frontend', spec: { roleName: 'frontend', replicas: 1, minAvailable: 1, podSpec: { containers: [{ name: 'main' }] } } },
          { name: 'decode', spec: { roleName: 'decode', replicas: 1, minAvailable: 1, podSpec: { containers: [{ name: 'main' }] } } },
        ],
        podCliqueScalingGroups: [{ name: 'decode', cliqueNames: ['decode'], replicas: 1, minAvailable: 1 }],
      },
    },
  });
  const template = (pcs: Json) => (pcs['spec'] as Json)['template'] as { cliques: { spec: Json }[]; podCliqueScalingGroups: Json[] };

  it('accepts the base object', () => {
    expect(groveCreateIssues(base())).toEqual([]);
  });

  it.each([
    { name: 'scaling group "replicas must be > 0"', edit: (p: Json) => void (template(p).podCliqueScalingGroups[0]!['replicas'] = 0), path: 'spec.template.podCliqueScalingGroups[0].replicas' },
    { name: 'scaling group "minAvailable ≤ replicas"', edit: (p: Json) => void (template(p).podCliqueScalingGroups[0]!['minAvailable'] = 2), path: 'spec.template.podCliqueScalingGroups[0].minAvailable' },
    { name: 'clique "0 < minAvailable ≤ replicas" after defaulting replicas 0 -> 1', edit: (p: Json) => void Object.assign(template(p).cliques[0]!.spec, { replicas: 0, minAvailable: 2 }), path: 'spec.template.cliques[0].spec.minAvailable' },
    { name: 'clique minAvailable copied from the original replicas 0', edit: (p: Json) => void Object.assign(template(p).cliques[0]!.spec, { replicas: 0, minAvailable: undefined }), path: 'spec.template.cliques[0].spec.minAvailable' },
    { name: 'terminationDelay must be > 0', edit: (p: Json) => void (((p['spec'] as Json)['template'] as Json)['terminationDelay'] = '0s'), path: 'spec.template.terminationDelay' },
    { name: 'a clique in two scaling groups', edit: (p: Json) => void template(p).podCliqueScalingGroups.push({ name: 'other', cliqueNames: ['decode'] }), path: 'spec.template.podCliqueScalingGroups.cliqueNames' },
    { name: 'one scheduler for every pod', edit: (p: Json) => void (template(p).cliques[0]!.spec['podSpec'] = { schedulerName: 'kai-scheduler' }), path: 'spec.template.cliques.spec.podSpec.schedulerName' },
    {
      name: 'a generated ResourceClaim name must be a DNS label (generatednames.go: `<pcs>-<i>-<group>-<max index>-<name>` over 63 characters)',
      edit: (p: Json) => {
        const t = (p['spec'] as Json)['template'] as Json;
        t['resourceClaimTemplates'] = [{ name: 'r'.repeat(60), templateSpec: { spec: { devices: { requests: [{ name: 'gpu' }] } } } }];
        template(p).podCliqueScalingGroups[0]!['resourceSharing'] = [{ name: 'r'.repeat(60), scope: 'PerReplica', filter: { childCliqueNames: ['decode'] } }];
      },
      path: 'spec.template.podCliqueScalingGroups[0].resourceSharing[0].name',
    },
    { name: 'combined name length ≤ 45', edit: (p: Json) => void ((p['metadata'] as Json)['name'] = 'x'.repeat(40)), path: 'spec.template.cliques[0].name' },
  ])('refuses $name', ({ edit, path }) => {
    const pcs = base();
    edit(pcs);
    expect(groveCreateIssues(pcs).map((i) => i.path)).toContain(path);
  });

  it('applies Grove defaulting first: a standalone clique at 0 replicas with minAvailable 1 is admitted (replicas default 0 -> 1)', () => {
    const pcs = base();
    Object.assign(template(pcs).cliques[0]!.spec, { replicas: 0, minAvailable: 1 });
    expect(groveCreateIssues(pcs)).toEqual([]);
  });

  it('refuses an update that changes a scaling group minAvailable ("per PCSG: cliqueNames, minAvailable ... are fixed")', () => {
    const next = base();
    template(next).podCliqueScalingGroups[0]!['minAvailable'] = 2;
    template(next).podCliqueScalingGroups[0]!['replicas'] = 2;
    expect(groveUpdateIssues(next, base()).map((i) => i.path)).toEqual(['spec.template.podCliqueScalingGroups.minAvailable']);
  });
});
