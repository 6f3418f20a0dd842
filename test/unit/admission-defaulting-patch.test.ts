/**
 * The mutating webhook's patch for a v1beta1 DGD is recorded as each default is set
 * (`defaultingPatch`, shared/domain/admission/defaulting.ts) instead of diffing a defaulted copy.
 * The proof that the rules and values are unchanged: on every corpus DGD, the bench DGD and
 * generated shapes (every default present or missing, odd metadata, any key order), it gives
 * exactly the operations, in the same order, that `jsonpatch.compare` gives for `defaultDgd`
 * (and `stampDgdCreateAnnotations` on CREATE), and it leaves its input untouched.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import fc from 'fast-check';
import jsonpatch from 'fast-json-patch';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { ComponentSchema } from '../../shared/api/index.js';
import { defaultDgd, defaultingPatch, stampDgdCreateAnnotations, typedComponent } from '../../shared/domain/index.js';
import { twelveComponentDgd } from '../../bench/admission.js';
import { sharedDir } from '../support/paths.js';

type Obj = Record<string, unknown>;
const PROVIDER = 'nvidia.com/workload-provider';
const ORIGIN = 'nvidia.com/dynamo-operator-origin-version';
const VERSION = '1.6.1';

function diffed(object: unknown, stampVersion: string | undefined): unknown {
  const defaulted = defaultDgd(object);
  return jsonpatch.compare(object as object, stampVersion === undefined ? (defaulted as object) : (stampDgdCreateAnnotations(defaulted, stampVersion) as object));
}

function assertAgrees(object: unknown): void {
  for (const stampVersion of [VERSION, undefined]) {
    const before = JSON.stringify(object);
    const recorded = defaultingPatch(object, stampVersion);
    expect(JSON.stringify(object)).toBe(before);
    expect(recorded).toEqual(diffed(object, stampVersion));
  }
}

/** Every corpus DGD as users write it (v1beta1 and v1alpha1), plain JSON. */
function corpus(): { name: string; object: Obj }[] {
  const dir = resolve(sharedDir, 'corpus', 'dgd');
  const out: { name: string; object: Obj }[] = [];
  for (const file of readdirSync(dir).sort()) {
    parseAllDocuments(readFileSync(resolve(dir, file), 'utf8')).forEach((document, index) => {
      const object = document.toJS() as Obj | null;
      if (object?.['kind'] === 'DynamoGraphDeployment') out.push({ name: `${file}#${index}`, object: JSON.parse(JSON.stringify(object)) as Obj });
    });
  }
  return out;
}

const override = (target?: string): Obj => ({ apiVersion: 'grove.io/v1alpha1', value: { spec: { minAvailable: 1 } }, ...(target === undefined ? {} : { target }) });

const componentArb: fc.Arbitrary<unknown> = fc.oneof(
  fc.record(
    {
      name: fc.constantFrom('frontend', 'decode', 'prefill-0', 'lpx', 'Bad_Name'),
      type: fc.constantFrom('frontend', 'decode', 'prefill', 'worker', 'lpx', 'planner', 'nonsense'),
      replicas: fc.constantFrom(0, 1, 3, null),
      providerOverride: fc.oneof(fc.constant(override()), fc.constant(override('')), fc.constant(override('PodCliqueTemplateSpec')), fc.constant(null), fc.constant('x')),
      multinode: fc.constantFrom({ nodeCount: 2 }, {}, { nodeCount: 'two' }),
      roles: fc.array(fc.oneof(fc.constant({ name: 'agent', providerOverride: override() }), fc.constant({ name: 'c', providerOverride: override('') }), fc.constant({ name: 'd' }), fc.constant('role')), { maxLength: 3 }),
      podTemplate: fc.constant({ spec: { containers: [{ name: 'main', image: 'a:1' }] } }),
    },
    { requiredKeys: ['name'] },
  ),
  fc.constantFrom(null, 'component', 7),
);

const metadataArb: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(undefined, null, 'm', [], {}, { name: 'g' }, { name: 'g', annotations: null }, { annotations: [] }, { annotations: 'a' }),
  fc.record(
    {
      name: fc.constant('g'),
      annotations: fc.record(
        {
          [PROVIDER]: fc.constantFrom('grove', 'component', ''),
          [ORIGIN]: fc.constantFrom('1.0.0', 'x'),
          'nvidia.com/enable-grove': fc.constantFrom('false', 'False', 'true'),
          other: fc.constant('o'),
        },
        { requiredKeys: [] },
      ),
    },
    { requiredKeys: [] },
  ),
);

/** The object's keys in a shuffled order (fast-json-patch's operation order follows key order). */
function reordered(object: Obj, order: readonly number[]): Obj {
  const keys = Object.keys(object);
  const sorted = keys.map((key, i) => ({ key, rank: order[i % Math.max(1, order.length)] ?? i })).sort((a, b) => a.rank - b.rank);
  return Object.fromEntries(sorted.map(({ key }) => [key, object[key]]));
}

describe('defaultingPatch records exactly the operations the diff of the defaulted copy gives', () => {
  it('on every corpus DGD as users write it (v1alpha1 ones are left to the diff: undefined), and on the bench DGD', () => {
    const all = corpus();
    expect(all.length).toBeGreaterThan(30);
    for (const { name, object } of [...all, { name: 'bench', object: twelveComponentDgd() }]) {
      if (object['apiVersion'] !== 'nvidia.com/v1beta1') {
        expect(defaultingPatch(object, VERSION), name).toBeUndefined();
        continue;
      }
      assertAgrees(object);
      // The same DGD with every default already set: no operation at all on UPDATE.
      expect(defaultingPatch(stampDgdCreateAnnotations(defaultDgd(object), VERSION), undefined), name).toEqual([]);
    }
  });

  it('property: on generated shapes (each default present, empty or missing; metadata and annotations of any kind; any key order)', () => {
    fc.assert(
      fc.property(
        fc.array(componentArb, { maxLength: 5 }),
        metadataArb,
        fc.oneof(fc.constant(undefined), fc.constant(override()), fc.constant(override('')), fc.constant(override('PodCliqueSet'))),
        fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 1, maxLength: 6 }),
        fc.constantFrom('array', 'missing', 'object'),
        (components, metadata, rootOverride, order, componentsForm) => {
          const spec: Obj = { backendFramework: 'vllm', ...(rootOverride === undefined ? {} : { providerOverride: rootOverride }) };
          if (componentsForm === 'array') spec['components'] = components;
          if (componentsForm === 'object') spec['components'] = { a: components[0] ?? null };
          const object: Obj = { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', ...(metadata === undefined ? {} : { metadata }), spec: reordered(spec, order) };
          assertAgrees(reordered(object, [...order].reverse()));
        },
      ),
      { numRuns: 400 },
    );
  });

  it('a spec that is not an object is left alone, and the CREATE stamp still applies', () => {
    for (const spec of [null, 'spec', [], undefined]) assertAgrees({ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', metadata: { name: 'g' }, ...(spec === undefined ? {} : { spec }) });
  });

  it('a JSON "__proto__" key anywhere is a field like any other', () => {
    const object = JSON.parse(`{"apiVersion":"nvidia.com/v1beta1","kind":"DynamoGraphDeployment","__proto__":{"x":1},"metadata":{"annotations":{"__proto__":"p"}},"spec":{"components":[{"name":"w","type":"worker","__proto__":{"replicas":2},"providerOverride":{"apiVersion":"grove.io/v1alpha1","__proto__":{"target":"t"}}}]}}`) as Obj;
    assertAgrees(object);
  });
});

describe('the component shape that picks a providerOverride target ("Omit target; admission resolves it from the component shape")', () => {
  const ShapeSchema = ComponentSchema.pick({ name: true, type: true, multinode: true, experimental: true });
  const zodShape = (shape: unknown): unknown => {
    const parsed = ShapeSchema.safeParse(shape);
    return parsed.success ? parsed.data : undefined;
  };

  it('property: read off the plain object, it is what the schema parse of the same fields gives, and undefined exactly where that parse fails', () => {
    fc.assert(
      fc.property(
        fc.record(
          {
            name: fc.constantFrom('decode', 'prefill-0', 'A1', 'a', '-a', 'a-', 'Bad_Name', '', 'x'.repeat(63), 'x'.repeat(64), 7, null),
            type: fc.constantFrom('frontend', 'worker', 'prefill', 'decode', 'planner', 'epp', 'lpx', 'nonsense', '', null, 1),
            multinode: fc.constantFrom({ nodeCount: 2 }, { nodeCount: 8 }, {}, { nodeCount: 1 }, { nodeCount: 2.5 }, { nodeCount: '2' }, { nodeCount: null }, { nodeCount: 2_147_483_647 }, { nodeCount: 2_147_483_648 }, { nodeCount: 3, extra: true }, null, [], 'm'),
            experimental: fc.constantFrom({}, { grove: { forceScalingGroup: true } }, { gpuMemoryService: { enabled: true } }, null, 'e'),
            replicas: fc.constantFrom(1, 'x'),
          },
          { requiredKeys: [] },
        ),
        (shape) => {
          expect(typedComponent(shape)).toEqual(zodShape(shape));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('on every component of the corpus and the bench DGD', () => {
    for (const { object } of [...corpus(), { object: twelveComponentDgd() }]) {
      const components = (object['spec'] as Obj | undefined)?.['components'];
      if (!Array.isArray(components)) continue;
      for (const component of components) expect(typedComponent(component)).toEqual(zodShape(component));
    }
  });
});
