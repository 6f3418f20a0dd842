/**
 * The controller-owned annotations on their own: what an UPDATE may not remove or add, and the
 * CREATE stamp's copy-on-write. Rows run through the whole chain are in test/unit/admission.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { stampDgdCreateAnnotations, validateDgd } from './index.js';

const ORIGIN = 'nvidia.com/dynamo-operator-origin-version';
const PROVIDER = 'nvidia.com/workload-provider';
const RECONCILE_SA = 'system:serviceaccount:dynamo-system:dynamo-reconcile';

function aStoredDgd(annotations: Record<string, string> | undefined): Record<string, unknown> {
  return {
    apiVersion: 'nvidia.com/v1beta1',
    kind: 'DynamoGraphDeployment',
    metadata: { name: 'g', namespace: 'ns', ...(annotations === undefined ? {} : { annotations }) },
    spec: { backendFramework: 'vllm', components: [{ name: 'worker', type: 'worker', replicas: 1, podTemplate: { spec: { containers: [{ name: 'main', image: 'runtime:1.6.1' }] } } }] },
  };
}

describe('origin version and workload provider on UPDATE (upstream-notes/dgd.md §3.5 "Metadata"; upstream validateObjectMetaUpdate)', () => {
  const config = { lpxEnabled: false, replicasModifiers: [RECONCILE_SA] };

  type Row = { name: string; old: Record<string, string> | undefined; now: Record<string, string> | undefined; want: string[] };
  it.each<Row>([
    { name: 'removing the origin version: "immutable, including its presence"', old: { [ORIGIN]: '1.6.1' }, now: undefined, want: [`metadata.annotations[${ORIGIN}]: Invalid: null: field is immutable`] },
    { name: 'adding an origin version to a legacy DGD: "immutable, including its presence"', old: undefined, now: { [ORIGIN]: '1.6.1' }, want: [`metadata.annotations[${ORIGIN}]: Invalid: "1.6.1": field is immutable`] },
    { name: 'removing the workload provider: "Once materialized, the workload provider cannot be replaced or removed"', old: { [PROVIDER]: 'grove' }, now: undefined, want: [`metadata.annotations[${PROVIDER}]: Invalid: null: field is immutable`] },
    { name: 'a user materializing the provider on a legacy DGD: "Reserve the initial legacy-provider materialization for the configured operator identity"', old: undefined, now: { [PROVIDER]: 'grove' }, want: [`metadata.annotations[${PROVIDER}]: Forbidden: may only be materialized by the Dynamo operator`] },
    { name: 'keeping both as they are', old: { [ORIGIN]: '1.6.1', [PROVIDER]: 'grove' }, now: { [ORIGIN]: '1.6.1', [PROVIDER]: 'grove' }, want: [] },
  ])('$name', ({ old, now, want }) => {
    const result = validateDgd(aStoredDgd(now), aStoredDgd(old), config, { username: 'alice' });
    expect(result.issues.map((i) => `${i.path}: ${i.type}: ${i.value === undefined ? '' : `${JSON.stringify(i.value)}: `}${i.detail}`.replace(': : ', ': '))).toEqual(want);
  });

  it('the operator principal (the reconcile function\'s service account) may materialize the provider on a legacy DGD', () => {
    expect(validateDgd(aStoredDgd({ [PROVIDER]: 'grove' }), aStoredDgd(undefined), config, { username: RECONCILE_SA }).issues).toEqual([]);
  });
});

describe('stampDgdCreateAnnotations (upstream DGDDefaulter.Default, CREATE)', () => {
  it('stamps the configured operator version when absent, keeps an existing one word for word, and never touches its input', () => {
    const bare = Object.freeze(aStoredDgd(undefined));
    const stamped = stampDgdCreateAnnotations(bare, '1.7.0') as { metadata: { annotations: Record<string, string> } };
    expect(stamped.metadata.annotations).toEqual({ [ORIGIN]: '1.7.0', [PROVIDER]: 'grove' });
    expect(bare).toEqual(aStoredDgd(undefined));
    const earlier = stampDgdCreateAnnotations(aStoredDgd({ [ORIGIN]: '0.9.0', [PROVIDER]: 'grove' }), '1.7.0');
    expect(earlier).toEqual(aStoredDgd({ [ORIGIN]: '0.9.0', [PROVIDER]: 'grove' }));
  });

  it('selects the component provider under nvidia.com/enable-grove: "False" (case-insensitive), as upstream\'s routing intent does', () => {
    const stamped = stampDgdCreateAnnotations(aStoredDgd({ 'nvidia.com/enable-grove': 'False' }), '1.6.1') as { metadata: { annotations: Record<string, string> } };
    expect(stamped.metadata.annotations[PROVIDER]).toBe('component');
  });
});
