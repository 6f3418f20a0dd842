/**
 * DGDR v1beta2 <-> v1beta1 <-> v1alpha1 through the read-only conversion views: every corpus
 * request (v1alpha1, v1beta1) reads through v1beta2 as `spec.v1beta1` and converts back to what
 * was written; native v1beta2 requests (the reference's examples) read through v1beta1 and
 * v1alpha1 as `spec.v1beta2` and back; mixed representations are refused.
 * Source: reference "Conversion views"; upstream api/v1beta2/dynamographdeploymentrequest_conversion_test.go
 * (TestV1Beta1RoundTripUsesEnvelope, TestV1Beta2RoundTripUsesEnvelope, TestConversionRejectsMixedRepresentations).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { sharedDir } from '../../test/support/paths.js';
import { convertDgdr } from './dgdr-v1alpha1.js';

type Obj = Record<string, unknown>;

const CORPUS = resolve(sharedDir, 'corpus', 'dgdr');
const CORPUS_REQUESTS = readdirSync(CORPUS)
  .filter((file) => /^v1(alpha|beta)1-/.test(file) && !file.includes('MALFORMED'))
  .sort()
  .map((file) => ({ file, object: parse(readFileSync(resolve(CORPUS, file), 'utf8')) as Obj }));

const V1BETA2 = 'nvidia.com/v1beta2';
const V1BETA1 = 'nvidia.com/v1beta1';
const V1ALPHA1 = 'nvidia.com/v1alpha1';

function converted(object: Obj, to: string): Obj {
  const result = convertDgdr(object, to);
  if (!result.ok) throw new Error(result.message);
  return result.object;
}

/** The native v1beta2 requests of the reference ("v1beta2 hardware SKU", "v1beta2 DGD Overrides", "Replay a recorded trace"), with a status as the Run controller writes one. */
const NATIVE_V1BETA2: readonly { name: string; object: Obj }[] = [
  {
    name: 'future-accelerator (explicit hardware, unknown SKU)',
    object: { apiVersion: V1BETA2, kind: 'DynamoGraphDeploymentRequest', metadata: { name: 'future-accelerator', namespace: 'default', labels: { owner: 'test' } }, spec: { model: { name: 'Qwen/Qwen3-0.6B' }, hardware: { gpu: { sku: 'future_accelerator', budget: 8, numGpusPerNode: 8 } } } },
  },
  {
    name: 'hardware: {} with the AISimulate input overrides',
    object: { apiVersion: V1BETA2, kind: 'DynamoGraphDeploymentRequest', metadata: { name: 'opt-out' }, spec: { model: { name: 'Qwen/Qwen3-0.6B' }, hardware: {}, aisim: { inputOverrides: { engine: { hardware: 'h200_sxm' }, optimization: { constraints: { max_candidate_gpus: 8 } } } } } },
  },
  {
    name: 'custom-worker-image (DGD override)',
    object: {
      apiVersion: V1BETA2,
      kind: 'DynamoGraphDeploymentRequest',
      metadata: { name: 'custom-worker-image' },
      spec: { model: { name: 'Qwen/Qwen3-0.6B' }, backends: ['vllm'], overrides: { dgd: { apiVersion: V1BETA1, kind: 'DynamoGraphDeployment', metadata: { labels: { workload: 'customized' } }, spec: { components: [{ name: 'worker', podTemplate: { spec: { containers: [{ name: 'main', image: 'registry.example/runtime:1.7.0' }] } } }] } } } },
    },
  },
  {
    name: 'qwen3-trace-replay (trace workload, with status)',
    object: {
      apiVersion: V1BETA2,
      kind: 'DynamoGraphDeploymentRequest',
      metadata: { name: 'qwen3-trace-replay', namespace: 'inference', generation: 3 },
      spec: { model: { name: 'Qwen/Qwen3-0.6B' }, workload: { trace: { format: 'Dynamo', source: { persistentVolumeClaim: { claimName: 'request-traces', subPath: 'windows/a.jsonl.gz' } }, replay: { arrivalSpeedupRatio: 2 } } } },
      status: { observedGeneration: 3, activeRunRef: { name: 'qwen3-trace-replay-3' } },
    },
  },
];

describe('a native v1beta1 or v1alpha1 request read through v1beta2', () => {
  it('finds the corpus requests', () => {
    expect(CORPUS_REQUESTS.length).toBe(9);
  });

  it.each(CORPUS_REQUESTS)('reference "represents a native v1beta1 request through v1beta2 by populating spec.v1beta1": $file', ({ object }) => {
    const hub = converted(object, V1BETA1);
    const view = converted(object, V1BETA2);
    expect(view).toEqual({ ...hub, apiVersion: V1BETA2, spec: { v1beta1: hub['spec'] }, ...(hub['status'] === undefined ? {} : { status: { v1beta1: hub['status'] } }) });
  });

  it.each(CORPUS_REQUESTS)('reference "an unchanged conversion view can be written back without changing the stored request": $file back to its own version as directly', ({ object }) => {
    const view = converted(object, V1BETA2);
    const hub = converted(object, V1BETA1);
    expect(converted(view, V1BETA1)).toEqual(hub);
    // The same object as the direct v1beta1 -> own-version conversion (./dgdr-v1alpha1.test.ts
    // states what that one keeps), so the view adds and loses nothing.
    expect(converted(view, String(object['apiVersion']))).toEqual(converted(hub, String(object['apiVersion'])));
    if (object['apiVersion'] === V1BETA1) expect(converted(view, V1BETA1)).toEqual(object);
  });
});

describe('a native v1beta2 request read through v1beta1 and v1alpha1', () => {
  it.each(NATIVE_V1BETA2)('reference "represents a native v1beta2 request through v1alpha1 or v1beta1 by populating spec.v1beta2": $name', ({ object }) => {
    const { spec, status, ...rest } = object;
    const want = { ...rest, spec: { v1beta2: spec }, ...(status === undefined ? {} : { status: { v1beta2: status } }) };
    expect(converted(object, V1BETA1)).toEqual({ ...want, apiVersion: V1BETA1 });
    expect(converted(object, V1ALPHA1)).toEqual({ ...want, apiVersion: V1ALPHA1 });
  });

  it.each(NATIVE_V1BETA2)('reference "an unchanged conversion view can be written back without changing the stored request": $name through v1beta1 and v1alpha1 and back', ({ object }) => {
    const beta = converted(object, V1BETA1);
    const alpha = converted(object, V1ALPHA1);
    expect(converted(beta, V1BETA2)).toEqual(object);
    expect(converted(alpha, V1BETA2)).toEqual(object);
    expect(converted(alpha, V1BETA1)).toEqual(beta);
    expect(converted(beta, V1ALPHA1)).toEqual(alpha);
  });
});

describe('mixed representations are refused (upstream TestConversionRejectsMixedRepresentations)', () => {
  const rows = [
    {
      name: 'a v1beta2 spec with native fields and the spec.v1beta1 view',
      object: { apiVersion: V1BETA2, kind: 'DynamoGraphDeploymentRequest', metadata: { name: 'r' }, spec: { model: { name: 'm' }, v1beta1: { model: 'legacy' } } },
      to: V1BETA1,
      want: 'spec.v1beta1: Forbidden: the read-only conversion view may not be set together with native fields (model)',
    },
    {
      name: 'a v1beta2 status with native fields and the status.v1beta1 view',
      object: { apiVersion: V1BETA2, kind: 'DynamoGraphDeploymentRequest', metadata: { name: 'r' }, spec: { v1beta1: { model: 'legacy' } }, status: { observedGeneration: 1, v1beta1: {} } },
      to: V1BETA1,
      want: 'status.v1beta1: Forbidden: the read-only conversion view may not be set together with native fields (observedGeneration)',
    },
    {
      name: 'a v1beta1 spec with native fields and the spec.v1beta2 view',
      object: { apiVersion: V1BETA1, kind: 'DynamoGraphDeploymentRequest', metadata: { name: 'r' }, spec: { model: 'legacy', v1beta2: { model: { name: 'm' } } } },
      to: V1BETA2,
      want: 'spec.v1beta2: Forbidden: the read-only conversion view may not be set together with native fields (model)',
    },
    {
      name: 'a v1beta1 spec with native fields and the spec.v1beta2 view, to v1alpha1',
      object: { apiVersion: V1BETA1, kind: 'DynamoGraphDeploymentRequest', metadata: { name: 'r' }, spec: { model: 'legacy', v1beta2: { model: { name: 'm' } } } },
      to: V1ALPHA1,
      want: 'spec.v1beta2: Forbidden: the read-only conversion view may not be set together with native fields (model)',
    },
    {
      name: 'a view that is not an object',
      object: { apiVersion: V1BETA1, kind: 'DynamoGraphDeploymentRequest', metadata: { name: 'r' }, spec: { v1beta2: 'x' } },
      to: V1BETA2,
      want: 'spec.v1beta2: Invalid value: the conversion view must be an object',
    },
  ];
  it.each(rows)('$name', ({ object, to, want }) => {
    expect(convertDgdr(object, to)).toEqual({ ok: false, message: want });
  });

  it('does not alias the source (upstream "conversion aliased source metadata")', () => {
    const source = structuredClone(NATIVE_V1BETA2[0]?.object ?? {});
    const beta = converted(source, V1BETA1);
    ((beta['metadata'] as Obj)['labels'] as Obj)['owner'] = 'changed';
    ((beta['spec'] as Obj)['v1beta2'] as Obj)['model'] = 'changed';
    expect(source).toEqual(NATIVE_V1BETA2[0]?.object);
  });
});
