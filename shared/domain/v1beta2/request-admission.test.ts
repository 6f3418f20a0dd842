import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUNDLED_AISIMULATE_RECOMMEND_INPUT_SCHEMA } from '../../api/index.js';
import { deepFreeze } from '../../../test/support/builders.js';
import { sharedDir } from '../../../test/support/paths.js';
import { compileAisimulateInputSchema } from './aisimulate-input.js';
import { defaultV1Beta2Request, discoverV1Beta2Hardware, needsV1Beta2HardwareDiscovery, validateConversionView, validateV1Beta2Object } from './request-admission.js';

type Obj = Record<string, unknown>;

/** GPU Feature Discovery labels of one node (upstream-notes/profiler.md §2.3). */
const node = (name: string, product: string, count: number, memoryMb: number) => ({ name, labels: { 'nvidia.com/gpu.product': product, 'nvidia.com/gpu.count': String(count), 'nvidia.com/gpu.memory': String(memoryMb) } });
const H100_NODES = [node('gpu-a', 'NVIDIA-H100-80GB-HBM3-SXM', 8, 81559), node('gpu-b', 'NVIDIA-H100-80GB-HBM3-SXM', 8, 81559), node('cpu', '', 0, 0)];

const aRequest = (spec: Obj, overrides: Obj = {}): Obj => ({ apiVersion: 'nvidia.com/v1beta2', kind: 'DynamoGraphDeploymentRequest', metadata: { name: 'r', namespace: 'ns' }, spec: { model: { name: 'Qwen/Qwen3-0.6B' }, ...spec }, ...overrides });
const trace = { format: 'Dynamo', source: { persistentVolumeClaim: { claimName: 'request-traces', subPath: 'a.jsonl.gz' } } };

describe('the bundled AISimulate input schema', () => {
  it('is the schema of the bundled AISimulate release (upstream-notes/profiler.md §3.5, ../shared/fixtures/aisimulate)', () => {
    const fixture = JSON.parse(readFileSync(resolve(sharedDir, 'fixtures', 'aisimulate', 'aisimulate-0.13.0.dev85-recommend-input.schema.json'), 'utf8')) as unknown;
    expect(BUNDLED_AISIMULATE_RECOMMEND_INPUT_SCHEMA).toEqual(fixture);
  });
});

describe('needsV1Beta2HardwareDiscovery', () => {
  const rows = [
    { name: 'hardware omitted: discover', reason: 'reference "Omit hardware to let admission discover and persist sku, budget, and numGpusPerNode"', spec: {}, want: true },
    { name: 'hardware: {}: no discovery', reason: 'reference "An exactly empty hardware: {} object opts out of all operator cluster and DCGM discovery"', spec: { hardware: {} }, want: false },
    { name: 'hardware: {gpu: {}}: partial intent, discover', reason: 'reference "Any nonempty object, including hardware: {gpu: {}}, is partial hardware intent"', spec: { hardware: { gpu: {} } }, want: true },
    { name: 'all three set: no discovery', reason: 'reference "Set all three values to bypass discovery"', spec: { hardware: { gpu: { sku: 'h100_sxm', budget: 8, numGpusPerNode: 8 } } }, want: false },
  ];
  it.each(rows)('$name', ({ spec, want }) => {
    expect(needsV1Beta2HardwareDiscovery(spec)).toBe(want);
  });
});

describe('discoverV1Beta2Hardware', () => {
  const rows = [
    { name: 'everything from the node shape, budget the shape\'s GPUs', reason: 'reference "admission discover and persist sku, budget, and numGpusPerNode"; dgdr-reference "totalGpus" (sum of the shape, cap 32)', gpu: {}, nodes: H100_NODES, want: { ok: true, gpu: { sku: 'h100_sxm', budget: 16, numGpusPerNode: 8 } } },
    { name: 'explicit values are preserved', reason: 'reference "discovers and persists each missing field while preserving every explicit value"', gpu: { budget: 4 }, nodes: H100_NODES, want: { ok: true, gpu: { sku: 'h100_sxm', budget: 4, numGpusPerNode: 8 } } },
    { name: 'the budget is capped at 32', reason: 'dgdr-reference "totalGpus": "temporarily capped at 32"', gpu: {}, nodes: [1, 2, 3, 4, 5].map((i) => node(`n${i}`, 'NVIDIA-H100-80GB-HBM3-SXM', 8, 81559)), want: { ok: true, gpu: { sku: 'h100_sxm', budget: 32, numGpusPerNode: 8 } } },
    {
      name: 'no GPU nodes: Required, naming the fields to set',
      reason: 'the reference gives no message; ours names every field and the opt-out',
      gpu: {},
      nodes: [node('cpu', '', 0, 0)],
      want: { ok: false, issue: { path: 'spec.hardware.gpu', type: 'Required', detail: 'cannot discover sku, budget and numGpusPerNode: no nodes with NVIDIA GPU Feature Discovery labels found (checked 1 nodes); set spec.hardware.gpu.{sku,budget,numGpusPerNode} explicitly, or hardware: {} to leave the hardware to spec.aisim.inputOverrides' } },
    },
    {
      name: 'an SKU no node has (an unknown SKU) cannot be mapped to capacity',
      reason: 'reference "An unknown SKU must provide both budget and numGpusPerNode, because admission cannot map that identifier to cluster capacity or topology"',
      gpu: { sku: 'future_accelerator' },
      nodes: H100_NODES,
      want: { ok: false, issue: { path: 'spec.hardware.gpu', type: 'Required', detail: 'cannot discover budget and numGpusPerNode: no GPU nodes of sku "future_accelerator" found (GPU types found: h100_sxm); set spec.hardware.gpu.budget and spec.hardware.gpu.numGpusPerNode explicitly' } },
    },
  ];
  it.each(rows)('$name', ({ gpu, nodes, want }) => {
    expect(discoverV1Beta2Hardware(gpu, nodes)).toEqual(want);
  });

  // Exporter metrics, in the text DCGM (NVIDIA/dcgm-exporter) and XPU Manager (upstream TestScrapeMetricsEndpoint "xpumd metrics") serve.
  const dcgmBody = (host: string, model: string, gpus: number, fbTotalMb: number): string =>
    Array.from({ length: gpus }, (_, gpu) => `DCGM_FI_DEV_GPU_TEMP{gpu="${gpu}",modelName="${model}",Hostname="${host}"} 40\nDCGM_FI_DEV_FB_FREE{gpu="${gpu}",Hostname="${host}"} ${fbTotalMb}\n`).join('');
  const xpumdBody = (devices: number): string =>
    ['# TYPE hw_gpu_info gauge', ...Array.from({ length: devices }, (_, id) => `hw_gpu_info{device_id="${id}",device_name="Intel(R) Graphics [0xe211]",pci_device_id="0xe211"} 1`), ...Array.from({ length: devices }, (_, id) => `hw_memory_size_bytes{device_id="${id}"} 25669140480`)].join('\n') + '\n';
  const exporterPod = (name: string, nodeName: string, podIp: string, scrape: { ok: true; body: string } | { ok: false; error: string }) => ({ namespace: 'gpu-operator', name, nodeName, phase: 'Running', podIp, scrape: { endpoint: `http://${podIp}:9400/metrics`, ...scrape } });
  const H200_EXPORTERS = [exporterPod('dcgm-0', 'dgx-0', '10.0.0.1', { ok: true, body: dcgmBody('dgx-0', 'NVIDIA H200', 8, 143771) }), exporterPod('dcgm-1', 'dgx-1', '10.0.0.2', { ok: true, body: dcgmBody('dgx-1', 'NVIDIA H200', 8, 143771) })];
  const FAILING_EXPORTER = [exporterPod('dcgm-0', 'dgx-0', '10.0.0.1', { ok: false, error: 'metrics endpoint http://10.0.0.1:9400/metrics returned status 503' })];
  const signalRows = [
    {
      name: 'DCGM exporters describe the nodes first: their H200s win over the H100 GFD labels',
      reason: 'reference "Omit hardware to let admission discover ... opts out of all operator cluster and DCGM discovery" (DCGM is a discovery source); upstream enrichHardwareFromDiscovery tries metrics before node labels (dgdr.md §3.1-3.2)',
      gpu: {},
      signals: { dcgm: { exporterPods: H200_EXPORTERS, isGpuOperatorRunning: false } },
      want: { ok: true, gpu: { sku: 'h200_sxm', budget: 16, numGpusPerNode: 8 } },
    },
    {
      name: 'an explicit sku no DCGM node has: the Intel XPU exporter is read next, b60 with its 3 devices',
      reason: 'upstream discoverFromMetricsSources (DCGM, then intel-xpumd); TestScrapeMetricsEndpoint "xpumd metrics" (3 devices); dgdr-reference "v1beta2 hardware SKU" lists b60',
      gpu: { sku: 'b60' },
      signals: { dcgm: { exporterPods: H200_EXPORTERS, isGpuOperatorRunning: false, intelXpu: { exporterPods: [{ ...exporterPod('xpumd-0', 'arc-0', '10.0.1.1', { ok: true, body: xpumdBody(3) }), namespace: 'xpu' }] } } },
      want: { ok: true, gpu: { sku: 'b60', budget: 3, numGpusPerNode: 3 } },
    },
    {
      name: 'exporters failing: the GFD labels decide',
      reason: 'upstream DiscoverGPUHardware falls back to node-label discovery when metrics discovery fails (dgdr.md §3.1)',
      gpu: {},
      signals: { dcgm: { exporterPods: FAILING_EXPORTER, isGpuOperatorRunning: false } },
      want: { ok: true, gpu: { sku: 'h100_sxm', budget: 16, numGpusPerNode: 8 } },
    },
    {
      name: 'exporters failing and no labelled node of the sku: Required, naming both failures',
      reason: 'upstream DiscoverGPUHardware "metrics discovery failed: <x>; node-label discovery failed: <y>", as v1beta1 discovery words it (../dgdr/discovery.ts)',
      gpu: { sku: 'gb300' },
      signals: { dcgm: { exporterPods: FAILING_EXPORTER, isGpuOperatorRunning: false } },
      want: {
        ok: false,
        issue: {
          path: 'spec.hardware.gpu',
          type: 'Required',
          detail: 'metrics discovery failed: dcgm discovery failed: failed to scrape any dcgm exporter pod: [pod dcgm-0 (10.0.0.1): http://10.0.0.1:9400/metrics: metrics endpoint http://10.0.0.1:9400/metrics returned status 503]; node-label discovery failed: cannot discover budget and numGpusPerNode: no GPU nodes of sku "gb300" found (GPU types found: h100_sxm); set spec.hardware.gpu.budget and spec.hardware.gpu.numGpusPerNode explicitly',
        },
      },
    },
    {
      name: 'no exporter pods at all: the node-label result stands alone',
      reason: 'upstream: without exporters metrics discovery is simply absent (../dgdr/discovery.ts discoverFromSources)',
      gpu: { sku: 'gb300' },
      signals: { dcgm: { exporterPods: [], isGpuOperatorRunning: false, intelXpu: { exporterPods: [] } } },
      want: { ok: false, issue: { path: 'spec.hardware.gpu', type: 'Required', detail: 'cannot discover budget and numGpusPerNode: no GPU nodes of sku "gb300" found (GPU types found: h100_sxm); set spec.hardware.gpu.budget and spec.hardware.gpu.numGpusPerNode explicitly' } },
    },
  ];
  it.each(signalRows)('with exporters: $name', ({ gpu, signals, want }) => {
    expect(discoverV1Beta2Hardware(deepFreeze(gpu), deepFreeze(H100_NODES), deepFreeze(signals))).toEqual(want);
  });
});

describe('defaultV1Beta2Request', () => {
  const rows = [
    { name: 'omitted hardware is discovered and persisted; a static default without a trace', reason: 'reference "v1beta2 hardware SKU"; "Replay a recorded trace"', object: aRequest({}), old: undefined, want: { ok: true, object: aRequest({ hardware: { gpu: { sku: 'h100_sxm', budget: 16, numGpusPerNode: 8 } }, workload: { static: { isl: 4000, osl: 1000 } } }) } },
    { name: 'hardware: {} stays empty (no discovery, no typed defaults)', reason: 'reference "An exactly empty hardware: {} object opts out of all operator cluster and DCGM discovery and typed hardware defaults"', object: aRequest({ hardware: {}, workload: { trace } }), old: undefined, want: { ok: true, object: aRequest({ hardware: {}, workload: { trace } }) } },
    { name: 'partial hardware: only the missing fields are filled', reason: 'reference "admission discovers and persists each missing field while preserving every explicit value"', object: aRequest({ hardware: { gpu: { numGpusPerNode: 4 } }, workload: { trace } }), old: undefined, want: { ok: true, object: aRequest({ hardware: { gpu: { sku: 'h100_sxm', budget: 16, numGpusPerNode: 4 } }, workload: { trace } }) } },
    { name: 'no static default with a trace', reason: 'reference "admission adds no static default when trace is set"', object: aRequest({ hardware: {}, workload: { trace } }), old: undefined, want: { ok: true, object: aRequest({ hardware: {}, workload: { trace } }) } },
    { name: 'static: null is the switch to a trace and is removed', reason: 'reference "To switch an existing request from static traffic to a trace, set spec.workload.static to null in the same update"', object: aRequest({ hardware: {}, workload: { trace, static: null } }), old: aRequest({ hardware: {}, workload: { static: { isl: 4000, osl: 1000 } } }), want: { ok: true, object: aRequest({ hardware: {}, workload: { trace } }) } },
    { name: 'an unchanged spec on update is not defaulted again', reason: 'reference "Conversion views": "An unchanged conversion view can be written back without changing the stored request"', object: aRequest({ workload: { trace } }), old: aRequest({ workload: { trace } }), want: { ok: true, object: aRequest({ workload: { trace } }) } },
    { name: 'a spec.v1beta1 view is never defaulted', reason: 'reference "Conversion views": read-only', object: aRequest({}, { spec: { v1beta1: { model: 'm' } } }), old: undefined, want: { ok: true, object: aRequest({}, { spec: { v1beta1: { model: 'm' } } }) } },
  ];
  it.each(rows)('$name', ({ object, old, want }) => {
    expect(defaultV1Beta2Request(deepFreeze(structuredClone(object)), old, H100_NODES)).toEqual(want);
  });

  it.each(rows)('defaulting again changes nothing (STYLE.md §16): $name', ({ object, old }) => {
    const once = defaultV1Beta2Request(object, old, H100_NODES);
    if (!once.ok) throw new Error('the row defaults');
    expect(defaultV1Beta2Request(once.object, old, H100_NODES)).toEqual(once);
  });

  it('a failed Node list denies discovery, naming the fields to set', () => {
    expect(defaultV1Beta2Request(aRequest({ workload: { trace } }), undefined, { error: 'cannot list Nodes: forbidden' })).toEqual({
      ok: false,
      issues: [{ path: 'spec.hardware.gpu', type: 'Required', detail: 'cannot discover sku, budget and numGpusPerNode: cannot list Nodes: forbidden; set them explicitly, or hardware: {}' }],
    });
  });
});

describe('validateConversionView', () => {
  const view = { model: { name: 'm' }, hardware: { gpu: { sku: 'h100_sxm', budget: 8, numGpusPerNode: 8 } } };
  const beta = (spec: Obj): Obj => ({ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeploymentRequest', metadata: { name: 'r' }, spec });
  const rows = [
    { name: 'an unchanged view writes back', reason: 'reference "An unchanged conversion view can be written back without changing the stored request"', object: beta({ v1beta2: view }), old: beta({ v1beta2: view }), want: [] },
    { name: 'a native object without a view is not this rule\'s', reason: 'reference "Conversion views"', object: beta({ model: 'm' }), old: undefined, want: [] },
    { name: 'setting the view on create is refused', reason: 'reference "do not set or edit the conversion field directly"', object: beta({ v1beta2: view }), old: undefined, want: [{ path: 'spec.v1beta2', type: 'Forbidden', detail: 'a read-only conversion view may not be set; create and modify the request through nvidia.com/v1beta2' }] },
    { name: 'editing the view is refused, naming the edited field', reason: 'reference "do not set or edit the conversion field directly"', object: beta({ v1beta2: { ...view, hardware: { gpu: { sku: 'h100_sxm', budget: 4, numGpusPerNode: 8 } } } }), old: beta({ v1beta2: view }), want: [{ path: 'spec.v1beta2.hardware.gpu.budget', type: 'Forbidden', detail: 'the read-only conversion view spec.v1beta2 may only be written back unchanged; modify the request through nvidia.com/v1beta2' }] },
    { name: 'native fields beside an unchanged view are refused', reason: 'reference "Create and modify a request through the API version that owns its native fields"', object: beta({ v1beta2: view, model: 'm' }), old: beta({ v1beta2: view }), want: [{ path: 'spec', type: 'Forbidden', detail: 'the read-only conversion view spec.v1beta2 may only be written back unchanged; modify the request through nvidia.com/v1beta2' }] },
    { name: 'replacing the view with native fields is refused', reason: 'reference "Create and modify a request through the API version that owns its native fields"', object: beta({ model: 'm' }), old: beta({ v1beta2: view }), want: [{ path: 'spec.v1beta2', type: 'Forbidden', detail: 'the request was created through nvidia.com/v1beta2: its conversion view may not be replaced by native fields; modify the request through nvidia.com/v1beta2' }] },
  ];
  it.each(rows)('$name', ({ object, old, want }) => {
    expect(validateConversionView(object, old, 'v1beta2')).toEqual(want);
  });
});

describe('validateV1Beta2Object', () => {
  const validate = compileAisimulateInputSchema(BUNDLED_AISIMULATE_RECOMMEND_INPUT_SCHEMA);
  const hardware = { gpu: { sku: 'h200_sxm', budget: 8, numGpusPerNode: 8 } };
  const run = (spec: Obj, metadata: Obj = {}): Obj => ({ apiVersion: 'nvidia.com/v1beta2', kind: 'DynamoGraphDeploymentRun', metadata: { name: 'r-1', ...metadata }, spec: { model: { name: 'Qwen/Qwen3-0.6B' }, ...spec } });
  const rows = [
    { name: 'a valid request', reason: 'reference "v1beta2 hardware SKU"', kind: 'DynamoGraphDeploymentRequest' as const, object: aRequest({ hardware, workload: { trace } }), old: undefined, want: { issues: [], warnings: [] } },
    { name: 'a wrong type is refused with its path', reason: 'STYLE.md §11 (zod issues through the same path renderer)', kind: 'DynamoGraphDeploymentRequest' as const, object: aRequest({ hardware: { gpu: { sku: 'h200_sxm', budget: 'eight', numGpusPerNode: 8 } }, workload: { trace } }), old: undefined, want: { issues: [expect.objectContaining({ path: 'spec.hardware.gpu.budget', type: 'Invalid' })], warnings: [] } },
    { name: 'trace and static together are refused; switching needs static: null', reason: 'reference "Replay a recorded trace"', kind: 'DynamoGraphDeploymentRequest' as const, object: aRequest({ hardware, workload: { trace, static: { isl: 4000, osl: 1000 } } }), old: aRequest({ hardware, workload: { static: { isl: 4000, osl: 1000 } } }), want: { issues: [{ path: 'spec.workload.static', type: 'Forbidden', detail: 'may not be set together with spec.workload.trace; set it to null to switch to a trace' }], warnings: [] } },
    { name: 'a Run spec may not change', reason: 'reference "Run specs remain immutable"; upstream Run CEL "spec is immutable"', kind: 'DynamoGraphDeploymentRun' as const, object: run({ hardware, workload: { trace } }), old: run({ hardware: { gpu: { sku: 'h200_sxm', budget: 4, numGpusPerNode: 8 } }, workload: { trace } }), want: { issues: [{ path: 'spec', type: 'Forbidden', detail: 'spec is immutable' }], warnings: [] } },
    { name: 'an unchanged Run spec stays metadata-updatable even if the bundled schema would now refuse it', reason: 'reference "unchanged specs remain metadata-updatable after a bundled schema change"', kind: 'DynamoGraphDeploymentRun' as const, object: run({ hardware: {}, workload: { static: { isl: 4000, osl: 1000 } } }, { labels: { a: 'b' } }), old: run({ hardware: {}, workload: { static: { isl: 4000, osl: 1000 } } }), want: { issues: [], warnings: [] } },
    { name: 'a static Run whose merged input the bundled schema refuses is refused on create', reason: 'reference "Request and Run admission validate the merged input against the bundled AISimulate input schema"', kind: 'DynamoGraphDeploymentRun' as const, object: run({ hardware: {}, workload: { static: { isl: 4000, osl: 1000 } } }), old: undefined, want: { issues: [{ path: 'spec.aisim.inputOverrides.engine.hardware', type: 'Required', detail: 'must be specified (AISimulate input schema)' }], warnings: [] } },
    { name: 'reference "admission does not validate it against the AISimulate schema yet": a trace Run the bundled schema would refuse is admitted; AISimulate checks it when the Job starts', reason: 'reference "Replay a recorded trace" (the more specific rule for a trace)', kind: 'DynamoGraphDeploymentRun' as const, object: run({ hardware: {}, workload: { trace } }), old: undefined, want: { issues: [], warnings: [] } },
  ];
  it.each(rows)('$name', ({ kind, object, old, want }) => {
    expect(validateV1Beta2Object(kind, object, old, validate)).toEqual(want);
  });
});
