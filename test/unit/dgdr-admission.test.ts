/**
 * The DGDR admission table: one row per default and rule, each run through the chain the API
 * server runs (our DGDR CRD schema, the mutating webhook, the schema again, the validating webhook;
 * see ./dgdr-admission-chain.ts), asserting allowed or denied, every issue
 * (`<path>: <type>: [<value>: ]<detail>`), every warning and, for defaulting rows, the admitted spec.
 *
 * Row names quote ../shared/reference/dgdr-reference.txt; `reason` gives the section or the upstream
 * rule (../shared/upstream-notes/dgdr.md) a value comes from.
 */
import { describe, expect, it } from 'vitest';
import { aDgdr, aStoredDgdr, admitDgdrThroughChain, type Obj } from './dgdr-admission-chain.js';

interface Row {
  readonly name: string;
  readonly reason: string;
  readonly input: { readonly object: Obj; readonly old?: Obj; readonly config?: { operatorVersion: string; defaultImage?: string } };
  readonly want: { readonly allowed: boolean; readonly issues?: readonly string[]; readonly warnings?: readonly string[]; readonly stage?: 'schema'; readonly spec?: Obj };
}

const PLANNER_161 = 'nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.6.1';
const DEFAULTED = { image: PLANNER_161, backend: 'auto', searchStrategy: 'rapid', autoApply: true, workload: { isl: 4000, osl: 1000 }, sla: { ttft: 2000, itl: 30 } };
const RUNTIME_REQUIRED = 'spec.runtimeVersionOverride: Required value: is required when spec.image has no parseable semantic-version tag';
const immutable = (phase: string): string => `spec: Forbidden: updates are forbidden while the resource is in phase "${phase}"; delete and recreate the resource to change its spec`;

const DEFAULT_ROWS: Row[] = [
  {
    name: 'defaults: image from the operator version, backend "auto", searchStrategy "rapid", autoApply true, isl 4000, osl 1000, ttft 2000, itl 30',
    reason: 'dgdr-reference "Spec reference" and "Profiler image version compatibility" (nvcr.io/nvidia/ai-dynamo/dynamo-planner:<operatorVersion>)',
    input: { object: aDgdr() },
    want: { allowed: true, spec: { model: 'Qwen/Qwen3-0.6B', ...DEFAULTED } },
  },
  {
    name: '"the tag is the canonical semver of the operator version (v1.2.0 -> 1.2.0)"',
    reason: 'upstream-notes/dgdr.md §2.1 "Default image"',
    input: { object: aDgdr(), config: { operatorVersion: 'v1.2.0' } },
    want: { allowed: true, spec: { model: 'Qwen/Qwen3-0.6B', ...DEFAULTED, image: 'nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.2.0' } },
  },
  {
    name: 'an explicit default image (Helm value for rc/nightly charts) wins over the operator version',
    reason: 'upstream-notes/dgdr.md §2.1 "An explicit DefaultImage wins"',
    input: { object: aDgdr(), config: { operatorVersion: '1.6.1', defaultImage: 'nvcr.io/nvidia/ai-dynamo/dynamo-planner-nightly:1.7.0-rc1' } },
    want: { allowed: true, spec: { model: 'Qwen/Qwen3-0.6B', ...DEFAULTED, image: 'nvcr.io/nvidia/ai-dynamo/dynamo-planner-nightly:1.7.0-rc1' } },
  },
  {
    name: '"If the version does not parse, no default is applied"',
    reason: 'upstream-notes/dgdr.md §2.1',
    input: { object: aDgdr(), config: { operatorVersion: 'unknown' } },
    want: { allowed: true, spec: { model: 'Qwen/Qwen3-0.6B', backend: 'auto', searchStrategy: 'rapid', autoApply: true, workload: { isl: 4000, osl: 1000 }, sla: { ttft: 2000, itl: 30 } } },
  },
  {
    name: 'explicit values are kept: backend, searchStrategy, autoApply false, isl/osl, ttft/itl',
    reason: 'dgdr-reference "Spec reference" (defaults apply only to omitted fields)',
    input: { object: aDgdr({ image: 'nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.5.0', backend: 'sglang', searchStrategy: 'thorough', autoApply: false, workload: { isl: 3000, osl: 500 }, sla: { ttft: 200, itl: 20, optimizationType: 'latency' } }) },
    want: { allowed: true, spec: { model: 'Qwen/Qwen3-0.6B', image: 'nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.5.0', backend: 'sglang', searchStrategy: 'thorough', autoApply: false, workload: { isl: 3000, osl: 500 }, sla: { ttft: 200, itl: 20, optimizationType: 'latency' } } },
  },
  {
    name: '"e2eLatency ... An alternative to specifying ttft + itl; cannot be combined with them": no ttft/itl default when e2eLatency is set',
    reason: 'dgdr-reference "sla"',
    input: { object: aDgdr({ sla: { e2eLatency: 5000 } }) },
    want: { allowed: true, spec: { model: 'Qwen/Qwen3-0.6B', ...DEFAULTED, sla: { e2eLatency: 5000 } } },
  },
  {
    name: '"pvcMountPath ... Defaults to /opt/model-cache" when modelCache is set',
    reason: 'dgdr-reference "modelCache"',
    input: { object: aDgdr({ modelCache: { pvcName: 'model-cache', pvcModelPath: 'deepseek-r1' } }) },
    want: { allowed: true, spec: { model: 'Qwen/Qwen3-0.6B', ...DEFAULTED, modelCache: { pvcName: 'model-cache', pvcModelPath: 'deepseek-r1', pvcMountPath: '/opt/model-cache' } } },
  },
  {
    name: '"the operator defaults it on creation": an UPDATE does not add spec.image',
    reason: 'dgdr-reference "Profiler image version compatibility"; upstream-notes/dgdr.md §2.1 (CREATE only)',
    input: { object: aDgdr({ backend: 'auto', searchStrategy: 'rapid', autoApply: true, workload: { isl: 4000, osl: 1000 }, sla: { ttft: 2000, itl: 30 } }), old: aStoredDgdr('Pending') },
    want: { allowed: true, spec: { model: 'Qwen/Qwen3-0.6B', backend: 'auto', searchStrategy: 'rapid', autoApply: true, workload: { isl: 4000, osl: 1000 }, sla: { ttft: 2000, itl: 30 } } },
  },
];

const RULE_ROWS: Row[] = [
  { name: '"model ... Must be non-empty": an empty model is refused by the schema', reason: 'dgdr-reference "model"; upstream MinLength=1', input: { object: aDgdr({ model: '' }) }, want: { allowed: false, stage: 'schema', issues: ['/spec/model: must NOT have fewer than 1 characters'] } },
  { name: '"Must be non-empty": a whitespace-only model is refused', reason: 'dgdr-reference "model"', input: { object: aDgdr({ model: '   ' }) }, want: { allowed: false, issues: ['spec.model: Required value: must be non-empty'] } },
  // The schema requires model by a CEL rule (so the read-only spec.v1beta2 conversion view, which
  // has no model, can be stored, reference "Conversion views"); this chain does not run CEL, so the
  // validating webhook is what refuses it here. test/integration/dgdr-v1beta2-api.test.ts sees the
  // real API server refuse it first.
  { name: '"Only model is unconditionally required by the schema"', reason: 'dgdr-reference "Spec reference"', input: { object: { ...aDgdr(), spec: {} } }, want: { allowed: false, issues: ['spec.model: Required value: must be specified'] } },
  {
    name: '"Admission rejects a new DGDR whose supplied spec.image has no parseable semantic-version tag unless spec.runtimeVersionOverride is set": latest',
    reason: 'dgdr-reference "Spec reference"; upstream-notes/dgdr.md §4.3 (message)',
    input: { object: aDgdr({ image: 'nvcr.io/nvidia/ai-dynamo/dynamo-planner:latest' }) },
    want: { allowed: false, issues: [RUNTIME_REQUIRED] },
  },
  { name: '"... or a digest-only reference" needs runtimeVersionOverride', reason: 'dgdr-reference "runtimeVersionOverride"', input: { object: aDgdr({ image: 'nvcr.io/nvidia/ai-dynamo/dynamo-planner@sha256:0123456789abcdef' }) }, want: { allowed: false, issues: [RUNTIME_REQUIRED] } },
  { name: 'a registry port is not a tag: localhost:5000/dynamo-planner needs runtimeVersionOverride', reason: 'upstream-notes/dgdr.md §4.3 ("the tag is the text after the last : that comes after the last /")', input: { object: aDgdr({ image: 'localhost:5000/dynamo-planner' }) }, want: { allowed: false, issues: [RUNTIME_REQUIRED] } },
  { name: '"a custom build tag" with runtimeVersionOverride "1.4.0" is admitted', reason: 'dgdr-reference "runtimeVersionOverride"', input: { object: aDgdr({ image: 'registry.example/planner:my-build', runtimeVersionOverride: '1.4.0' }) }, want: { allowed: true } },
  { name: 'a v-prefixed semantic-version tag parses (v1.4.0)', reason: 'upstream-notes/dgdr.md §4.3 ("optional leading v/V")', input: { object: aDgdr({ image: 'registry.example/planner:v1.4.0' }) }, want: { allowed: true } },
  { name: 'a pre-release tag parses (1.7.0-rc1+build.5)', reason: 'upstream-notes/dgdr.md §4.3 (full SemVer 2.0)', input: { object: aDgdr({ image: 'registry.example/planner:1.7.0-rc1+build.5' }) }, want: { allowed: true } },
  ...['v1.4.0', '01.4.0', '1.4.0-rc1', '1.4.0+build', '10000.0.0', '1.4'].map(
    (value): Row => ({
      name: `"Use canonical MAJOR.MINOR.PATCH ... no leading zeros, v prefix, prerelease suffix, or build metadata": runtimeVersionOverride ${JSON.stringify(value)} is refused`,
      reason: 'dgdr-reference "runtimeVersionOverride"; upstream CRD pattern',
      input: { object: aDgdr({ runtimeVersionOverride: value }) },
      want: { allowed: false, stage: 'schema', issues: [`/spec/runtimeVersionOverride: must match pattern "^(0|[1-9][0-9]{0,3})\\.(0|[1-9][0-9]{0,3})\\.(0|[1-9][0-9]{0,3})$"`] },
    }),
  ),
  { name: '"each part between 0 and 9999": 9999.0.0 is admitted', reason: 'dgdr-reference "runtimeVersionOverride"', input: { object: aDgdr({ runtimeVersionOverride: '9999.0.0' }) }, want: { allowed: true } },
  {
    name: '"concurrency ... Mutually exclusive with requestRate"',
    reason: 'dgdr-reference "workload"',
    input: { object: aDgdr({ workload: { concurrency: 8, requestRate: 2 } }) },
    want: { allowed: false, issues: ['spec.workload.requestRate: Forbidden: may not be set together with spec.workload.concurrency: they are mutually exclusive'] },
  },
  { name: 'concurrency alone is admitted', reason: 'dgdr-reference "workload"', input: { object: aDgdr({ workload: { concurrency: 8 } }) }, want: { allowed: true } },
  { name: 'requestRate alone is admitted', reason: 'dgdr-reference "workload"', input: { object: aDgdr({ workload: { requestRate: 2.5 } }) }, want: { allowed: true } },
  {
    name: '"e2eLatency ... cannot be combined with them" (ttft)',
    reason: 'dgdr-reference "sla"',
    input: { object: aDgdr({ sla: { e2eLatency: 5000, ttft: 200 } }) },
    want: { allowed: false, issues: ['spec.sla.e2eLatency: Forbidden: cannot be combined with spec.sla.ttft or spec.sla.itl: set either e2eLatency or ttft and itl'] },
  },
  {
    name: '"e2eLatency ... cannot be combined with them" (itl)',
    reason: 'dgdr-reference "sla"',
    input: { object: aDgdr({ sla: { e2eLatency: 5000, itl: 20 } }) },
    want: { allowed: false, issues: ['spec.sla.e2eLatency: Forbidden: cannot be combined with spec.sla.ttft or spec.sla.itl: set either e2eLatency or ttft and itl'] },
  },
  {
    name: '"hardware.gpuSku uses lowercase underscore format (h100_sxm, not H100-SXM5-80GB)"',
    reason: 'dgdr-reference "SKU format" (the enum)',
    input: { object: aDgdr({ hardware: { gpuSku: 'H100-SXM5-80GB' } }) },
    want: { allowed: false, stage: 'schema', issues: ['/spec/hardware/gpuSku: must be equal to one of the allowed values'] },
  },
  ...['vr_nvl72', 'gb200', 'b300_sxm', 'h200_sxm', 'mi300'].map((sku): Row => ({ name: `"Allowed values": gpuSku ${sku} is admitted without a warning`, reason: 'dgdr-reference "SKU format"', input: { object: aDgdr({ hardware: { gpuSku: sku } }) }, want: { allowed: true, warnings: [] } })),
  {
    name: '"gb200_sxm is deprecated ... Existing manifests remain admitted ... but admission emits a warning"',
    reason: 'dgdr-reference "SKU format"',
    input: { object: aDgdr({ hardware: { gpuSku: 'gb200_sxm' } }) },
    want: { allowed: true, warnings: ['spec.hardware.gpuSku: "gb200_sxm" is deprecated because GB200 systems use NVL rather than SXM; use gpuSku: gb200'] },
  },
  ...['h100_pcie', 'a100_pcie', 'v100_pcie'].map(
    (sku): Row => ({
      name: `"The CRD admits PCIe SKUs ... the operator accepts it but profiler-assisted sizing falls back to defaults": ${sku}`,
      reason: 'dgdr-reference "SKU format"',
      input: { object: aDgdr({ hardware: { gpuSku: sku } }) },
      want: { allowed: true, warnings: [`spec.hardware.gpuSku: the profiler ships no training data for PCIe SKU "${sku}"; profiler-assisted sizing falls back to defaults`] },
    }),
  ),
  {
    name: 'searchStrategy "thorough" with backend "auto" is refused',
    reason: 'upstream-notes/dgdr.md §1.2 step 1 (a), §1.4 (message word for word)',
    input: { object: aDgdr({ searchStrategy: 'thorough' }) },
    want: { allowed: false, issues: ['spec.searchStrategy: Invalid value: "thorough": is incompatible with spec.backend "auto": set spec.backend to a specific backend (sglang, trtllm, or vllm)'] },
  },
  { name: 'searchStrategy "thorough" with backend "vllm" is admitted', reason: 'upstream-notes/dgdr.md §1.2', input: { object: aDgdr({ searchStrategy: 'thorough', backend: 'vllm' }) }, want: { allowed: true } },
  { name: 'backend outside "auto vllm sglang trtllm" is refused', reason: 'dgdr-reference "backend"', input: { object: aDgdr({ backend: 'tensorrt' }) }, want: { allowed: false, stage: 'schema', issues: ['/spec/backend: must be equal to one of the allowed values'] } },
  {
    name: '"Use nvidia.com/v1beta1 for new overrides; nvidia.com/v1alpha1 remains supported": another apiVersion is refused',
    reason: 'dgdr-reference "Overrides" (dgd); upstream-notes/dgdr.md §4.4 "Accepted inputs"',
    input: { object: aDgdr({ overrides: { dgd: { apiVersion: 'apps/v1', kind: 'DynamoGraphDeployment', spec: {} } } }) },
    want: { allowed: false, issues: ['spec.overrides.dgd.apiVersion: Unsupported value: "apps/v1": supported values: "nvidia.com/v1beta1", "nvidia.com/v1alpha1"'] },
  },
  {
    name: '"status ... not supported" in a DGD override',
    reason: 'dgdr-reference "Generated DGD overrides"; upstream-notes/dgdr.md §4.4 ("override status is not supported")',
    input: { object: aDgdr({ overrides: { dgd: { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', status: { state: 'successful' } } } }) },
    want: { allowed: false, issues: ['spec.overrides.dgd.status: Forbidden: override status is not supported'] },
  },
  {
    name: 'a v1beta1 and a v1alpha1 DGD override are admitted',
    reason: 'dgdr-reference "Overrides" (dgd)',
    input: { object: aDgdr({ overrides: { dgd: { apiVersion: 'nvidia.com/v1alpha1', kind: 'DynamoGraphDeployment', spec: { services: { decode: { replicas: 2 } } } }, trustRemoteCode: true } }) },
    want: { allowed: true },
  },
];

const UPDATE_ROWS: Row[] = [
  { name: 'Pending: the spec may still change', reason: 'dgdr-reference "Lifecycle" (immutability starts with profiling)', input: { object: aStoredDgdr('Pending', { model: 'Qwen/Qwen3-32B' }), old: aStoredDgdr('Pending') }, want: { allowed: true } },
  ...['Profiling', 'Ready', 'Deploying', 'Deployed'].map((phase): Row => ({
    name: `"Other spec updates remain forbidden after profiling starts": a model change in ${phase}`,
    reason: 'dgdr-reference "Profiler image version compatibility", "Generated DGD overrides"; upstream-notes/dgdr.md §1.4 (message)',
    input: { object: aStoredDgdr(phase, { model: 'Qwen/Qwen3-32B' }), old: aStoredDgdr(phase) },
    want: { allowed: false, issues: [immutable(phase)] },
  })),
  { name: 'a metadata-only update in Profiling is admitted', reason: 'only spec changes are forbidden', input: { object: { ...aStoredDgdr('Profiling'), metadata: { name: 'my-model', namespace: 'ns', labels: { team: 'a' } } }, old: aStoredDgdr('Profiling') }, want: { allowed: true } },
  {
    name: '"While a DGDR has autoApply: false, you may set or change runtimeVersionOverride during Profiling"',
    reason: 'dgdr-reference "Profiler image version compatibility"',
    input: { object: aStoredDgdr('Profiling', { autoApply: false, runtimeVersionOverride: '1.6.1' }), old: aStoredDgdr('Profiling', { autoApply: false }) },
    want: { allowed: true },
  },
  {
    name: '"... or Ready"',
    reason: 'dgdr-reference "Profiler image version compatibility"',
    input: { object: aStoredDgdr('Ready', { autoApply: false, runtimeVersionOverride: '1.6.2' }), old: aStoredDgdr('Ready', { autoApply: false, runtimeVersionOverride: '1.6.1' }) },
    want: { allowed: true },
  },
  {
    name: '"After it reaches Ready, you may enable autoApply ... while changing the override"',
    reason: 'dgdr-reference "Profiler image version compatibility"',
    input: { object: aStoredDgdr('Ready', { autoApply: true, runtimeVersionOverride: '1.6.1' }), old: aStoredDgdr('Ready', { autoApply: false }) },
    want: { allowed: true },
  },
  {
    name: '"After it reaches Ready, you may enable autoApply": not during Profiling',
    reason: 'dgdr-reference "Profiler image version compatibility"; upstream-notes/dgdr.md §1.4 ("turning autoApply on is allowed only from Ready")',
    input: { object: aStoredDgdr('Profiling', { autoApply: true }), old: aStoredDgdr('Profiling', { autoApply: false }) },
    want: { allowed: false, issues: [immutable('Profiling')] },
  },
  {
    name: 'a runtimeVersionOverride change while autoApply is true stays forbidden',
    reason: 'dgdr-reference "While a DGDR has autoApply: false ..."',
    input: { object: aStoredDgdr('Profiling', { runtimeVersionOverride: '1.6.1' }), old: aStoredDgdr('Profiling') },
    want: { allowed: false, issues: [immutable('Profiling')] },
  },
  {
    name: '"Other spec updates remain forbidden": a model change with autoApply false in Ready',
    reason: 'dgdr-reference "Profiler image version compatibility"',
    input: { object: aStoredDgdr('Ready', { autoApply: false, model: 'Qwen/Qwen3-32B' }), old: aStoredDgdr('Ready', { autoApply: false }) },
    want: { allowed: false, issues: [immutable('Ready')] },
  },
  {
    name: 'enabling autoApply later re-checks the image: a non-semver image needs runtimeVersionOverride',
    reason: 'upstream-notes/dgdr.md §1.4 ("On update, this applies only if the image or override changed, or autoApply was activated")',
    input: { object: aStoredDgdr('Ready', { image: 'registry.example/planner:latest', autoApply: true }), old: aStoredDgdr('Ready', { image: 'registry.example/planner:latest', autoApply: false }) },
    want: { allowed: false, issues: [RUNTIME_REQUIRED] },
  },
  {
    name: 'a stored non-semver image is not re-checked on an unrelated update',
    reason: 'upstream-notes/dgdr.md §1.4',
    input: { object: { ...aStoredDgdr('Pending', { image: 'registry.example/planner:latest' }), metadata: { name: 'my-model', namespace: 'ns', labels: { team: 'a' } } }, old: aStoredDgdr('Pending', { image: 'registry.example/planner:latest' }) },
    want: { allowed: true },
  },
  {
    name: 'thorough + auto is refused on update only when newly introduced',
    reason: 'upstream-notes/dgdr.md §1.4',
    input: { object: aStoredDgdr('Failed', { searchStrategy: 'thorough', model: 'Qwen/Qwen3-32B' }), old: aStoredDgdr('Failed', { searchStrategy: 'thorough' }) },
    want: { allowed: true },
  },
];

describe('DGDR admission through the CRD schema, defaulting and validation', () => {
  it.each([...DEFAULT_ROWS, ...RULE_ROWS, ...UPDATE_ROWS])('$name', (row) => {
    const result = admitDgdrThroughChain(row.input);
    expect(result.allowed).toBe(row.want.allowed);
    expect(result.stage).toBe(row.want.stage ?? 'webhook');
    if (row.want.issues !== undefined) expect(result.issues).toEqual(row.want.issues);
    else expect(result.issues).toEqual([]);
    if (row.want.warnings !== undefined) expect(result.warnings).toEqual(row.want.warnings);
    if (row.want.spec !== undefined) expect(result.object['spec']).toEqual(row.want.spec);
  });

  it('a denial names the kind and object and lists every issue in one message', () => {
    const result = admitDgdrThroughChain({ object: aDgdr({ model: ' ', image: 'registry.example/planner:latest', workload: { concurrency: 1, requestRate: 1 } }) });
    expect(result.message).toMatchInlineSnapshot(
      `"DynamoGraphDeploymentRequest.nvidia.com "my-model" is invalid: [spec.model: Required value: must be non-empty, spec.runtimeVersionOverride: Required value: is required when spec.image has no parseable semantic-version tag, spec.workload.requestRate: Forbidden: may not be set together with spec.workload.concurrency: they are mutually exclusive]"`,
    );
  });

  it('defaulting is idempotent: the admitted object gets no further patch', () => {
    const first = admitDgdrThroughChain({ object: aDgdr({ modelCache: { pvcName: 'cache' } }) });
    const second = admitDgdrThroughChain({ object: first.object });
    expect(second.patch).toEqual([]);
  });
});
