import { describe, expect, it } from 'vitest';
import { deepFreeze } from '../../../test/support/builders.js';
import { candidateName, decideCandidateContent, decideValid, type GeneratedDgd } from './candidate.js';

const RUN_UID = '7d1f0a52-0000-4000-8000-000000000001';
const reserved = { 'nvidia.com/dgdr-run-uid': RUN_UID, 'nvidia.com/dgdr-candidate-id': 'candidate-000001' };
const container = (image: string) => ({ name: 'main', image });
const generated: GeneratedDgd = {
  metadata: { labels: { app: 'qwen' }, annotations: { 'example.com/generated': 'yes' } },
  spec: {
    backendFramework: 'vllm',
    components: [
      { name: 'frontend', type: 'frontend', replicas: 1, podTemplate: { spec: { containers: [container('nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.6.1')] } } },
      { name: 'worker', type: 'worker', replicas: 1, podTemplate: { spec: { containers: [container('nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.6.1')] } } },
    ],
  },
};
const override = (extra: Record<string, unknown>) => ({ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', ...extra });
const unchanged = { labels: { app: 'qwen', ...reserved }, annotations: { 'example.com/generated': 'yes' }, spec: generated.spec };

describe('Candidate metadata rules (reference "v1beta2 DGD Overrides")', () => {
  const rows = [
    {
      name: 'no override: spec is exactly the DGD spec, DGD labels and annotations copied, reserved labels added',
      reason: '"Candidate.spec contains exactly the DGD spec ... DGD labels and annotations are copied to Candidate metadata"',
      override: undefined,
      want: { ...unchanged, override: { kind: 'Applied' } },
    },
    {
      name: 'an override that applies: merged spec, the override\'s labels kept',
      reason: '"components and named containers merge by name"; override metadata applies with the merge',
      override: override({ metadata: { labels: { workload: 'customized' } }, spec: { components: [{ name: 'worker', podTemplate: { spec: { containers: [container('registry.example/runtime:1.7.0')] } } }] } }),
      want: {
        labels: { app: 'qwen', workload: 'customized', ...reserved },
        annotations: { 'example.com/generated': 'yes' },
        spec: { ...generated.spec, components: [(generated.spec['components'] as unknown[])[0], { name: 'worker', type: 'worker', replicas: 1, podTemplate: { spec: { containers: [container('registry.example/runtime:1.7.0')] } } }] },
        override: { kind: 'Applied' },
      },
    },
    {
      name: 'reference "Unknown fields and incorrect field types remain visible on invalid Candidates": an unknown component field and a wrongly typed replicas merge and stay on the Candidate (the dry-run judges them)',
      reason: '"After a successful merge, a copy of the DGD undergoes strict server-side dry-run ... Unknown fields and incorrect field types remain visible on invalid Candidates; Valid=False records the failure"',
      override: override({ metadata: { labels: { workload: 'customized' } }, spec: { components: [{ name: 'worker', replicas: 'two', bogusField: { a: 1 } }] } }),
      want: {
        labels: { app: 'qwen', workload: 'customized', ...reserved },
        annotations: { 'example.com/generated': 'yes' },
        spec: { ...generated.spec, components: [(generated.spec['components'] as unknown[])[0], { name: 'worker', type: 'worker', replicas: 'two', bogusField: { a: 1 }, podTemplate: { spec: { containers: [container('nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.6.1')] } } }] },
        override: { kind: 'Applied' },
      },
    },
    {
      name: 'a target component absent from the generated DGD: unchanged spec, generated metadata only (the override\'s labels discarded)',
      reason: '"if a target component is absent ... the Candidate retains the unchanged generated DGD spec"; "If an override fails to apply, only the original generated labels and annotations are copied"',
      override: override({ metadata: { labels: { workload: 'customized' } }, spec: { components: [{ name: 'decode', replicas: 2 }] } }),
      want: { ...unchanged, override: { kind: 'TargetNotFound', message: 'override target component "decode" is not present in the generated DGD' } },
    },
    {
      name: 'an override of a reserved label fails atomically',
      reason: '"Labels nvidia.com/dgdr-run-uid and nvidia.com/dgdr-candidate-id ... attempts to override it fail atomically"',
      override: override({ metadata: { labels: { workload: 'customized', 'nvidia.com/dgdr-candidate-id': 'mine' } }, spec: { components: [{ name: 'worker', replicas: 2 }] } }),
      want: { ...unchanged, override: { kind: 'Failed', message: 'metadata.labels[nvidia.com/dgdr-candidate-id]: Forbidden: reserved metadata cannot be overridden' } },
    },
    {
      name: 'an override of a conversion-bookkeeping annotation fails atomically',
      reason: '"Annotations with the nvidia.com/dgd- conversion-bookkeeping prefix"',
      override: override({ metadata: { annotations: { 'nvidia.com/dgd-last-applied': 'x' } } }),
      want: { ...unchanged, override: { kind: 'Failed', message: 'metadata.annotations[nvidia.com/dgd-last-applied]: Forbidden: reserved metadata cannot be overridden' } },
    },
    {
      name: 'Candidate identity (name) cannot be overridden',
      reason: '"Candidate identity, including name, namespace, and owner references, cannot be overridden"',
      override: override({ metadata: { name: 'elsewhere' } }),
      want: { ...unchanged, override: { kind: 'Failed', message: 'metadata.name: Forbidden: reserved metadata cannot be overridden' } },
    },
    {
      name: 'an override that makes the complete metadata invalid (annotations over 256 KiB with the generated ones) is rejected in full',
      reason: '"An override that makes the complete Candidate metadata invalid is rejected in full. The total annotation-size limit includes generated annotations"',
      override: override({ metadata: { annotations: { 'example.com/big': 'x'.repeat(256 * 1024 - 'example.com/big'.length - 5) } }, spec: { components: [{ name: 'worker', replicas: 3 }] } }),
      want: { ...unchanged, override: { kind: 'Failed', message: 'metadata.annotations: Too long: may not be more than 262144 bytes' } },
    },
  ];
  it.each(rows)('$name', ({ override: input, want }) => {
    const got = decideCandidateContent(RUN_UID, 'candidate-000001', deepFreeze(generated), input === undefined ? undefined : deepFreeze(input));
    expect(got).toEqual(want);
    expect(decideCandidateContent(RUN_UID, 'candidate-000001', generated, input)).toEqual(got);
  });
});

describe('the Valid condition (reference "Candidate status")', () => {
  it.each([
    { name: 'override applied and strict dry-run accepted: True ValidationSucceeded', override: { kind: 'Applied' as const }, dryRun: { kind: 'Accepted' as const }, want: { status: 'True', reason: 'ValidationSucceeded', message: 'Strict DGD dry-run succeeded' } },
    { name: 'dry-run rejected: False ValidationFailed with the API server\'s message', override: { kind: 'Applied' as const }, dryRun: { kind: 'Rejected' as const, message: 'spec.components[0].replicas: Invalid value: "string"' }, want: { status: 'False', reason: 'ValidationFailed', message: 'spec.components[0].replicas: Invalid value: "string"' } },
    { name: 'target missing: False OverrideTargetNotFound, no dry-run needed', override: { kind: 'TargetNotFound' as const, message: 'm' }, dryRun: undefined, want: { status: 'False', reason: 'OverrideTargetNotFound', message: 'm' } },
    { name: 'override failed: False OverrideFailed', override: { kind: 'Failed' as const, message: 'm' }, dryRun: undefined, want: { status: 'False', reason: 'OverrideFailed', message: 'm' } },
    { name: 'override applied, dry-run not yet answered: no verdict (a missing condition is not success)', override: { kind: 'Applied' as const }, dryRun: undefined, want: undefined },
  ])('$name', ({ override, dryRun, want }) => {
    expect(decideValid(override, dryRun)).toEqual(want);
  });

  it('names a Candidate <run>-<candidateId>, hash-truncated to 253 characters', () => {
    expect(candidateName('qwen3-trace-replay-1', 'candidate-000001')).toBe('qwen3-trace-replay-1-candidate-000001');
    const long = candidateName('r'.repeat(250), 'candidate-000001');
    expect(long).toHaveLength(253);
    expect(long).toBe(candidateName('r'.repeat(250), 'candidate-000001'));
  });
});
